import Foundation
import RetentionDomain
import SaveDeskAPI

/// Tier upgrades. Web to web takes effect at once at the new price, with the unused time on the
/// old price credited at the next renewal (negative proration). From the App Store, the upgrade
/// is a web checkout for the higher tier.
final class UpgradeService: Sendable {
    typealias Schemas = Components.Schemas
    let store: Store
    let changes: ChangeTransaction
    let clock: DataClock
    let config: ServerConfig
    let ledger: BillingLedger
    /// A web upgrade is a subscription change; an App Store one is a checkout.
    let subscriptions: SubscriptionService
    let checkout: CheckoutService

    init(
        store: Store, changes: ChangeTransaction, clock: DataClock, config: ServerConfig, subscriptions: SubscriptionService,
        checkout: CheckoutService
    ) {
        self.store = store
        self.changes = changes
        self.clock = clock
        self.config = config
        ledger = changes.settlement.ledger
        self.subscriptions = subscriptions
        self.checkout = checkout
    }

    /// The next tier up: the lowest level above the current one, preferring the same interval.
    static func target(for current: ServerConfig.ProductConfig, in config: ServerConfig) -> ServerConfig.ProductConfig? {
        config.products.filter { $0.tier > current.tier && $0.webPrice != nil }
            .min { ($0.tier, $0.interval == current.interval ? 0 : 1) < ($1.tier, $1.interval == current.interval ? 0 : 1) }
    }

    func target(for current: ServerConfig.ProductConfig) -> ServerConfig.ProductConfig? { Self.target(for: current, in: config) }

    /// A product as the SDK's upgrade sheet shows it, at the price the customer pays (or would).
    static func info(_ product: ServerConfig.ProductConfig, price: Price) -> Components.Schemas.ProductInfo {
        let cents = Int(Money.minorUnits(fromMicros: price.amountMicros, currencyCode: price.currencyCode))
        let label: String
        var monthly: Int?
        switch product.interval {
        case .week: label = "/week"; monthly = cents * 52 / 12
        case .year: label = "/year"; monthly = cents / 12
        default: label = "/month"
        }
        return .init(referenceId: product.id, name: product.displayName, priceCents: cents, currency: price.currencyCode,
                     billingLabel: label, monthlyEquivalentCents: monthly)
    }

    private struct Plan {
        var current: ServerConfig.ProductConfig
        var target: ServerConfig.ProductConfig
        var subscription: SubscriptionRecord
        var type: String
        var creditMicros: Int64
        var nextBilling: Int64
    }

    private func plan(_ data: Repositories, userId: String, productId: String, now: Int64, scope: RequestScope) async throws -> Result<Plan, SaveDeskError> {
        let current = try config.requireProduct(productId)
        _ = try await data.customers.lookup(userId, scope)
        let live = try await data.ledger.subscriptions(customerId: userId)
            .filter { $0.productId == productId && $0.entitlementStatus.isLive }
        guard let subscription = live.last(where: { $0.source == .web }) ?? live.last else {
            return .failure(.unprocessable("no live \(current.displayName) subscription to upgrade", code: "no_active_subscription"))
        }
        guard subscription.entitlementStatus != .paused else {
            return .failure(.unprocessable("\(current.displayName) is paused; resume it before upgrading", code: "paused"))
        }
        guard let target = target(for: current) else {
            return .failure(.unprocessable("\(current.displayName) is already the highest tier", code: "already_highest_tier"))
        }
        let targetInterval = target.interval
        if subscription.source == .appStore {
            return .success(Plan(current: current, target: target, subscription: subscription, type: "storekit_to_web",
                                 creditMicros: 0, nextBilling: BillingLedger.add(targetInterval, to: now)))
        }
        // Unused share of the current period, at the price paid for it.
        let end = subscription.currentPeriodEnd ?? now
        let start = BillingLedger.add(current.interval, -1, to: end)
        let unused = max(0, Double(end - now) / Double(max(1, end - start)))
        let credit = Int64((Double(subscription.priceMicros) * unused / 10_000).rounded()) * 10_000
        return .success(Plan(current: current, target: target, subscription: subscription, type: "web_to_web",
                             creditMicros: credit, nextBilling: BillingLedger.add(targetInterval, to: now)))
    }

