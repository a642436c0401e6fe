import Foundation
import RetentionDomain
import SaveDeskAPI
import Synchronization

/// Web checkout (billing.md), as the SDK drives it: create (deferred: no client secret yet), the
/// config of the payment sheet, finalize, then the payment (a webhook in real life; the simulator
/// here) creates the web subscription.
///
/// Money moves only on the server's own facts. Switching from the App Store, the trial bridges the
/// remaining paid period of the server's *verified* App Store record of the original transaction
/// (with a claimed end date too, the earlier of the two; with no verified record, no trial), and
/// the switch-and-save discount applies only when the customer is eligible, never because a request
/// asked. With under 48 h left there is no trial: billing starts at the boundary. Either way nothing
/// is charged now, so the customer never pays twice.
final class CheckoutService: Sendable {
    typealias Schemas = Components.Schemas
    let store: Store
    let changes: ChangeTransaction
    let clock: DataClock
    let config: ServerConfig
    let portal: PortalService
    let switchAndSave: SwitchAndSaveService
    /// With `[billing] provider = "stripe"`: finalize starts the subscription on Stripe.
    let stripe: StripeBilling?
    private let inFlight = Mutex<Set<String>>([])

    init(
        store: Store, changes: ChangeTransaction, clock: DataClock, config: ServerConfig, portal: PortalService, switchAndSave: SwitchAndSaveService,
        stripe: StripeBilling? = nil
    ) {
        self.stripe = stripe
        self.store = store
        self.changes = changes
        self.clock = clock
        self.config = config
        self.portal = portal
        self.switchAndSave = switchAndSave
    }
    /// How long a pending checkout can be paid.
    static let lifetime = Seconds.wholeDay

    /// What a checkout asks for, from any of the SDK's checkout calls.
    struct Ask: Encodable, Sendable {
        var productId: String
        var userId: String?
        var storekitSubscriptionEnd: Date?
        var storekitOriginalTransactionId: String?
        var mode: String?
    }

