import Foundation

extension CancelFlow {
    /// The sentences an agent reads out when a cancel flow ends, written once for the console and
    /// the headless commands. Dates are the server's calendar (UTC).
    public enum AgentCopy {
        static func date(_ date: Date) -> String { CalendarDays.display(date, in: .gmt) }

        /// "Paused until Dec 22, 2026" (or "Paused" when the server said no date).
        public static func paused(until resumes: Date?) -> String {
            resumes.map { "Paused until \(date($0))" } ?? "Paused"
        }

        /// A web cancellation: now, or at the end of the period.
        public static func cancelled(immediately: Bool, accessUntil: Date) -> String {
            immediately ? "Cancelled; access ended now" : "Cancelled; access until \(date(accessUntil))"
        }

        /// An App Store cancellation read out: waiting for Apple, or already confirmed.
        public static func appStoreCancellationReadOut(at readOut: Date, confirmed: Bool, accessUntil: Date?) -> String {
            let state = confirmed ? "confirmed by Apple" : "waiting for Apple to confirm"
            return "Cancellation read out on \(date(readOut)), \(state)" + (accessUntil.map { "; access until \(date($0))" } ?? "")
        }

        /// A switch paid: "Switched to web billing: Premium Monthly at $7.99/month, 20% off. …".
        public static func switched(_ terms: RetentionPlan.SwitchTerms) -> String {
            let price = terms.priceWithDiscount.map { " at " + Money.format($0, per: terms.interval) } ?? ""
            return "Switched to web billing: \(terms.productName)\(price), \(terms.discountPercent)% off. " + terms.bridgeLine
        }

        public static let leftWithoutDecision = "Left without a decision"

        /// A choice the server did not take, given up on.
        public static func notApplied(_ reason: String) -> String { "Not applied: \(reason)" }

        /// Apple's side, when a check found nothing new.
        public static let appleHasNotConfirmed = "Apple has not reported renewal off yet."
        public static let appleStillRenews = "Apple still renews: the customer has not turned it off yet."
    }
}
