import Foundation
import RetentionDomain

/// Due billing, applied before anything reads or changes a customer: renewals, discount ends,
/// pause auto-resume, trial ends, past due → expired, cancel-at-period-end expiry (the ledger's
/// rules), each with an audit row written as the billing system.
struct Settlement: Sendable {
    let config: ServerConfig
    let ledger: BillingLedger

    init(config: ServerConfig) {
        self.config = config
        ledger = BillingLedger(config: config)
    }

    /// Applies every due transition of a customer (of `scope`'s mode) at `now`, the mode's time,
    /// inside the caller's transaction. Returns the steps taken, by subscription.
    @discardableResult
    func settle(
        _ data: Repositories, customerId: String, now: Int64, scope: RequestScope
    ) async throws -> [(subscriptionId: String, steps: [String])] {
        guard let (customer, all) = try await data.customers.findWithSubscriptions(id: customerId), customer.livemode == scope.livemode else {
            return []
        }
        var taken: [(subscriptionId: String, steps: [String])] = []
        for var subscription in all where subscription.source == .web && subscription.providerId == nil {  // Stripe bills its own
            let before = subscription
            let discounts = try await data.ledger.discounts(subscriptionId: subscription.id)
            let group = config.product(id: subscription.productId)?.subscriptionGroupId
            let apple = all.filter {
                $0.source == .appStore && $0.entitlementStatus == .active && config.product(id: $0.productId)?.subscriptionGroupId == group
            }.max { ($0.currentPeriodEnd ?? 0) < ($1.currentPeriodEnd ?? 0) }
            let (charges, steps) = ledger.settle(
                &subscription, discounts: discounts, cardFailing: customer.cardFailing, now: now,
                appStore: apple.map { ($0.currentPeriodEnd ?? 0, $0.willRenew) }
            )
            guard subscription != before else { continue }
            taken.append((subscription.id, steps))
            subscription.updatedAt = now
            try await data.ledger.update(subscription)
            for charge in charges { try await data.ledger.insert(charge) }
            try await data.audit.append(AuditRecord(
                id: AuditID.next(), at: now, actor: "billing", customerId: customerId,
                action: "billing.settle", parameters: try ChangeTransaction.json(["steps": steps]),
                beforeState: try ChangeTransaction.json(before), afterState: try ChangeTransaction.json(subscription),
                requestId: scope.requestId
            ))
        }
        return taken
    }
}