    func create(_ request: Schemas.CheckoutRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.CheckoutResponse {
        try await create(Ask(
            productId: request.productId, userId: request.userId, storekitSubscriptionEnd: request.storekitSubscriptionEnd,
            storekitOriginalTransactionId: request.storekitOriginalTransactionId, mode: request.checkoutMode?.rawValue
        ), request: request, scope: scope, idempotencyKey: idempotencyKey)
    }

    func create(_ ask: Ask, request: some Encodable & Sendable, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.CheckoutResponse {
        let product = try config.requireProduct(ask.productId)
        guard let price = product.webPrice else {
            throw SaveDeskError.notFound("\(product.displayName) has no web price", code: "product_not_found")
        }
        guard let userId = ask.userId, !userId.isEmpty else {
            throw SaveDeskError.unprocessable("a checkout needs the user_id of the customer it is for", code: "missing_user_id")
        }
        let key = "\(userId)|\(ask.productId)"
        guard inFlight.withLock({ $0.insert(key).inserted }) else {
            throw SaveDeskError.conflict("a checkout for this customer and product is being created; try again shortly",
                                         code: "checkout_in_progress", retryAfter: 1)
        }
        defer { _ = inFlight.withLock { $0.remove(key) } }
        let original = Money.minorUnits(fromMicros: price.amountMicros, currencyCode: price.currencyCode)
        let base = portal.baseURL.withLock { $0 }
        return try await changes.mutate(
            scope, operation: "createCheckout", request: request, idempotencyKey: idempotencyKey, customerId: userId, action: "checkout.created"
        ) { data, now in
            let facts = try await switchAndSave.facts(data, userId: userId, now: Date(unixSeconds: now), scope: scope)
            try Self.refuseSecondWebSubscription(product, in: facts.records)
            try await changes.customer(data, id: userId, scope: scope, now: now)
            let bridge = try await bridgeEnd(data, ask: ask, userId: userId, appStore: facts.appStore, now: now, scope: scope)
            // The discount: only for a customer the server itself finds eligible, switching to the
            // product the offer is for.
            let offered = facts.decision.state == .eligible ? facts.decision.offerData?.prompt : nil
            let discount = bridge != nil && offered?.productId == product.id ? offered?.discountPercent ?? 0 : 0
            let discounted = Money.minorUnits(
                fromMicros: Money.discounted(micros: price.amountMicros, percentOff: discount, currencyCode: price.currencyCode),
                currencyCode: price.currencyCode
            )
            var record = CheckoutRecord(
                id: "txn_" + UUID.random().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20), customerId: userId,
                productId: product.id, status: "pending", amount: original, originalAmount: original, pendingAmount: 0,
                currency: price.currencyCode, discountPercent: discount, trialType: nil, trialEnd: nil,
                storekitOriginalTransactionId: facts.appStore?.originalTransactionId ?? ask.storekitOriginalTransactionId,
                storekitStatus: nil, subscriptionId: nil, createdAt: now, purchasedAt: nil,
                livemode: scope.livemode, mode: ask.mode
            )
            if let end = bridge {
                record.amount = 0
                record.pendingAmount = discounted
                record.trialEnd = end
                record.trialType = MigrationBridge.isTrial(now: Date(unixSeconds: now), end: Date(unixSeconds: end)) ? "migration" : nil
            }
            try await data.checkouts.insert(record)
            return .init(output: response(record, product: product, base: base), before: nil, after: nil)
        }
    }

    /// Until when a switch may bridge (`MigrationBridge.end`): the remaining paid period of the
    /// customer's own verified, active App Store subscription (the one named by its original
    /// transaction id, else the live one), capped by a claimed end date. Nil: no verified App
    /// Store period, no trial.
    private func bridgeEnd(
        _ data: Repositories, ask: Ask, userId: String, appStore live: SubscriptionRecord?, now: Int64, scope: RequestScope
    ) async throws -> Int64? {
        guard ask.storekitOriginalTransactionId != nil || ask.storekitSubscriptionEnd != nil else { return nil }
        var record = live
        if let otid = ask.storekitOriginalTransactionId, !otid.isEmpty {
            record = try await data.ledger.subscription(originalTransactionId: otid)
        }
        guard let record, record.customerId == userId, record.source == .appStore,
            record.livemode == scope.livemode, record.entitlementStatus == .active,
            let paidThrough = record.currentPeriodEnd, paidThrough > now
        else { return nil }
        guard let end = MigrationBridge.end(
            now: Date(unixSeconds: now), paidThrough: Date(unixSeconds: paidThrough), claimedEnd: ask.storekitSubscriptionEnd
        ) else {
            throw SaveDeskError.unprocessable("the App Store subscription has already ended; use a plain checkout", code: "storekit_period_over")
        }
        return end.unixSeconds
    }

    private func response(_ record: CheckoutRecord, product: ServerConfig.ProductConfig, base: String) -> Schemas.CheckoutResponse {
        Schemas.CheckoutResponse(
            transactionId: record.id, checkoutUrl: "\(base)/checkout/\(record.id)",
            callbackUrl: "\(base)/checkout/callback?transaction_id=\(record.id)&product_id=\(record.productId)",
            publishableKey: config.checkout.publishableKey, deferredMode: true, amount: Int(record.amount), currency: record.currency,
            originalAmount: Int(record.originalAmount), productName: product.displayName, isSubscription: true,
            subscriptionInterval: product.interval.wireValue, merchantCountry: config.checkout.merchantCountry,
            trialType: record.trialType, trialEnd: record.trialEnd.map(Int.init), pendingAmount: Int(record.pendingAmount)
        )
    }

    /// Several checkouts; each result carries its checkout or the reason it has none.
    func batch(_ request: Schemas.BatchCheckoutRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.BatchCheckoutResponse {
        var results: [Schemas.BatchCheckoutResult] = []
        for (index, item) in request.products.enumerated() {
            let ask = Ask(productId: item.productId, userId: request.userId, storekitSubscriptionEnd: item.storekitSubscriptionEnd,
                          storekitOriginalTransactionId: item.storekitOriginalTransactionId, mode: nil)
            do {
                let made = try await create(ask, request: ask, scope: scope, idempotencyKey: idempotencyKey.map { "\($0)#\(index)" })
                results.append(.init(
                    productId: item.productId, transactionId: made.transactionId, checkoutUrl: made.checkoutUrl,
                    callbackUrl: made.callbackUrl, publishableKey: made.publishableKey, deferredMode: made.deferredMode,
                    amount: made.amount, currency: made.currency, originalAmount: made.originalAmount, productName: made.productName,
                    isSubscription: made.isSubscription, subscriptionInterval: made.subscriptionInterval, trialEnd: made.trialEnd,
                    pendingAmount: made.pendingAmount
                ))
            } catch let error as SaveDeskError {
                results.append(.init(productId: item.productId, error: error.message))
            }
        }
        return .init(results: results)
    }

    /// A browser checkout (Safari flows): a session id and the page.
    func session(_ request: Schemas.CheckoutSessionRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.CheckoutSession {
        let ask = Ask(productId: request.productId, userId: request.userId, mode: "browser")
        let made = try await create(ask, request: request, scope: scope, idempotencyKey: idempotencyKey)
        if let stripe {
            // Stripe's own page takes the payment.
            let (record, customer) = try await store.read { data in
                let record = try await load(data, made.transactionId, scope: scope)
                return (record, try await data.customers.lookup(record.customerId, scope))
            }
            let url = try await stripe.startCheckoutSession(
                record, customer: customer ?? .new(id: record.customerId, livemode: scope.livemode, at: record.createdAt),
                product: try config.requireProduct(record.productId), base: portal.baseURL.withLock { $0 }, scope: scope
            )
            return .init(sessionId: "cs_" + made.transactionId, checkoutUrl: url, transactionId: made.transactionId)
        }
        return .init(sessionId: "cs_" + made.transactionId, checkoutUrl: made.checkoutUrl, transactionId: made.transactionId)
    }

    /// A checkout of `scope`'s mode (a test key never sees a live checkout, and the other way
    /// round); with no scope, of either mode (the checkout page: its URL is the credential).
    private func load(_ data: Repositories, _ id: String, scope: RequestScope?) async throws -> CheckoutRecord {
        guard let record = try await data.checkouts.find(id: id), scope.map({ $0.livemode == record.livemode }) ?? true
        else { throw SaveDeskError.notFound("no transaction \(id)", code: "unknown_transaction") }
        return record
    }

    /// Whether a pending checkout can still be paid.
    private func checkNotExpired(_ record: CheckoutRecord, now: Int64) throws(SaveDeskError) {
        if record.status == "failed" || (record.status == "pending" && now - record.createdAt > Self.lifetime) {
            throw SaveDeskError(status: 410, code: "checkout_expired", "this checkout expired; create a new one")
        }
    }

    /// The terms of a deferred checkout, for the payment sheet.
    func checkoutConfig(id: String, scope: RequestScope) async throws -> Schemas.CheckoutConfig {
        let now = clock.now(scope).unixSeconds
        let record = try await store.read { data in try await load(data, id, scope: scope) }
        try checkNotExpired(record, now: now)
        let product = try config.requireProduct(record.productId)
        return Schemas.CheckoutConfig(
            amount: Int(record.amount), currency: record.currency, productName: product.displayName, isSubscription: true,
            hasTrial: record.trialEnd != nil, trialEnd: record.trialEnd.map(Int.init), originalAmountCents: Int(record.originalAmount),
            publishableKey: config.checkout.publishableKey, merchantCountry: config.checkout.merchantCountry,
            subscriptionInterval: product.interval.wireValue
        )
    }

    /// 409 `already_subscribed` when `subscriptions` hold a live web subscription to `product`.
    static func refuseSecondWebSubscription(_ product: ServerConfig.ProductConfig, in subscriptions: [SubscriptionRecord]) throws(SaveDeskError) {
        let live = subscriptions.last { $0.productId == product.id && $0.source == .web && $0.entitlementStatus.isLive }
        guard let live, OneWebSubscription.blocks(
            product.id, in: subscriptions, product: \.productId, isWeb: { $0.source == .web }, status: \.entitlementStatus
        ) else { return }
        throw SaveDeskError.conflict(
            OneWebSubscription.reason(productName: product.displayName, isTrial: live.trialType == "migration"), code: "already_subscribed"
        )
    }

    /// The client secret of a deferred checkout: made once, the same on every repeat; 410 once the
    /// checkout expired.
    func finalize(id: String, scope: RequestScope) async throws -> Schemas.FinalizeResponse {
        let customer = try await store.read { data in try await load(data, id, scope: scope).customerId }
        if let stripe { return .init(clientSecret: try await finalizeOnStripe(stripe, id: id, customerId: customer, scope: scope)) }
        let secret: String = try await changes.mutate(
            scope, operation: "finalizeCheckout", request: ["transaction_id": id], idempotencyKey: nil, customerId: customer,
            action: "checkout.finalized"
        ) { data, now in
            let record = try await load(data, id, scope: scope)
            if let secret = record.clientSecret { return .init(output: secret, before: nil, after: nil, changed: false) }
            try checkNotExpired(record, now: now)
            let secret = "pi_\(record.id)_secret_\(PortalService.newToken().prefix(24))"
            try await data.checkouts.setClientSecret(secret, id: id)
            return .init(output: secret, before: nil, after: nil)
        }
        return .init(clientSecret: secret)
    }

    /// Finalize on Stripe (`StripeBilling.startCheckout`): the customer and the subscription made
    /// once (Stripe's Idempotency-Key is the checkout's id), the client secret kept and handed out
    /// the same on every repeat.
    private func finalizeOnStripe(_ stripe: StripeBilling, id: String, customerId: String, scope: RequestScope) async throws -> String {
        let (record, customer) = try await store.read { data in
            (try await load(data, id, scope: scope), try await data.customers.lookup(customerId, scope))
        }
        if let secret = record.clientSecret { return secret }
        try checkNotExpired(record, now: clock.now(scope).unixSeconds)
        guard record.status == "pending" else {
            throw SaveDeskError.conflict("transaction \(record.id) is already \(record.status)", code: "transaction_not_pending")
        }
        let product = try config.requireProduct(record.productId)
        let started = try await stripe.startCheckout(
            record, customer: customer ?? .new(id: customerId, livemode: scope.livemode, at: clock.now(scope).unixSeconds),
            product: product, scope: scope
        ) { stripeCustomer in
            _ = try await changes.mutate(
                scope, operation: "finalizeCheckout.customer", request: ["transaction_id": id], idempotencyKey: nil, customerId: customerId,
                action: "customer.billing_customer_linked"
            ) { data, now in
                var customer = try await changes.customer(data, id: customerId, scope: scope, now: now)
                guard customer.billingCustomerId == nil else { return .init(output: false, before: nil, after: nil, changed: false) }
                customer.billingCustomerId = stripeCustomer
                try await data.customers.update(customer)
                return .init(output: true, before: nil, after: nil)
            }
        }
        return try await changes.mutate(
            scope, operation: "finalizeCheckout", request: ["transaction_id": id], idempotencyKey: nil, customerId: customerId,
            action: "checkout.finalized"
        ) { data, now in
            let current = try await load(data, id, scope: scope)
            if let secret = current.clientSecret { return .init(output: secret, before: nil, after: nil, changed: false) }
            try await data.checkouts.setClientSecret(started.clientSecret, id: id)
            return .init(output: started.clientSecret, before: nil, after: nil)
        }
    }

    func wire(_ record: CheckoutRecord, expiresAt: Int64?) -> Schemas.CheckoutTransaction {
        Schemas.CheckoutTransaction(
            id: record.id, productId: record.productId,
            status: Schemas.CheckoutTransaction.StatusPayload(rawValue: record.status) ?? .failed, source: .webCheckout,
            purchasedAt: Date(unixSeconds: record.purchasedAt ?? record.createdAt), expiresAt: expiresAt.map(Date.init(unixSeconds:)),
            productName: config.product(id: record.productId)?.displayName, amountCents: Int(record.amount), currency: record.currency,
            storekitStatus: record.storekitStatus
        )
    }

    func transaction(id: String, scope: RequestScope) async throws -> Schemas.CheckoutTransaction {
        try await store.read { data in
            let record = try await load(data, id, scope: scope)
            let expires = try await record.subscriptionId.asyncMap { try await data.ledger.periodEnd(subscriptionId: $0) } ?? nil
            return wire(record, expiresAt: expires)
        }
    }

    /// The user's web checkouts and App Store subscriptions, newest first.
    func history(userId: String, scope: RequestScope) async throws -> Schemas.TransactionHistory {
        let livemode = scope.livemode
        return try await store.read { data in
            _ = try await data.customers.lookup(userId, scope)
            var entries: [(at: Int64, transaction: Schemas.CheckoutTransaction)] = []
            let checkouts = try await data.checkouts.checkouts(customerId: userId, livemode: livemode)
            for record in checkouts {
                let expires = try await record.subscriptionId.asyncMap { try await data.ledger.periodEnd(subscriptionId: $0) } ?? nil
                entries.append((record.purchasedAt ?? record.createdAt, wire(record, expiresAt: expires)))
            }
            for record in try await data.ledger.subscriptions(customerId: userId) where record.source == .appStore {
                let status = SwitchAndSaveService.appStoreStatus(record.entitlementStatus)
                entries.append((record.startedAt, Schemas.CheckoutTransaction(
                    id: record.originalTransactionId ?? record.id, productId: record.productId,
                    status: status == .revoked ? .refunded : .completed, source: .storeKit,
                    purchasedAt: Date(unixSeconds: record.startedAt), expiresAt: record.currentPeriodEnd.map(Date.init(unixSeconds:)),
                    productName: config.product(id: record.productId)?.displayName,
                    amountCents: Int(Money.minorUnits(fromMicros: record.priceMicros, currencyCode: record.currency)), currency: record.currency,
                    storekitStatus: status?.code
                )))
            }
            return .init(transactions: entries.sorted { ($0.at, $0.transaction.id) > ($1.at, $1.transaction.id) }.map(\.transaction))
        }
    }

    /// What the device sees of Apple's side after a switch (1 still renewing … 5 revoked).
    func updateStoreKitStatus(id: String, _ update: Schemas.StoreKitStatusUpdate, scope: RequestScope) async throws -> Schemas.StoreKitStatusUpdateResponse {
        let customer = try await store.read { data in try await load(data, id, scope: scope).customerId }
        return try await changes.mutate(
            scope, operation: "updateTransactionStoreKitStatus", request: update, idempotencyKey: nil, customerId: customer,
            action: "checkout.storekit_status"
        ) { data, _ in
            let record = try await load(data, id, scope: scope)
            guard record.storekitStatus != update.storekitStatus else {
                return .init(output: .init(id: record.id, storekitStatus: update.storekitStatus), before: nil, after: nil, changed: false)
            }
            try await data.checkouts.setStoreKitStatus(update.storekitStatus, id: id)
            return .init(output: .init(id: record.id, storekitStatus: update.storekitStatus), before: nil, after: nil)
        }
    }

    /// Completes a pending checkout as the payment webhook would: paid creates the web
    /// subscription (trialing until the App Store period ends, with the switch-and-save discount).
    func complete(_ request: Schemas.SimulateCheckoutRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.CheckoutTransaction {
        guard stripe == nil else {
            throw SaveDeskError.unprocessable(
                "Stripe keeps web billing on this server: the checkout is paid through Stripe (its test cards in test mode), and its webhook records it",
                code: "stripe_not_simulated"
            )
        }
        let customer = try await store.read { data in try await load(data, request.transactionId, scope: scope).customerId }
        return try await changes.mutate(
            scope, operation: "simulateCheckout", request: request, idempotencyKey: idempotencyKey, customerId: customer,
            action: "checkout.\(request.outcome.rawValue)"
        ) { data, now in
            var record = try await load(data, request.transactionId, scope: scope)
            guard record.status == "pending" else {
                throw SaveDeskError.conflict("transaction \(record.id) is already \(record.status)", code: "transaction_not_pending")
            }
            try checkNotExpired(record, now: now)
            guard request.outcome == .paid else {
                record.status = "failed"
                try await data.checkouts.markFailed(id: record.id)
                return .init(output: wire(record, expiresAt: nil), before: nil, after: nil)
            }
            let product = try config.requireProduct(record.productId)
            // Paid while another checkout already made the subscription: no second one, no charge
            // (the checkout stays pending, refused again on every try, until it expires).
            try Self.refuseSecondWebSubscription(product, in: try await data.ledger.subscriptions(customerId: record.customerId))
            let subscription = try await Self.subscribe(&record, product: product, data: data, now: now, chargeNow: record.trialEnd == nil)
            return .init(output: wire(record, expiresAt: subscription.currentPeriodEnd), before: nil, after: subscription)
        }
    }

    /// The web subscription a paid checkout makes (trialing until the App Store period ends for a
    /// switch, with its discount), the checkout marked completed. `chargeNow`: the ledger records
    /// the first period's charge (a plain checkout on the ledger; Stripe charges its own).
    static func subscribe(
        _ record: inout CheckoutRecord, product: ServerConfig.ProductConfig, data: Repositories, now: Int64, chargeNow: Bool,
        adjust: (inout SubscriptionRecord) -> Void = { _ in }
    ) async throws -> SubscriptionRecord {
        let interval = product.interval
        let start = record.trialEnd ?? now
        var subscription = SubscriptionRecord(
            id: "sub_web_\(record.id)", customerId: record.customerId, productId: product.id, source: .web,
            status: record.trialType == "migration" ? "trialing" : "active", willRenew: true,
            isTrial: record.trialType == "migration", trialType: record.trialType,
            startedAt: now, currentPeriodEnd: record.trialEnd ?? BillingLedger.add(interval, to: now),
            trialEndsAt: record.trialType == "migration" ? record.trialEnd : nil, cancelledAt: nil, accessUntil: nil,
            cancelReason: nil, pausedAt: nil, pauseResumesAt: nil, gracePeriodEndsAt: nil, pastDueSince: nil,
            expirationIntent: nil, originalTransactionId: nil, priceMicros: product.webPrice?.amountMicros ?? 0,
            currency: record.currency, updatedAt: now, livemode: record.livemode
        )
        adjust(&subscription)
        try await data.ledger.insert(subscription)
        if record.discountPercent > 0 {
            try await data.ledger.insert(DiscountRecord(
                id: "di_" + UUID.random().uuidString.lowercased(), subscriptionId: subscription.id, offerKey: "switch_and_save",
                percentOff: record.discountPercent, freeDays: nil, duration: "forever", durationInMonths: nil,
                startsAt: now, endsAt: nil
            ))
        }
        if chargeNow {
            // A plain checkout is paid now for its first period.
            try await data.ledger.insert(ChargeRecord(
                subscriptionId: subscription.id, amountMicros: subscription.priceMicros, currency: record.currency,
                from: start, to: subscription.currentPeriodEnd ?? start, paid: true, at: now
            ))
        }
        subscription.updatedAt = now
        record.status = "completed"
        record.purchasedAt = now
        record.subscriptionId = subscription.id
        try await data.checkouts.markCompleted(id: record.id, at: now, subscriptionId: subscription.id)
        return subscription
    }

    /// The page behind `checkout_url`: what the customer is buying and when they pay.
    func page(id: String) async throws -> PortalService.Page {
        let found = try? await store.read { data in try await load(data, id, scope: nil) }
        guard let record = found, let product = config.product(id: record.productId) else {
            return .init(status: 404, html: PortalHTML.message(title: "Checkout not found", body: "This checkout link is not valid."))
        }
        let money = { (cents: Int64) in Money.format(minorUnits: cents, currencyCode: record.currency) }
        var lines = ["\(product.displayName): \(money(record.originalAmount))/\(product.interval.wireValue)"]
        if let end = record.trialEnd {
            lines.append("Nothing to pay today. Your App Store subscription is paid until \(CalendarDays.display(Date(unixSeconds: end), in: .gmt)).")
            lines.append("Then \(money(record.pendingAmount))\(record.discountPercent > 0 ? " (\(record.discountPercent)% off)" : "") each \(product.interval.wireValue).")
        } else {
            lines.append("Due today: \(money(record.amount)).")
        }
        lines.append("Status: \(record.status).")
        return .init(status: 200, html: PortalHTML.document(
            title: "Checkout", body: "<h1>Checkout</h1>" + lines.map { "<p>\(PortalHTML.escape($0))</p>" }.joined()
        ))
    }
}
