import Foundation
import RetentionDomain

/// The subscription operations the seeds name (accept the save offer, pause, resume, cancel,
/// reactivate), cancel-flow responses, funnel events and entitlements. Every change goes through
/// the `ChangeTransaction`; the ledger's rules decide what a change does.
final class SubscriptionService: Sendable {
    let store: Store
    let changes: ChangeTransaction
    let clock: DataClock
    let config: ServerConfig
    let ledger: BillingLedger
    /// With `[billing] provider = "stripe"`: the web subscriptions Stripe keeps are changed there.
    let stripe: StripeBilling?

    typealias Change<Output: Sendable> = ChangeTransaction.Change<Output>

    init(store: Store, changes: ChangeTransaction, clock: DataClock, config: ServerConfig, stripe: StripeBilling? = nil) {
        self.store = store
        self.changes = changes
        self.clock = clock
        self.config = config
        self.stripe = stripe
        ledger = changes.settlement.ledger
    }
}
