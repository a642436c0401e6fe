import Foundation
import Logging
import RetentionDomain

/// Web subscriptions kept by Stripe (`[billing] provider = "stripe"`). SaveDesk's ledger still
/// decides whether a change is allowed and what it means; Stripe makes it, and Stripe's answer is
/// what SaveDesk records. A change runs in three steps, so money never moves on a guess and the
/// two sides agree after any failure:
/// 1. a preview of the change in a transaction that is rolled back: the ledger's rules refuse what
///    is not allowed before Stripe hears of it, and say what to send;
/// 2. the action recorded as open (`stripe_actions`), then sent with an Idempotency-Key derived
///    from SaveDesk's own action (a retry of the same action sends the same key, and Stripe
///    answers as it did the first time);
/// 3. the change made here with Stripe's answer applied over it, the action closed, in one
///    transaction with its audit row.
/// A failure between 2 and 3 leaves the action open: the reconcile job reads the subscription
/// from Stripe and applies it. Nothing about a card is stored.
final class StripeBilling: Sendable {
    let settings: StripeSettings
    let config: ServerConfig
    let changes: ChangeTransaction
    let clock: DataClock
    let logger: Logger

    init(settings: StripeSettings, config: ServerConfig, changes: ChangeTransaction, clock: DataClock, logger: Logger) {
        self.settings = settings
        self.config = config
        self.changes = changes
        self.clock = clock
        self.logger = logger
    }

    var store: Store { changes.store }

    /// The client of the Stripe account of a mode: a test request never reaches the live account.
    func client(livemode: Bool) throws(SaveDeskError) -> StripeClient {
        guard let account = settings.account(livemode: livemode) else {
            throw SaveDeskError.unprocessable(
                "this subscription is kept by Stripe, and this server has no Stripe account for \(livemode ? "live" : "test") mode",
                code: "stripe_not_configured"
            )
        }
        return StripeClient(settings: settings, account: account, livemode: livemode, logger: logger)
    }

    /// What one change sends to Stripe.
    struct Change: Sendable {
        var form = StripeClient.Form()
        /// A save offer's coupon, made once and applied with `discounts`.
        var coupon: (percent: Int, duration: CouponDuration)? = nil
        /// Cancel now (DELETE) rather than update.
        var cancelNow = false
        /// Move the subscription's item to this price (an upgrade).
        var newPrice: String? = nil
    }

    /// The key Stripe binds an action to: from the request's own Idempotency-Key when it has one,
    /// else from the subscription's state before the action and what is sent, so a retry of the
    /// same action (the state unchanged here because the first attempt did not finish) sends the
    /// same key.
    static func idempotencyKey(
        _ scope: RequestScope, operation: String, idempotencyKey: String?, before: SubscriptionRecord, change: Change
    ) -> String {
        let basis: String
        if let idempotencyKey {
            basis = [scope.principal, operation, idempotencyKey].joined(separator: "\n")
        } else {
            let coupon = change.coupon.map { "\($0.percent)|\($0.duration)" } ?? ""
            basis = [before.id, operation, String(before.updatedAt), change.form.encoded, coupon, String(change.cancelNow), change.newPrice ?? ""]
                .joined(separator: "\n")
        }
        return "savedesk_" + SHA256Digest.hex(Array(basis.utf8), prefix: 24)
    }

    /// The coupon of a save offer's terms: one per (percent, duration), made once with a
    /// deterministic id (a second create answers `resource_already_exists`, which is fine).
    static func coupon(percent: Int, duration: CouponDuration, client: StripeClient) async throws(StripeClient.Failure) -> String {
        var form = StripeClient.Form()
        let id: String
        switch duration {
        case .once:
            id = "savedesk_\(percent)pct_once"
            form.add("duration", "once")
        case .forever:
            id = "savedesk_\(percent)pct_forever"
            form.add("duration", "forever")
        case .repeating(let months):
            id = "savedesk_\(percent)pct_\(months)mo"
            form.add("duration", "repeating")
            form.add("duration_in_months", Int64(months))
        }
        do {
            let existing: StripeCoupon = try await client.get("/v1/coupons/\(id)")
            return existing.id
        } catch .refused(404, _) {
            // Not made yet.
        }
        var create = StripeClient.Form()
        create.add("id", id)
        create.add("percent_off", Int64(percent))
        create.pairs += form.pairs
        create.add("name", "SaveDesk save offer: \(percent)% off")
        create.add("metadata[savedesk]", "save_offer")
        do {
            let made: StripeCoupon = try await client.post("/v1/coupons", create, idempotencyKey: "savedesk_coupon_\(id)")
            return made.id
        } catch .refused(400, let error) where error.code == "resource_already_exists" {
            return id
        }
    }

