import Foundation
import RetentionDomain

/// The Stripe half of `changeSubscription`, for a web subscription Stripe keeps.
extension SubscriptionService {
    /// Steps 1 and 2 of a change Stripe keeps (`StripeBilling`): the preview, rolled back; then
    /// the action recorded as open and sent. Nil when there is nothing to send (not a Stripe
    /// subscription, the same answer as before, a replayed Idempotency-Key).
    func sendToStripe(
        _ stripe: StripeBilling, _ scope: RequestScope, operation: String, idempotencyKey: String?, userId: String,
        product: ServerConfig.ProductConfig, verb: String,
        change: @Sendable (_ before: SubscriptionRecord, _ after: SubscriptionRecord, _ wroteMore: Bool) -> StripeBilling.Change?,
        _ body: (_ subscription: inout SubscriptionRecord, _ data: Repositories, _ now: Int64, _ wroteMore: inout Bool) async throws -> some Sendable
    ) async throws -> (answer: StripeSubscription, key: String)? {
        if let idempotencyKey, try await changes.storedFingerprint(key: idempotencyKey, operation: operation, principal: scope.principal) != nil {
            return nil  // answered before: the change replays its answer and sends nothing
        }
        var preview = Preview(before: nil, after: nil, wroteMore: false)
        do {
            try await store.transaction(key: "customer:" + userId) { data in
                let now = clock.now(scope).unixSeconds
                try await changes.settlement.settle(data, customerId: userId, now: now, scope: scope)
                let customer = try await data.customers.inScope(userId, scope, at: now)
                var subscription = try await data.ledger.target(customer: customer, product: product, action: verb)
                guard subscription.providerId != nil else { throw Preview(before: nil, after: nil, wroteMore: false) }
                let before = subscription
                var wroteMore = false
                _ = try await body(&subscription, data, now, &wroteMore)
                throw Preview(before: before, after: subscription, wroteMore: wroteMore)
            }
        } catch let done as Preview {
            preview = done
        }
        guard let before = preview.before, let after = preview.after, let providerId = before.providerId,
            after != before || preview.wroteMore, let sending = change(before, after, preview.wroteMore)
        else { return nil }
        let client = try stripe.client(livemode: scope.livemode)
        let key = StripeBilling.idempotencyKey(scope, operation: operation, idempotencyKey: idempotencyKey, before: before, change: sending)
        try await store.transaction(key: "customer:" + userId) { data in
            try await data.stripe.startAction(StripeActionRecord(
                idempotencyKey: key, livemode: scope.livemode, customerId: userId, subscriptionId: before.id, operation: operation,
                startedAt: clock.now(scope).unixSeconds
            ))
        }
        do throws(StripeClient.Failure) {
            return (try await StripeBilling.send(sending, providerId: providerId, key: key, client: client), key)
        } catch {
            if case .refused(_, let refusal) = error {
                // Stripe changed nothing: the action is over.
                try await store.transaction(key: "customer:" + userId) { data in
                    try await data.stripe.finishAction(key: key, at: clock.now(scope).unixSeconds, outcome: "refused: \(refusal.code ?? refusal.type)")
                }
            }
            throw StripeBilling.answer(error)
        }
    }

    /// A change previewed in a transaction that is then rolled back (thrown out of it).
    struct Preview: Error {
        let before: SubscriptionRecord?, after: SubscriptionRecord?, wroteMore: Bool
    }
}
