import Foundation
import RetentionDomain
import SaveDeskClient

// The domain's names for what the screens show, so the terminal UI (which imports only this
// layer, TerminalKit and its backend) can name them.
public typealias MigrationOfferState = MigrationOffer.State
public typealias CancelFlowPage = CancelFlow.Navigator.Page
public typealias CancelFlowQuestion = CancelFlow.Question
public typealias CustomerAction = CustomerActions.Action
public typealias CustomerActionKind = CustomerActions.Kind
public typealias AppStoreEvent = Wire.AppStoreEvent

/// Dates and money as an agent reads them out, one rule for every screen.
public enum Display {
    /// "Dec 4, 2026" (UTC: the server's calendar).
    public static func date(_ date: Date?) -> String {
        date.map { CalendarDays.display($0, in: .gmt) } ?? "—"
    }

    /// "Dec 4, 2026 14:05" (UTC).
    public static func time(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return CalendarDays.display(date, in: .gmt) + String(format: " %02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }

    /// "$7.99/month".
    public static func price(_ price: Price?, interval: String? = nil) -> String {
        guard let price else { return "—" }
        return Money.format(micros: price.amountMicros, currencyCode: price.currencyCode) + (interval.map { "/\($0)" } ?? "")
    }
}
