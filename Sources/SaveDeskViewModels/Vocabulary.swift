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
public typealias CustomerSummary = Wire.CustomerSummary
public typealias LifecycleWarning = Lifecycle.WarningLevel
public typealias CancelFlowSwitchTerms = CancelFlow.RetentionPlan.SwitchTerms

/// Dates and money as an agent reads them out, one rule for every screen.
public enum Display {
    /// "Dec 4, 2026" (UTC: the server's calendar).
    public static func date(_ date: Date?) -> String {
        date.map { CalendarDays.display($0, in: .gmt) } ?? "—"
    }

    /// A timeline line: the sentence the server recorded with the event ("Apple's cancel page
    /// showed …"), else its action.
    public static func timelineText(_ event: Wire.AuditEvent) -> String {
        if let sentence = event.parameters.value["sentence"] as? String, !sentence.isEmpty { return sentence }
        return event.action
    }

    /// "Dec 4, 2026 14:05" (UTC).
    public static func time(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return CalendarDays.display(date, in: .gmt) + String(format: " %02d:%02d", parts.hour ?? 0, parts.minute ?? 0)
    }

    /// "Premium Monthly: cancellation read out on Nov 23, 2026 by Marco (support), waiting for Apple
    /// to confirm" / "… confirmed by Apple on Nov 24, 2026".
    public static func appStoreCancellation(_ cancellation: Wire.AppStoreCancellation, productName: String) -> String {
        let readOut = "\(productName): cancellation read out on \(date(cancellation.readOutAt)) by \(cancellation.readOutBy)"
        guard let confirmed = cancellation.confirmedAt else { return readOut + ", waiting for Apple to confirm" }
        return readOut + ", confirmed by Apple on \(date(confirmed))"
            + (cancellation.accessUntil.map { "; access until \(date($0))" } ?? "")
    }

    /// The badge of who bills a subscription: "App Store" or "Web".
    public static func source(_ source: Entitlement.Source) -> String { source == .storeKit ? "App Store" : "Web" }

    /// A customer's name as the console shows it: a user the app told the server of, with no name
    /// yet, is "New customer".
    public static func customerName(_ name: String) -> String { name.isEmpty ? "New customer" : name }

    /// What the console says of a customer with no subscription at all.
    public static let noSubscriptionsYet =
        "None yet. A StoreKit purchase the app syncs, or a web checkout the customer pays, shows here."

    /// "$7.99/month".
    public static func price(_ price: Price?, interval: String? = nil) -> String {
        guard let price else { return "—" }
        return Money.format(micros: price.amountMicros, currencyCode: price.currencyCode) + (interval.map { "/\($0)" } ?? "")
    }
}
