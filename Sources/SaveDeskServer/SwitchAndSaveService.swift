import Foundation
import RetentionDomain
import SQLKit
import SaveDeskAPI

/// The switch-and-save decision, made by RetentionDomain's evaluator on the server's facts, and
/// dismissals recorded on the server so every agent's console sees them.
final class SwitchAndSaveService: Sendable {
    typealias Schemas = Components.Schemas
    let subscriptions: SubscriptionService

    init(subscriptions: SubscriptionService) { self.subscriptions = subscriptions }

    var config: ServerConfig { subscriptions.config }

    static let flowType = "switch_and_save"

    func userOffer(userId: String) async throws -> Schemas.UserOfferResponse {
        let now = subscriptions.now()
        let policy = config.billing.lifecyclePolicy
        return try await subscriptions.store.transaction { db in
            let customer = try await subscriptions.customer(db, id: userId)
            try await subscriptions.settle(db, customerId: userId, now: now.unixSeconds)
            let records = try await db.subscriptions(customerId: userId)
            let entitlements = records.map { EntitlementMapping.entitlement($0, now: now, policy: policy) }
            let dismissal = try await db.dismissal(customerId: userId)
            let decision = SwitchAndSaveEligibility.evaluate(.init(
                userId: userId, campaign: config.campaign, catalog: config.products.map(\.product),
                entitlements: entitlements, jurisdiction: customer.country, dismissal: dismissal, now: now
            ))
            let appStore = records.last { $0.source == .appStore && BillingLedger.liveStatuses.contains($0.entitlementStatus) }
            let web = records.last { $0.source == .web && BillingLedger.liveStatuses.contains($0.entitlementStatus) }
            let type = appStore != nil && web != nil ? "both" : appStore != nil ? "app_store" : web != nil ? "web" : "none"
            let main = appStore ?? web
            return Schemas.UserOfferResponse(
                userId: userId, isSandbox: RequestScope.current?.isSandbox ?? false, state: decision.state.rawValue,
                subscription: .init(_type: type, productId: main?.productId, expiresAt: main?.currentPeriodEnd.map(Date.init(unixSeconds:))),
                offer: try offer(decision, appStore: appStore),
                ineligibleReasons: try decision.reasons.map { try WireMapping.convert($0) },
                dismissal: dismissal.map { .init(dismissedAt: $0.dismissedAt, dismissedBy: $0.dismissedBy) },
                serverTime: now
            )
        }
    }

    private func offer(_ decision: SwitchAndSaveEligibility.Decision, appStore: SubscriptionRecord?) throws -> Schemas.UserOffer? {
        guard let campaign = config.campaign else { return nil }
        let data = decision.offerData
        let productName = data.flatMap { config.product(id: $0.prompt.productId)?.displayName } ?? "your subscription"
        let apple = appStore.map { record in
            AppStore.SubscriptionSummary(
                isActive: true, expiresAt: record.currentPeriodEnd.map(Date.init(unixSeconds:)),
                statusCode: Self.appStoreStatus(record.entitlementStatus), autoRenewEnabled: record.willRenew
            )
        }
        return Schemas.UserOffer(
            actionType: Self.flowType, isEligible: decision.state == .eligible, checkoutProductId: data?.prompt.productId,
            savingsPercent: data?.prompt.discountPercent ?? campaign.discountPercent, freeTrialDays: data?.freeTrialDays ?? 0,
            minSubscriptionDays: campaign.minSubscriptionDays, maxSubscriptionDays: campaign.maxSubscriptionDays,
            rolloutPercent: campaign.effectiveRolloutPercent,
            display: try data.map { try WireMapping.convert(MigrationOffer.DisplayCopy(prompt: $0.prompt, productName: productName)) },
            requiresAppleCancel: appStore?.willRenew ?? false,
            appleSubscription: try apple.map { try WireMapping.convert($0) }
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

    func recordDismissal(_ request: Schemas.OfferDismissedRequest, idempotencyKey: String?) async throws -> Schemas.StatusResponse {
        guard request.flowType == Self.flowType else {
            throw SaveDeskError.badRequest("flow_type must be \(Self.flowType), got \"\(request.flowType)\"", code: "unknown_flow_type")
        }
        return try await subscriptions.mutate(
            operation: "recordOfferDismissed", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "switch_and_save.dismissed"
        ) { db, now in
            _ = try await subscriptions.customer(db, id: request.userId)
            try await db.delete(from: "switch_dismissals").where("customer_id", .equal, request.userId).run()
            try await db.insert(into: "switch_dismissals")
                .columns("customer_id", "flow_type", "dismissed_by", "dismissed_at", "variant_id")
                .values(SQLBindings.of(request.userId, request.flowType, RequestScope.current?.actor ?? "app", now, request.variantId))
                .run()
            return SubscriptionService.Change(output: Schemas.StatusResponse(status: "dismissed"), before: nil, after: nil)
        }
    }

    func resetDismissal(customerId: String, idempotencyKey: String?) async throws -> Schemas.StatusResponse {
        try await subscriptions.mutate(
            operation: "resetOfferDismissal", request: ["customer_id": customerId], idempotencyKey: idempotencyKey,
            customerId: customerId, action: "switch_and_save.dismissal_reset"
        ) { db, _ in
            _ = try await subscriptions.customer(db, id: customerId)
            let existed = try await db.dismissal(customerId: customerId) != nil
            try await db.delete(from: "switch_dismissals").where("customer_id", .equal, customerId).run()
            return SubscriptionService.Change(
                output: Schemas.StatusResponse(status: existed ? "reset" : "not_dismissed"), before: nil, after: nil, changed: existed
            )
        }
    }
}

extension SQLDatabase {
    func dismissal(customerId: String) async throws -> SwitchAndSaveEligibility.Dismissal? {
        guard let row = try await select().columns("dismissed_by", "dismissed_at").from("switch_dismissals")
            .where("customer_id", .equal, customerId).first()
        else { return nil }
        return SwitchAndSaveEligibility.Dismissal(
            dismissedAt: Date(unixSeconds: try row.decode(column: "dismissed_at", as: Int64.self)),
            dismissedBy: try row.decode(column: "dismissed_by", as: String.self)
        )
    }
}
