import Foundation
import Logging
import RetentionDomain

/// Stripe's webhook events (`POST /v1/stripe/webhook`), once their signature has been checked by
/// the API middleware (which set the scope's mode from the secret that signed them). Each event
/// is applied at most once, by its id. A subscription's events carry its state: applied when it
/// is newer than the state the record holds; older by more than five minutes (the two clocks'
/// possible skew: SaveDesk times its own changes, Stripe its events) it changes nothing; within
/// that the order is not known, so the subscription is read from Stripe instead. An invoice's
/// event, and a completed Checkout Session, read the subscription from Stripe. A subscription
/// SaveDesk does not know is linked when its metadata names the customer
/// (`savedesk_customer_id`) and its price is a product's.
final class StripeWebhookService: Sendable {
    let billing: StripeBilling
    var changes: ChangeTransaction { billing.changes }
    var store: Store { billing.store }

    init(billing: StripeBilling) { self.billing = billing }

    /// The subscription events whose object is the subscription's state.
    static let subscriptionEvents: Set<String> = [
        "customer.subscription.created", "customer.subscription.updated", "customer.subscription.deleted",
        "customer.subscription.paused", "customer.subscription.resumed", "customer.subscription.trial_will_end",
    ]
    /// How far SaveDesk's clock and Stripe's may be apart, in seconds.
    static let clockSkew: Int64 = 300
    static let invoiceEvents: Set<String> = ["invoice.paid", "invoice.payment_succeeded", "invoice.payment_failed"]

    /// Answers what became of the event: applied, duplicate, stale, refreshed, unmatched, ignored.
    func receive(_ event: StripeEvent, scope: RequestScope) async throws -> String {
        guard event.livemode == scope.livemode else {
            // Signed with one mode's secret, claiming the other: never applied across modes.
            return "ignored"
        }
        if try await store.read({ try await $0.stripe.hasEvent(id: event.id) }) { return "duplicate" }
        if Self.subscriptionEvents.contains(event.type), event.data.object.kind == "subscription" {
            let subscription = try Self.read(StripeSubscription.self, of: event)
            let outcome = try await apply(subscription, event: event, scope: scope)
            if outcome == "in_doubt" {
                try await billing.refresh(providerId: subscription.id, livemode: scope.livemode, reason: event.type)
                try await record(event, objectId: subscription.id, outcome: "refreshed", scope: scope)
                return "refreshed"
            }
            return outcome
        }
        if event.type == "checkout.session.completed", event.data.object.kind == "checkout.session" {
            // A browser checkout paid on Stripe's page: its subscription, read from Stripe, is
            // recorded as its own events would record it.
            struct Session: Decodable { var id: String; var subscription: StripeReference? }
            let session = try Self.read(Session.self, of: event)
            guard let subscriptionId = session.subscription?.id else {
                try await record(event, objectId: session.id, outcome: "ignored", scope: scope)
                return "ignored"
            }
            let subscription = try await billing.subscription(subscriptionId, livemode: scope.livemode)
            let outcome = try await apply(subscription, event: event, scope: scope)
            if outcome == "in_doubt" {
                try await billing.refresh(providerId: subscription.id, livemode: scope.livemode, reason: event.type)
                try await record(event, objectId: session.id, outcome: "refreshed", scope: scope)
                return "refreshed"
            }
            return outcome
        }
        if Self.invoiceEvents.contains(event.type), event.data.object.kind == "invoice" {
            struct Invoice: Decodable {
                struct Parent: Decodable {
                    struct Details: Decodable { var subscription: StripeReference? }
                    var subscription_details: Details?
                }
                var id: String
                var subscription: StripeReference?
                var parent: Parent?
            }
            let invoice = try Self.read(Invoice.self, of: event)
            guard let subscriptionId = invoice.parent?.subscription_details?.subscription?.id ?? invoice.subscription?.id,
                try await store.read({ try await $0.ledger.subscription(providerId: subscriptionId) }) != nil
            else {
                try await record(event, objectId: invoice.id, outcome: "unmatched", scope: scope)
                return "unmatched"
            }
            try await billing.refresh(providerId: subscriptionId, livemode: scope.livemode, reason: event.type)
            try await record(event, objectId: invoice.id, outcome: "refreshed", scope: scope)
            return "refreshed"
        }
        try await record(event, objectId: nil, outcome: "ignored", scope: scope)
        return "ignored"
    }

    /// An event's object as SaveDesk reads it; one it cannot read is refused (422: Stripe delivers
    /// it again later), never a 500.
    static func read<Object: Decodable>(_ type: Object.Type, of event: StripeEvent) throws(SaveDeskError) -> Object {
        do {
            return try JSONDecoder().decode(Object.self, from: event.data.object.json)
        } catch {
            throw SaveDeskError.unprocessable(
                "the \(event.data.object.kind) of Stripe event \(event.id) (\(event.type)) could not be read: \(error)", code: "stripe_event_unreadable"
            )
        }
    }

    private func record(_ event: StripeEvent, objectId: String?, outcome: String, scope: RequestScope) async throws {
        try await store.transaction(key: "stripe_event:" + event.id) { data in
            guard try await !data.stripe.hasEvent(id: event.id) else { return }
            try await data.stripe.recordEvent(
                id: event.id, livemode: scope.livemode, type: event.type, created: event.created, objectId: objectId,
                receivedAt: changes.clock.server.now().unixSeconds, outcome: outcome
            )
        }
    }

