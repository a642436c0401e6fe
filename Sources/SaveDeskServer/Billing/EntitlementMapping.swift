import Foundation
import RetentionDomain

/// Subscriptions of the ledger as the wire's entitlements, and their lifecycle display.
enum EntitlementMapping {
    static func entitlement(_ record: SubscriptionRecord, now: Date, policy: Lifecycle.Policy) -> Entitlement {
        let status = record.entitlementStatus
        let nowSeconds = now.unixSeconds
        let isActive: Bool =
            switch status {
            case .active, .trialing, .gracePeriod: true
            case .pastDue: policy.billingRetryGrantsAccess
            case .cancelled: (record.accessUntil ?? 0) > nowSeconds
            default: false
            }
        let expires = status == .cancelled || status == .expired ? record.accessUntil ?? record.currentPeriodEnd : record.currentPeriodEnd
        return Entitlement(
            id: record.id, productId: record.productId, productType: .autoRenewableSubscription,
            source: record.source == .web ? .webCheckout : .storeKit, status: status, isActive: isActive,
            expiresAt: expires.map(Date.init(unixSeconds:)), purchasedAt: Date(unixSeconds: record.startedAt),
            willRenew: record.willRenew, isTrial: record.isTrial, trialEndsAt: record.trialEndsAt.map(Date.init(unixSeconds:)),
            cancelledAt: record.cancelledAt.map(Date.init(unixSeconds:)), pausedAt: record.pausedAt.map(Date.init(unixSeconds:)),
            pauseResumesAt: record.pauseResumesAt.map(Date.init(unixSeconds:)),
            gracePeriodEndsAt: record.gracePeriodEndsAt.map(Date.init(unixSeconds:)),
            storekitOriginalTransactionId: record.originalTransactionId
        )
    }

    static func lifecycle(_ record: SubscriptionRecord, now: Date, policy: Lifecycle.Policy) -> Lifecycle.Display {
        let context = Lifecycle.Context(
            expirationIntent: record.expirationIntent.map(AppStore.ExpirationIntent.init(code:)),
            isMigrationTrial: record.trialType == "migration", policy: policy
        )
        return Lifecycle.resolve(entitlement(record, now: now, policy: policy), now: now, context: context)
    }
}
