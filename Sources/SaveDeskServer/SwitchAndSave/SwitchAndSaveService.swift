import Foundation
import RetentionDomain
import SaveDeskAPI

/// The switch-and-save decision, made by RetentionDomain's evaluator on the server's facts, and
/// dismissals recorded on the server so every agent's console sees them. The same decision feeds
/// `user-offer`, the catalog's tip (`config.offer`) and the checkout's discount.
final class SwitchAndSaveService: Sendable {
    typealias Schemas = Components.Schemas
    let store: Store
    let changes: ChangeTransaction
    let clock: DataClock
    let config: ServerConfig

    init(store: Store, changes: ChangeTransaction, clock: DataClock, config: ServerConfig) {
        self.store = store
        self.changes = changes
        self.clock = clock
        self.config = config
    }

    static let flowType = "switch_and_save"

    /// Everything one decision looked at.
    struct Facts: Sendable {
        var decision: SwitchAndSaveEligibility.Decision
        var records: [SubscriptionRecord]
        var dismissal: SwitchAndSaveEligibility.Dismissal?
        /// The live App Store and web subscriptions (the latest of each).
        var appStore: SubscriptionRecord?
        var web: SubscriptionRecord?
    }

    /// The decision for a customer, inside the caller's transaction (billing settled first).
    func facts(_ data: Repositories, userId: String, now: Date, scope: RequestScope) async throws -> Facts {
        let customer = try await data.customers.inScope(userId, scope, at: now.unixSeconds)
        try await changes.settlement.settle(data, customerId: userId, now: now.unixSeconds, scope: scope)
        let records = try await data.ledger.subscriptions(customerId: userId)
        let entitlements = records.map { EntitlementMapping.entitlement($0, now: now, policy: config.billing.lifecyclePolicy) }
        let dismissal = try await data.switchAndSave.dismissal(customerId: userId)
        let decision = SwitchAndSaveEligibility.evaluate(.init(
            userId: userId, campaign: config.campaign, catalog: config.products.map(\.product),
            entitlements: entitlements, jurisdiction: customer.country, dismissal: dismissal, now: now
        ))
        return Facts(
            decision: decision, records: records, dismissal: dismissal,
            appStore: records.last { $0.source == .appStore && $0.entitlementStatus.isLive },
            web: records.last { $0.source == .web && $0.entitlementStatus.isLive }
        )
    }

    func userOffer(userId: String, scope: RequestScope) async throws -> Schemas.UserOfferResponse {
        let now = clock.now(scope)
        return try await store.transaction(key: "customer:" + userId) { data in
            let facts = try await facts(data, userId: userId, now: now, scope: scope)
            return Schemas.UserOfferResponse(
                userId: userId, appId: config.checkout.appId, isSandbox: scope.isSandbox,
                subscription: Self.subscription(facts), offer: try offer(facts), serverTime: now,
                state: facts.decision.state.rawValue, ineligibleReasons: try facts.decision.reasons.map { try WireMapping.convert($0) },
                dismissal: facts.dismissal.map { .init(dismissedAt: $0.dismissedAt, dismissedBy: $0.dismissedBy) }
            )
        }
    }

    /// The SDK's view of what the user has now: `none`, `active_web`, `active_storekit`,
    /// `migration_trial` (both: mid-switch) or `cancelled_active` (ends at the period's end).
    static func subscription(_ facts: Facts) -> Schemas.OfferSubscription {
        switch (facts.appStore, facts.web) {
        case (nil, nil):
            return .init(_type: Schemas.OfferSubscription._TypePayload.none)
        case (_?, let web?):
            return .init(_type: .migrationTrial, productId: web.productId, expiresAt: web.currentPeriodEnd.map(Date.init(unixSeconds:)))
        case (nil, let web?):
            return .init(_type: web.willRenew ? .activeWeb : .cancelledActive, productId: web.productId,
                         expiresAt: web.currentPeriodEnd.map(Date.init(unixSeconds:)))
        case (let apple?, nil):
            return .init(_type: apple.willRenew ? .activeStorekit : .cancelledActive, productId: apple.productId,
                         expiresAt: apple.currentPeriodEnd.map(Date.init(unixSeconds:)))
        }
    }