    /// Sends a change to Stripe and answers the subscription as Stripe has it after.
    static func send(_ change: Change, providerId: String, key: String, client: StripeClient) async throws(StripeClient.Failure) -> StripeSubscription {
        var form = change.form
        if let terms = change.coupon {
            let id = try await coupon(percent: terms.percent, duration: terms.duration, client: client)
            form.add("discounts[0][coupon]", id)
        }
        let path = "/v1/subscriptions/\(providerId)"
        if let price = change.newPrice {
            // The item to move is Stripe's: read it (a read needs no key).
            let current: StripeSubscription = try await client.get(path)
            guard let item = current.items.data.first else { throw .unreachable("the subscription has no item to change") }
            form.add("items[0][id]", item.id)
            form.add("items[0][price]", price)
        }
        return change.cancelNow
            ? try await client.delete(path, form, idempotencyKey: key)
            : try await client.post(path, form, idempotencyKey: key)
    }

    /// A Stripe failure as the agent and the app see it.
    static func answer(_ failure: StripeClient.Failure) -> SaveDeskError {
        switch failure {
        case .unreachable(let why):
            return SaveDeskError(
                status: 503, code: "stripe_unreachable",
                "Stripe did not answer (\(why)); nothing was recorded here. Try again: the same action is sent with the same key, so it is never made twice",
                retryAfter: 5
            )
        case .refused(_, let error):
            return .unprocessable("Stripe refused the change (\(error.type)\(error.code.map { ", " + $0 } ?? "")): \(error.message ?? "no message")",
                                  code: "stripe_refused")
        }
    }

    // MARK: Stripe's state, recorded

    /// Applies a Stripe subscription's state to its record: Stripe is the system of record for
    /// status, renewal, pause, cancellation and the period. `syncedAt` is Stripe's time of that
    /// state (an event's `created`), kept so an older state never overwrites it.
    static func apply(_ stripe: StripeSubscription, to record: inout SubscriptionRecord, syncedAt: Int64) {
        record.providerId = stripe.id
        record.providerSyncedAt = max(record.providerSyncedAt ?? 0, syncedAt)
        let periodEnd = stripe.periodEnd ?? record.currentPeriodEnd
        record.currentPeriodEnd = periodEnd
        if let comment = stripe.cancellation_details?.comment, !comment.isEmpty { record.cancelReason = comment }
        switch stripe.status {
        case "trialing", "active":
            if stripe.status == "trialing" {
                record.status = Entitlement.Status.trialing.wireValue
                record.isTrial = true
                record.trialEndsAt = stripe.trial_end ?? record.trialEndsAt
            } else {
                record.status = Entitlement.Status.active.wireValue
                record.isTrial = false
                record.trialType = nil
            }
            record.pastDueSince = nil
            if let pause = stripe.pause_collection {
                record.status = Entitlement.Status.paused.wireValue
                record.pausedAt = record.pausedAt ?? syncedAt
                record.pauseResumesAt = pause.resumes_at
            } else {
                record.pausedAt = nil
                record.pauseResumesAt = nil
            }
            record.willRenew = !stripe.cancel_at_period_end && stripe.cancel_at == nil
            if record.willRenew {
                record.cancelledAt = nil
                record.accessUntil = nil
                record.cancelReason = nil
            } else {
                record.cancelledAt = record.cancelledAt ?? stripe.canceled_at ?? syncedAt
                record.accessUntil = stripe.cancel_at ?? periodEnd
            }
        case "past_due", "unpaid":
            record.status = Entitlement.Status.pastDue.wireValue
            record.pastDueSince = record.pastDueSince ?? syncedAt
        case "paused":
            record.status = Entitlement.Status.paused.wireValue
            record.pausedAt = record.pausedAt ?? syncedAt
        case "canceled":
            record.status = Entitlement.Status.cancelled.wireValue
            record.willRenew = false
            record.cancelledAt = record.cancelledAt ?? stripe.canceled_at ?? syncedAt
            record.accessUntil = stripe.ended_at ?? record.accessUntil ?? syncedAt
            record.pausedAt = nil
            record.pauseResumesAt = nil
            record.expirationIntent = record.expirationIntent ?? AppStore.ExpirationIntent.customerCancelled.code
        case "incomplete_expired":
            record.status = Entitlement.Status.expired.wireValue
            record.willRenew = false
        default:
            break  // "incomplete": the first payment is still due; nothing to record yet
        }
    }

