import Foundation

extension MigrationOffer {
    /// What can happen to a switch-and-save offer.
    public enum Event: Hashable, Sendable, CustomStringConvertible {
        /// A (background or first) evaluation of eligibility resolved to this state.
        case evaluated(State)
        /// `startCheckout()` created a checkout, or `present()` was called.
        case present
        /// `markCheckoutSucceeded()`: the web checkout was paid.
        case checkoutSucceeded
        /// Apple auto-renew is confirmed off (after `showAppleSubscriptionManagement()`).
        case appleRenewalOff
        /// Checkout creation answered 404: the product is gone.
        case productUnavailable
        /// `dismiss()`.
        case dismiss
        /// `resetDismissedState()`.
        case resetDismissal

        public var description: String {
            switch self {
            case .evaluated(let state): "evaluated(\(state.rawValue))"
            case .present: "present"
            case .checkoutSucceeded: "checkoutSucceeded"
            case .appleRenewalOff: "appleRenewalOff"
            case .productUnavailable: "productUnavailable"
            case .dismiss: "dismiss"
            case .resetDismissal: "resetDismissal"
            }
        }

        /// Every event, for table-driven checks.
        public static var allCases: [Event] {
            State.allCases.map(Event.evaluated) + [
                .present, .checkoutSucceeded, .appleRenewalOff, .productUnavailable, .dismiss, .resetDismissal,
            ]
        }
    }

    /// An event that the current state does not allow.
    public struct IllegalTransition: Error, Hashable, Sendable, CustomStringConvertible {
        public var from: State
        public var event: Event

        public var description: String { "\(event) is not possible while the offer is \(from.rawValue)" }
    }

    /// The pure transition function of the switch-and-save machine (flows.md).
    ///
    /// Rules for events the machine does not expect:
    /// - A **re-evaluation** (`evaluated`) while the state is locked (`presented`, `accepted`,
    ///   `completed`, `dismissed`) is ignored: the state is returned unchanged. This is the locking
    ///   rule, not an error: background refreshes must never disturb an active checkout.
    /// - A **user action** out of order (`checkoutSucceeded` while `eligible`, `present` while
    ///   `ineligible`, …) throws `IllegalTransition`, so the caller can surface it instead of
    ///   silently doing nothing. The state does not change.
    /// - Repeating an action that already took effect is harmless: `present` while `presented`,
    ///   `dismiss` while `dismissed` and `resetDismissal` outside `dismissed` return the state unchanged.
    public static func transition(from state: State, on event: Event) throws(IllegalTransition) -> State {
        switch (state, event) {
        case (_, .evaluated(let target)):
            if state.isLocked { return state }
            return target
        case (.eligible, .present), (.presented, .present):
            return .presented
        case (.presented, .checkoutSucceeded):
            return .accepted
        case (.accepted, .appleRenewalOff):
            return .completed
        case (.eligible, .productUnavailable), (.presented, .productUnavailable):
            return .ineligible
        case (_, .dismiss):
            return .dismissed
        case (.dismissed, .resetDismissal):
            return .loading
        case (_, .resetDismissal):
            return state
        default:
            throw IllegalTransition(from: state, event: event)
        }
    }
}
