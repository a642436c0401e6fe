import Foundation
import RetentionDomain
import SaveDeskAPI

/// App Store Server Notifications V2: verified, applied once per notificationUUID and only when
/// newer than what the subscription last applied (a late `DID_RENEW` never undoes `EXPIRED` or
/// `REFUND`), audited as actor `app_store`.
extension AppStoreService {
    /// A notification whose signatures (its own, its transaction's and its renewal info's) were
    /// checked.
    struct VerifiedNotification: Sendable {
        var notification: AppStoreNotification
        var transaction: AppStoreTransaction?
        var renewal: AppStoreRenewalInfo?
        var originalTransactionId: String? { transaction?.originalTransactionId ?? renewal?.originalTransactionId }
        /// Production data is live; Sandbox and Xcode data is test data.
        var livemode: Bool { AppStoreService.isLive(environment: notification.data.environment ?? "") }
    }

    func verifyNotification(_ signedPayload: String, now: Date) async throws -> VerifiedNotification {
        let verifier = try requireVerifier()
        let notification = try await verifier.verify(signedPayload, as: AppStoreNotification.self, now: now)
        let transaction = try await notification.data.signedTransactionInfo.asyncMap {
            try await verifier.verify($0, as: AppStoreTransaction.self, now: now)
        }
        let renewal = try await notification.data.signedRenewalInfo.asyncMap {
            try await verifier.verify($0, as: AppStoreRenewalInfo.self, now: now)
        }
        return VerifiedNotification(notification: notification, transaction: transaction, renewal: renewal)
    }

    /// A notification from Apple (the request's scope admits no key: the signed payload is the
    /// proof). It acts in the mode its signed environment says, as `app_store`.
    func receive(_ request: Schemas.AppStoreNotificationRequest, scope request_: RequestScope) async throws -> Schemas.StatusResponse {
        let verified: VerifiedNotification
        do {
            verified = try await verifyNotification(request.signedPayload, now: clock.server.now())
        } catch {
            metrics?.appStoreNotification(verified: false, outcome: APIMiddleware.describe(error).code)
            throw error
        }
        let scope = RequestScope(actor: "app_store", principal: "app_store", requestId: request_.requestId, livemode: verified.livemode)
        RequestTrace.note { $0.livemode = verified.livemode }
        let answer = try await store.transaction(key: "notification:" + verified.notification.notificationUUID) { data in
            try await apply(verified, data, scope: scope)
        }
        metrics?.appStoreNotification(verified: true, outcome: answer.status)
        return answer
    }

    /// Applies a verified notification inside the caller's transaction: once per UUID, to the
    /// subscription of its original transaction in its mode, only if newer than what it applied.
    /// Returns "applied", "duplicate" (this notification was applied before), "unchanged" (signed in
    /// the millisecond of what was applied, and saying the same), "stale" or "unmatched".
    func apply(
        _ verified: VerifiedNotification, _ data: Repositories, at time: Int64? = nil, scope: RequestScope
    ) async throws -> Schemas.StatusResponse {
        guard scope.livemode == verified.livemode else {
            throw SaveDeskError(status: 500, code: "internal", "App Store data of one mode was applied in the other's scope")
        }
        let notification = verified.notification
        let received = time ?? clock.now(livemode: verified.livemode).unixSeconds
        if try await data.appStore.hasNotification(uuid: notification.notificationUUID) { return Schemas.StatusResponse(status: "duplicate") }
        let otid = verified.originalTransactionId
        var outcome = "unmatched"
        if let otid, var record = try await data.ledger.subscription(originalTransactionId: otid), record.livemode == verified.livemode {
            var candidate = record
            Self.apply(notification, transaction: verified.transaction, renewal: verified.renewal, to: &candidate, now: received)
            switch Self.ordering(notification.signedDate, record: record, candidate: candidate) {
            case .stale: outcome = "stale"
            case .same: outcome = "unchanged"
            case .apply:
                let before = record
                record = candidate
                record.appstoreSignedAt = notification.signedDate ?? 0
                if let renewal = verified.renewal { record.appstoreRenewalSignedAt = renewal.signedDate ?? notification.signedDate ?? 0 }
                record.updatedAt = received
                try await data.ledger.update(record)
                try await RetentionService.confirmCancellations(data, of: record, at: received)
                outcome = "applied"
                try await data.audit.append(AuditRecord(
                    id: AuditID.next(), at: received, actor: "app_store", customerId: record.customerId,
                    action: "app_store.\(notification.notificationType.lowercased())",
                    parameters: try ChangeTransaction.json([
                        "notification_uuid": notification.notificationUUID, "subtype": notification.subtype ?? "",
                    ]),
                    beforeState: try ChangeTransaction.json(before), afterState: try ChangeTransaction.json(record),
                    requestId: scope.requestId
                ))
            }
        }
        try await data.appStore.recordNotification(
            uuid: notification.notificationUUID, type: notification.notificationType, subtype: notification.subtype,
            originalTransactionId: otid, outcome: outcome, at: received
        )
        return Schemas.StatusResponse(status: outcome)
    }

    /// The state change a notification type means (wire-protocol.md, App Store facts).
    static func apply(
        _ notification: AppStoreNotification, transaction: AppStoreTransaction?, renewal: AppStoreRenewalInfo?,
        to record: inout SubscriptionRecord, now: Int64
    ) {
        // The event's time: when Apple signed it (so a long test-clock jump keeps windows right).
        let now = date(notification.signedDate) ?? now
        if let expires = date(transaction?.expiresDate) { record.currentPeriodEnd = expires }
        if let renewal { record.willRenew = renewal.autoRenewStatus == 1 }
        func set(_ status: Entitlement.Status) { record.status = status.wireValue }
        switch notification.notificationType {
        case "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "RENEWAL_EXTENDED":
            set(.active)
            record.gracePeriodEndsAt = nil
            record.pastDueSince = nil
            record.expirationIntent = nil
            record.accessUntil = nil
        case "DID_FAIL_TO_RENEW":
            if notification.subtype == "GRACE_PERIOD" {
                set(.gracePeriod)
                record.gracePeriodEndsAt = date(renewal?.gracePeriodExpiresDate) ?? record.gracePeriodEndsAt
            } else {
                set(.pastDue)
                record.pastDueSince = record.pastDueSince ?? now
            }
        case "GRACE_PERIOD_EXPIRED":
            set(.pastDue)
            record.pastDueSince = record.pastDueSince ?? now
        case "EXPIRED":
            set(.expired)
            record.willRenew = false
            record.accessUntil = record.currentPeriodEnd ?? now
            let intents: [String: AppStore.ExpirationIntent] = [
                "VOLUNTARY": .customerCancelled, "BILLING_RETRY": .billingError, "PRICE_INCREASE": .priceIncreaseDeclined,
                "PRODUCT_NOT_FOR_SALE": .productUnavailable,
            ]
            record.expirationIntent = (notification.subtype.flatMap { intents[$0] } ?? renewal?.expirationIntent.map(AppStore.ExpirationIntent.init(code:)) ?? .other).code
        case "DID_CHANGE_RENEWAL_STATUS":
            if notification.subtype == "AUTO_RENEW_DISABLED" { record.willRenew = false }
            if notification.subtype == "AUTO_RENEW_ENABLED" { record.willRenew = true }
        case "REFUND", "REVOKE":
            set(.revoked)
            record.willRenew = false
            record.accessUntil = now
        default:
            break  // recorded; no state change (DID_CHANGE_RENEWAL_PREF, TEST, …)
        }
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