    /// A subscription's state, in one transaction with the event's record and the audit row.
    private func apply(_ stripe: StripeSubscription, event: StripeEvent, scope: RequestScope) async throws -> String {
        let found = try await store.read { try await $0.ledger.subscription(providerId: stripe.id) }
        let customerId = found?.customerId ?? stripe.metadata["savedesk_customer_id"]
        guard let customerId, let product = found.flatMap({ billing.config.product(id: $0.productId) }) ?? product(of: stripe, livemode: scope.livemode) else {
            try await record(event, objectId: stripe.id, outcome: "unmatched", scope: scope)
            return "unmatched"
        }
        return try await store.transaction(key: "customer:" + customerId) { data in
            if try await data.stripe.hasEvent(id: event.id) { return "duplicate" }
            func finish(_ outcome: String, data: Repositories, now: Int64) async throws -> String {
                try await data.stripe.recordEvent(
                    id: event.id, livemode: scope.livemode, type: event.type, created: event.created, objectId: stripe.id,
                    receivedAt: now, outcome: outcome
                )
                return outcome
            }
            let now = changes.clock.now(scope).unixSeconds
            var record: SubscriptionRecord
            var before: SubscriptionRecord?
            if let existing = try await data.ledger.subscription(providerId: stripe.id) {
                guard existing.livemode == scope.livemode else { return "ignored" }
                let synced = existing.providerSyncedAt ?? 0
                // Older by more than two clocks can disagree: stale. Within that (SaveDesk's own
                // changes are timed by its clock, events by Stripe's), or at the same second, the
                // order is not known: Stripe is asked for the subscription as it is now.
                if event.created < synced - Self.clockSkew { return try await finish("stale", data: data, now: now) }
                if event.created <= synced { return "in_doubt" }
                record = existing
                before = existing
            } else if let checkoutId = stripe.metadata["savedesk_checkout_id"] {
                // A SaveDesk checkout's subscription: made here once Stripe says it is paid for.
                guard var checkout = try await data.checkouts.find(id: checkoutId), checkout.livemode == scope.livemode,
                    checkout.customerId == customerId, checkout.productId == product.id
                else { return try await finish("unmatched", data: data, now: now) }
                let paid = stripe.status == "active" || (stripe.status == "trialing" && stripe.default_payment_method != nil)
                guard checkout.status == "pending", paid else { return try await finish("waiting", data: data, now: now) }
                let subscription = try await CheckoutService.subscribe(&checkout, product: product, data: data, now: now, chargeNow: false) {
                    StripeBilling.apply(stripe, to: &$0, syncedAt: event.created)
                }
                try await data.audit.append(AuditRecord(
                    id: AuditID.next(), at: now, actor: "stripe", customerId: customerId, action: "checkout.paid",
                    parameters: try ChangeTransaction.json(["event": event.id, "subscription": stripe.id, "transaction_id": checkoutId]),
                    beforeState: nil, afterState: try ChangeTransaction.json(subscription), requestId: scope.requestId
                ))
                return try await finish("applied", data: data, now: now)
            } else {
                guard ["active", "trialing", "past_due"].contains(stripe.status) else { return try await finish("unmatched", data: data, now: now) }
                let customer = try await changes.customer(data, id: customerId, scope: scope, now: now)
                if customer.billingCustomerId == nil {
                    var linked = customer
                    linked.billingCustomerId = stripe.customer
                    try await data.customers.update(linked)
                }
                record = SubscriptionRecord(
                    id: "sub_web_" + UUID.random().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20), customerId: customerId,
                    productId: product.id, source: .web, status: Entitlement.Status.active.wireValue, willRenew: true, isTrial: false,
                    trialType: nil, startedAt: stripe.created, currentPeriodEnd: nil, trialEndsAt: nil, cancelledAt: nil, accessUntil: nil,
                    cancelReason: nil, pausedAt: nil, pauseResumesAt: nil, gracePeriodEndsAt: nil, pastDueSince: nil, expirationIntent: nil,
                    originalTransactionId: nil, priceMicros: product.webPrice?.amountMicros ?? 0,
                    currency: product.webPrice?.currencyCode ?? "USD", updatedAt: now, livemode: scope.livemode
                )
                if let trial = stripe.metadata["savedesk_trial_type"], stripe.status == "trialing" { record.trialType = trial }
            }
            StripeBilling.apply(stripe, to: &record, syncedAt: event.created)
            billing.followPrice(stripe, record: &record)
            record.updatedAt = now
            if before == nil { try await data.ledger.insert(record) } else if record != before { try await data.ledger.update(record) }
            if record != before {
                try await data.audit.append(AuditRecord(
                    id: AuditID.next(), at: now, actor: "stripe", customerId: customerId, action: "stripe.\(event.type)",
                    parameters: try ChangeTransaction.json(["event": event.id, "subscription": stripe.id]),
                    beforeState: try before.map(ChangeTransaction.json), afterState: try ChangeTransaction.json(record), requestId: scope.requestId
                ))
            }
            return try await finish("applied", data: data, now: now)
        }
    }

    /// The product whose Stripe price (in this mode's account) the subscription bills.
    private func product(of stripe: StripeSubscription, livemode: Bool) -> ServerConfig.ProductConfig? {
        guard let price = stripe.priceId, let prices = billing.settings.account(livemode: livemode)?.prices,
            let productId = prices.first(where: { $0.value == price })?.key
        else { return nil }
        return billing.config.product(id: productId)
    }
}