    /// The product a subscription is of follows its Stripe price (an upgrade made in Stripe, or
    /// one whose answer was lost here).
    func followPrice(_ stripe: StripeSubscription, record: inout SubscriptionRecord) {
        guard let price = stripe.priceId, let prices = settings.account(livemode: record.livemode)?.prices,
            let productId = prices.first(where: { $0.value == price })?.key, productId != record.productId,
            let product = config.product(id: productId)
        else { return }
        record.productId = product.id
        record.priceMicros = product.webPrice?.amountMicros ?? record.priceMicros
    }

    // MARK: Reading Stripe again

    /// A subscription as Stripe has it now.
    func subscription(_ id: String, livemode: Bool) async throws -> StripeSubscription {
        let client = try client(livemode: livemode)
        do {
            return try await client.get("/v1/subscriptions/\(id)")
        } catch {
            throw Self.answer(error)
        }
    }

    /// A billing-portal session for a Stripe customer, back to `returnURL` (already checked
    /// against SaveDesk's rules). A session moves no money: each request may make its own.
    func portalSession(customer: String, returnURL: String?, scope: RequestScope) async throws -> StripePortalSession {
        let client = try client(livemode: scope.livemode)
        var form = StripeClient.Form()
        form.add("customer", customer)
        if let returnURL { form.add("return_url", returnURL) }
        do {
            return try await client.post("/v1/billing_portal/sessions", form, idempotencyKey: "savedesk_portal_" + scope.requestId)
        } catch {
            throw Self.answer(error)
        }
    }

    /// Reads a subscription from Stripe and records its state (the reconcile job, a webhook in
    /// doubt), audited as Stripe's. Answers whether the record changed.
    @discardableResult
    func refresh(providerId: String, livemode: Bool, reason: String, closing actionKey: String? = nil) async throws -> Bool {
        let stripe = try await subscription(providerId, livemode: livemode)
        let scope = RequestScope.job("stripe", livemode: livemode)
        return try await store.transaction { data in
            guard var record = try await data.ledger.subscription(providerId: providerId), record.livemode == livemode else { return false }
            let now = clock.now(scope).unixSeconds
            let before = record
            // What was just read is Stripe's newest state: it is applied whatever event came before.
            Self.apply(stripe, to: &record, syncedAt: max(before.providerSyncedAt ?? 0, now))
            followPrice(stripe, record: &record)
            if let actionKey { try await data.stripe.finishAction(key: actionKey, at: now, outcome: "reconciled") }
            guard record != before else { return false }
            record.updatedAt = now
            try await data.ledger.update(record)
            try await data.audit.append(AuditRecord(
                id: AuditID.next(), at: now, actor: "stripe", customerId: record.customerId, action: "stripe.\(reason)",
                parameters: try ChangeTransaction.json(["subscription": providerId]), beforeState: try ChangeTransaction.json(before),
                afterState: try ChangeTransaction.json(record), requestId: scope.requestId
            ))
            return true
        }
    }

    /// The reconcile job: every action an earlier failure left open (sent to Stripe, its outcome
    /// not recorded here) for `age` or longer, read back from Stripe and recorded. Answers how
    /// many it closed.
    @discardableResult
    func reconcile(olderThan age: Int64) async throws -> Int {
        var closed = 0
        for livemode in [false, true] where settings.account(livemode: livemode) != nil {
            let now = clock.now(RequestScope.job("stripe", livemode: livemode)).unixSeconds
            let open = try await store.read { try await $0.stripe.openActions(livemode: livemode, startedBefore: now - age + 1, limit: 100) }
            for action in open {
                let providerId = try await store.read { data -> String? in
                    guard let id = action.subscriptionId else { return nil }
                    return try await data.ledger.subscriptions(customerId: action.customerId).first { $0.id == id }?.providerId
                }
                if let providerId {
                    try await refresh(providerId: providerId, livemode: livemode, reason: "reconcile", closing: action.idempotencyKey)
                } else {
                    try await store.transaction { try await $0.stripe.finishAction(key: action.idempotencyKey, at: now, outcome: "nothing_to_reconcile") }
                }
                closed += 1
            }
        }
        return closed
    }
}

extension StripeBilling {
    /// A webhook's `Stripe-Signature` checked against each mode's endpoint secrets; answers the
    /// mode whose secret signed it.
    func verifySignature(header: String?, body: Data) throws(SaveDeskError) -> Bool {
        let now = clock.server.now().unixSeconds
        var refusal = StripeSignature.Refusal.mismatch
        for livemode in [false, true] {
            guard let account = settings.account(livemode: livemode) else { continue }
            do {
                try StripeSignature.verify(
                    header: header, body: body, secrets: account.webhookSecrets, now: now, tolerance: settings.webhookToleranceSeconds
                )
                return livemode
            } catch {
                if error != .mismatch { refusal = error }
            }
        }
        throw SaveDeskError.badRequest(refusal.message, code: "invalid_signature")
    }
}
