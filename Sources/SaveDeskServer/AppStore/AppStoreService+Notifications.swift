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
            try await apply(verified, data, signedPayload: request.signedPayload, scope: scope)
        }
        metrics?.appStoreNotification(verified: true, outcome: answer.status)
        return answer
    }

    /// Applies a verified notification inside the caller's transaction: once per UUID, to the
    /// subscription of its original transaction in its mode, only if newer than what it applied.
    /// A subscription the server does not have yet is made for the customer the signed data names
    /// (the transaction's `appAccountToken`, or an operator's link of the original transaction)
    /// and the notification applied to it; with no such customer the notification is kept, its
    /// signed payload stored, until a customer syncs or claims the transaction.
    /// Returns "applied", "duplicate" (this notification was applied before), "unchanged" (signed
    /// in the millisecond of what was applied, and saying the same), "stale" or "unmatched" (kept).
    func apply(
        _ verified: VerifiedNotification, _ data: Repositories, at time: Int64? = nil, signedPayload: String? = nil, scope: RequestScope
    ) async throws -> Schemas.StatusResponse {
        guard scope.livemode == verified.livemode else {
            throw SaveDeskError(status: 500, code: "internal", "App Store data of one mode was applied in the other's scope")
        }
        let notification = verified.notification
        let received = time ?? clock.now(livemode: verified.livemode).unixSeconds
        if try await data.appStore.hasNotification(uuid: notification.notificationUUID) { return Schemas.StatusResponse(status: "duplicate") }
        let otid = verified.originalTransactionId
        var outcome = "unmatched"
        if let otid, var record = try await subscription(for: verified, otid: otid, data, now: received, scope: scope) {
            outcome = try await apply(verified, to: &record, data, received: received, scope: scope)
            if outcome == "applied" { try await Self.noteRedemption(verified.transaction, data, at: received) }
        }
        try await data.appStore.recordNotification(
            uuid: notification.notificationUUID, type: notification.notificationType, subtype: notification.subtype,
            originalTransactionId: otid, outcome: outcome, at: received, signedPayload: outcome == "unmatched" ? signedPayload : nil
        )
        return Schemas.StatusResponse(status: outcome)
    }

    /// The subscription a notification is for: the one of its original transaction in its mode,
    /// or one made now for the customer its signed transaction names; nil when there is none.
    private func subscription(
        for verified: VerifiedNotification, otid: String, _ data: Repositories, now: Int64, scope: RequestScope
    ) async throws -> SubscriptionRecord? {
        if let record = try await data.ledger.subscription(originalTransactionId: otid) {
            return record.livemode == verified.livemode ? record : nil
        }
        guard let transaction = verified.transaction, let owner = try await named(by: transaction, data, livemode: scope.livemode),
            let product = config.product(appStoreProductId: transaction.productId), let price = product.appStorePrice
        else { return nil }
        let applied = try await apply(
            transaction, product: product, price: price, renewal: verified.renewal, willAutoRenew: nil, userId: owner, data, now: now, scope: scope
        )
        guard case .changed(_, let after) = applied else { return nil }
        try await data.audit.append(AuditRecord(
            id: AuditID.next(), at: now, actor: "app_store", customerId: owner, action: "app_store.attached",
            parameters: try ChangeTransaction.json(["original_transaction_id": otid, "by": transaction.accountToken != nil ? "app_account_token" : "import"]),
            beforeState: nil, afterState: try ChangeTransaction.json(after), requestId: scope.requestId
        ))
        return after
    }

    /// The customer signed App Store data names beyond any device's word: the one holding its
    /// `appAccountToken`, else the one an operator linked its original transaction to.
    func named(by transaction: AppStoreTransaction, _ data: Repositories, livemode: Bool) async throws -> String? {
        if let token = transaction.accountToken, let holder = try await data.customers.find(appAccountToken: token, livemode: livemode) {
            return holder.id
        }
        return try await data.customers.linked(originalTransactionId: transaction.originalTransactionId, livemode: livemode)
    }

    /// A notification's change to `record` (ordering decides), audited; its outcome.
    private func apply(
        _ verified: VerifiedNotification, to record: inout SubscriptionRecord, _ data: Repositories, received: Int64, scope: RequestScope
    ) async throws -> String {
        let notification = verified.notification
        var candidate = record
        Self.apply(notification, transaction: verified.transaction, renewal: verified.renewal, to: &candidate, now: received)
        switch Self.ordering(notification.signedDate, record: record, candidate: candidate) {
        case .stale: return "stale"
        case .same: return "unchanged"
        case .apply:
            let before = record
            record = candidate
            record.appstoreSignedAt = notification.signedDate ?? 0
            if let renewal = verified.renewal { record.appstoreRenewalSignedAt = renewal.signedDate ?? notification.signedDate ?? 0 }
            record.updatedAt = received
            try await data.ledger.update(record)
            try await RetentionService.confirmCancellations(data, of: record, at: received)
            try await data.audit.append(AuditRecord(
                id: AuditID.next(), at: received, actor: "app_store", customerId: record.customerId,
                action: "app_store.\(notification.notificationType.lowercased())",
                parameters: try ChangeTransaction.json([
                    "notification_uuid": notification.notificationUUID, "subtype": notification.subtype ?? "",
                ]),
                beforeState: try ChangeTransaction.json(before), afterState: try ChangeTransaction.json(record),
                requestId: scope.requestId
            ))
            return "applied"
        }
    }

    /// The notifications kept for `otid` (none could be applied: no customer had it), applied now
    /// that `record` exists, oldest first, each verified again; each is marked `attached_…`.
    func attachKept(to record: SubscriptionRecord, _ data: Repositories, now: Int64, scope: RequestScope) async throws {
        guard let otid = record.originalTransactionId else { return }
        var record = record
        for kept in try await data.appStore.keptNotifications(originalTransactionId: otid) {
            guard let verified = try? await verifyNotification(kept.signedPayload, now: clock.server.now()),
                verified.livemode == scope.livemode, verified.originalTransactionId == otid
            else { continue }
            let outcome = try await apply(verified, to: &record, data, received: now, scope: scope)
            try await data.appStore.setOutcome("attached_" + outcome, uuid: kept.uuid)
        }
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