    /// The offer block: always present (`no_action` without a campaign), every field the SDK
    /// requires filled in.
    private func offer(_ facts: Facts) throws -> Schemas.UserOffer {
        guard let campaign = config.campaign else {
            return Schemas.UserOffer(
                actionType: .noAction, isEligible: false, checkoutProductId: "", savingsPercent: 0, freeTrialDays: 0,
                minSubscriptionDays: 0, requiresAppleCancel: false
            )
        }
        let data = facts.decision.offerData
        let productName = data.flatMap { config.product(id: $0.prompt.productId)?.displayName } ?? "your subscription"
        return Schemas.UserOffer(
            actionType: .migrateStorekitToWeb, isEligible: facts.decision.state == .eligible,
            checkoutProductId: data?.prompt.productId ?? facts.appStore?.productId ?? "",
            fromProductId: facts.appStore?.productId,
            savingsPercent: data?.prompt.discountPercent ?? campaign.discountPercent, freeTrialDays: data?.freeTrialDays ?? 0,
            minSubscriptionDays: campaign.minSubscriptionDays, maxSubscriptionDays: campaign.maxSubscriptionDays,
            rolloutPercent: campaign.effectiveRolloutPercent,
            display: try data.map { try WireMapping.convert(MigrationOffer.DisplayCopy(prompt: $0.prompt, productName: productName)) },
            requiresAppleCancel: facts.appStore?.willRenew ?? false,
            appleSubscription: facts.appStore.map { record in
                Schemas.AppleSubscription(
                    isActive: true, expiresAt: record.currentPeriodEnd.map(Date.init(unixSeconds:)),
                    statusCode: Self.appStoreStatus(record.entitlementStatus)?.code ?? AppStore.SubscriptionStatus.expired.code,
                    autoRenewEnabled: record.willRenew
                )
            },
            checkoutPresentation: Schemas.UserOffer.CheckoutPresentationPayload(rawValue: config.checkout.sheetType),
            source: facts.appStore == nil ? nil : .storeKit
        )
    }

    /// The App Store status code of a ledger status.
    static func appStoreStatus(_ status: Entitlement.Status) -> AppStore.SubscriptionStatus? {
        switch status {
        case .active, .trialing: .active
        case .expired, .cancelled: .expired
        case .pastDue: .billingRetry
        case .gracePeriod: .gracePeriod
        case .revoked: .revoked
        case .paused, .unknown: nil
        }
    }

    func recordDismissal(_ request: Schemas.OfferDismissedRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.StatusResponse {
        return try await changes.mutate(
            scope, operation: "recordOfferDismissed", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "switch_and_save.dismissed"
        ) { data, now in
            try await changes.customer(data, id: request.userId, scope: scope, now: now)
            try await data.switchAndSave.recordDismissal(
                customerId: request.userId, flowType: request.flowType.rawValue, by: scope.actor, at: now,
                variantId: request.variantId.map(String.init)
            )
            return ChangeTransaction.Change(output: Schemas.StatusResponse(status: "dismissed"), before: nil, after: nil)
        }
    }

    func resetDismissal(customerId: String, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.StatusResponse {
        try await changes.mutate(
            scope, operation: "resetOfferDismissal", request: ["customer_id": customerId], idempotencyKey: idempotencyKey,
            customerId: customerId, action: "switch_and_save.dismissal_reset"
        ) { data, _ in
            _ = try await data.customers.existing(customerId, scope)
            let existed = try await data.switchAndSave.dismissal(customerId: customerId) != nil
            try await data.switchAndSave.deleteDismissal(customerId: customerId)
            return ChangeTransaction.Change(
                output: Schemas.StatusResponse(status: existed ? "reset" : "not_dismissed"), before: nil, after: nil, changed: existed
            )
        }
    }
}