    func offer(userId: String, productId: String, scope: RequestScope) async throws -> Schemas.UpgradeOffer {
        let now = clock.now(scope).unixSeconds
        return try await store.transaction(key: "customer:" + userId) { data in
            try await changes.settlement.settle(data, customerId: userId, now: now, scope: scope)
            switch try await plan(data, userId: userId, productId: productId, now: now, scope: scope) {
            case .failure(let reason):
                return Schemas.UpgradeOffer(available: false, reason: reason.code, reasonMessage: reason.message)
            case .success(let plan):
                let webPrice = plan.target.webPrice?.amountMicros ?? 0
                let storePrice = plan.target.appStorePrice?.amountMicros ?? webPrice
                let savings = storePrice > 0 ? Int((Double(storePrice - webPrice) / Double(storePrice) * 100).rounded(.down)) : 0
                let currency = plan.subscription.currency
                let paying = Price(amountMicros: plan.subscription.priceMicros, currencyCode: currency)
                let fromApple = plan.type == "storekit_to_web"
                return Schemas.UpgradeOffer(
                    available: true, currentProduct: Self.info(plan.current, price: paying),
                    targetProduct: Self.info(plan.target, price: plan.target.webPrice ?? paying), savingsPercent: max(0, savings),
                    upgradeType: fromApple ? .storekitToWeb : .webToWeb,
                    proration: .init(amountCents: -Int(Money.minorUnits(fromMicros: plan.creditMicros, currencyCode: currency)),
                                     currency: currency, nextBillingDate: Date(unixSeconds: plan.nextBilling)),
                    display: .init(
                        title: "Upgrade to \(plan.target.displayName)",
                        body: fromApple
                            ? "Move to \(plan.target.displayName) on the web and pay \(max(0, savings))% less than in the App Store."
                            : "Starts today at \(Money.format(micros: webPrice, currencyCode: currency)); the unused \(Money.format(micros: plan.creditMicros, currencyCode: currency)) comes off your next bill.",
                        ctaText: "Upgrade", dismissText: "Not now",
                        storekitMigrationBody: fromApple ? "Your App Store subscription stays until you cancel it in Settings." : nil,
                        storekitCancelInstructions: fromApple
                            ? AppStore.cancellationSteps(productName: plan.current.displayName).joined(separator: "\n") : nil
                    )
                )
            }
        }
    }

    func execute(_ request: Schemas.UpgradeRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.UpgradeResult {
        let requested = try config.requireProduct(request.targetProductId)
        let now = clock.now(scope).unixSeconds
        let planned = try await store.read { data in
            try await self.plan(data, userId: request.userId, productId: request.currentProductId, now: now, scope: scope)
        }
        let upgrade = try planned.get()
        guard upgrade.target.id == requested.id || requested.tier > upgrade.current.tier else {
            throw SaveDeskError.unprocessable("\(requested.displayName) is not an upgrade from \(upgrade.current.displayName)", code: "not_an_upgrade")
        }
        if upgrade.type == "storekit_to_web" {
            let created = try await checkout.create(.init(productId: requested.id, userId: request.userId), scope: scope, idempotencyKey: idempotencyKey)
            return .init(success: true, upgradeType: upgrade.type, checkoutUrl: created.checkoutUrl, transactionId: created.transactionId,
                         cancelInstructions: AppStore.cancellationSteps(productName: upgrade.current.displayName).joined(separator: "\n"))
        }
        return try await subscriptions.changeSubscription(
            scope, operation: "executeUpgrade", request: request, idempotencyKey: idempotencyKey, userId: request.userId,
            product: upgrade.current, action: "subscription.upgrade", verb: "upgrade",
            stripe: { [price = subscriptions.stripe?.settings.account(livemode: scope.livemode)?.prices[requested.id]] _, _, _ in
                // Stripe prorates: the unused time is credited and the difference invoiced now.
                var change = StripeBilling.Change()
                change.newPrice = price
                change.form.add("proration_behavior", "always_invoice")
                change.form.add("cancel_at_period_end", false)
                return change
            }
        ) { subscription, data, now, wroteMore in
            guard let price = requested.webPrice else { throw SaveDeskError.notFound("no web price", code: "unknown_product") }
            wroteMore = true
            let end = BillingLedger.add(requested.interval, to: now)
            // On Stripe, Stripe charges (and credits) itself; the ledger records its own.
            let ownLedger = subscription.providerId == nil
            if ownLedger {
                try await data.ledger.insert(ChargeRecord(
                    subscriptionId: subscription.id, amountMicros: price.amountMicros, currency: price.currencyCode,
                    from: now, to: end, paid: true, at: now
                ))
            }
            if ownLedger, upgrade.creditMicros > 0 {
                try await data.ledger.insert(DiscountRecord(
                    id: "di_" + UUID.random().uuidString.lowercased(), subscriptionId: subscription.id, offerKey: "upgrade_credit:\(now)",
                    percentOff: nil, amountOffMicros: upgrade.creditMicros, freeDays: nil, duration: "once", durationInMonths: nil,
                    startsAt: now, endsAt: end + 1
                ))
            }
            subscription.productId = requested.id
            subscription.priceMicros = price.amountMicros
            // Upgrading means staying: a pending cancellation is undone.
            ledger.restart(&subscription, periodEnd: end)
            return Schemas.UpgradeResult(success: true, upgradeType: upgrade.type)
        }
    }

    func respond(_ request: Schemas.UpgradeResponseRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.StatusResponse {
        _ = try config.requireProduct(request.currentProductId)
        _ = try config.requireProduct(request.targetProductId)
        return try await changes.mutate(
            scope, operation: "respondToUpgradeOffer", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "upgrade_offer.\(request.outcome.rawValue)"
        ) { data, now in
            try await changes.customer(data, id: request.userId, scope: scope, now: now)
            return .init(output: .init(status: "recorded"), before: nil, after: nil)
        }
    }
}
