import Foundation
import RetentionDomain
import SQLKit
import SaveDeskAPI
import X509

/// App Store state per original transaction id, kept in the subscriptions table (source
/// `app_store`) and changed only by verified signed data that is newer (its `signedDate`) than
/// what was last applied for that original transaction: synced transactions and App Store Server
/// Notifications (each notificationUUID applied once). A device's word (`will_auto_renew`) never
/// outranks signed renewal info, and data signed in one environment never touches the other
/// mode's customers (Production is live, Sandbox and Xcode are test).
final class AppStoreService: Sendable {
    typealias Schemas = Components.Schemas
    let subscriptions: SubscriptionService
    let verifier: AppStoreVerifier?
    /// The local signing chain of a test or demo server (its simulators sign with it).
    let localCA: LocalStoreKitCA?

    init(subscriptions: SubscriptionService, dataDirectory: URL) throws {
        self.subscriptions = subscriptions
        guard let settings = subscriptions.config.appStore else {
            verifier = nil
            localCA = nil
            return
        }
        let ca = settings.localCA ? try LocalStoreKitCA.loadOrCreate(in: dataDirectory) : nil
        let roots = try settings.trustedRoots.map { try Certificate(pemEncoded: String(contentsOfFile: $0, encoding: .utf8)) }
            + (ca.map { [$0.root] } ?? [])
        localCA = ca
        verifier = AppStoreVerifier(roots: roots, bundleId: settings.bundleId, environment: settings.environment)
    }

    func requireVerifier() throws(SaveDeskError) -> AppStoreVerifier {
        guard let verifier else {
            throw .unprocessable("App Store sync is not configured; add an [app_store] section", code: "app_store_not_configured")
        }
        return verifier
    }

    static func date(_ milliseconds: Int64?) -> Int64? { milliseconds.map { $0 / 1000 } }

    /// Live data comes from Apple's Production environment only.
    static func isLive(environment: String) -> Bool { environment == "Production" }

    /// The App Store subscription of an original transaction id, whatever its mode.
    static func record(_ db: any SQLDatabase, originalTransactionId otid: String) async throws -> SubscriptionRecord? {
        try await db.select().column("*").from("subscriptions").where("original_transaction_id", .equal, otid)
            .first(decoding: SubscriptionRecord.self, with: SQLRowDecoder(keyDecodingStrategy: .convertFromSnakeCase))
    }

    /// Whether signed data (its `signedDate`, ms) is newer than what the record last applied.
    static func isNewer(_ signedDate: Int64?, than record: SubscriptionRecord?) -> Bool {
        guard let applied = record?.appstoreSignedAt else { return true }
        return (signedDate ?? 0) > applied
    }

    // MARK: Synced transactions

    func sync(_ request: Schemas.StoreKitTransactionRequest, idempotencyKey: String?) async throws -> Schemas.StoreKitTransactionResponse {
        let transaction = try await requireVerifier().verify(request.jwsRepresentation, as: AppStoreTransaction.self, now: subscriptions.now())
        let live = RequestScope.current?.livemode ?? false
        guard Self.isLive(environment: transaction.environment ?? "") == live else {
            throw SaveDeskError.unprocessable(
                "this transaction was signed in the \(transaction.environment ?? "") environment; \(live ? "a live key syncs only Production data" : "a test key never syncs Production data")",
                code: "jws_wrong_mode"
            )
        }
        guard let product = subscriptions.config.product(appStoreProductId: transaction.productId), let price = product.appStorePrice else {
            throw SaveDeskError.unprocessable("App Store product \(transaction.productId) is not in the catalog", code: "unknown_app_store_product")
        }
        let otid = transaction.originalTransactionId
        return try await subscriptions.mutate(
            operation: "syncStoreKitTransaction", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "app_store.transaction_synced"
        ) { db, now in
            _ = try await subscriptions.customer(db, id: request.userId)
            let existing = try await Self.record(db, originalTransactionId: otid)
            if let existing, existing.customerId != request.userId || existing.livemode != live {
                return .init(
                    output: .init(status: "conflict", owned: false, originalTransactionId: otid, conflict: true, claimAvailable: true),
                    before: nil, after: nil, changed: false
                )
            }
            let owned = Schemas.StoreKitTransactionResponse(
                status: "ok", owned: true, originalTransactionId: otid, conflict: false, claimAvailable: false
            )
            // Older signed data than what was applied (a re-sync after a refund, a late device)
            // changes nothing.
            guard Self.isNewer(transaction.signedDate, than: existing) else {
                return .init(output: owned, before: existing, after: existing, changed: false)
            }
            var record = existing ?? SubscriptionRecord(
                id: "sub_as_\(otid)", customerId: request.userId, productId: product.id, source: .appStore, status: "active",
                willRenew: request.willAutoRenew ?? true, isTrial: false, trialType: nil,
                startedAt: Self.date(transaction.originalPurchaseDate ?? transaction.purchaseDate) ?? now,
                currentPeriodEnd: nil, trialEndsAt: nil, cancelledAt: nil, accessUntil: nil, cancelReason: nil, pausedAt: nil,
                pauseResumesAt: nil, gracePeriodEndsAt: nil, pastDueSince: nil, expirationIntent: nil,
                originalTransactionId: otid, priceMicros: price.amountMicros, currency: price.currencyCode, updatedAt: now,
                livemode: live
            )
            let before = existing
            record.productId = product.id
            record.currentPeriodEnd = Self.date(transaction.expiresDate) ?? record.currentPeriodEnd
            // The device's word on auto-renewal counts only until signed renewal info arrives.
            if let willRenew = request.willAutoRenew, record.appstoreRenewalSignedAt == nil { record.willRenew = willRenew }
            if let revoked = Self.date(transaction.revocationDate) {
                record.status = Entitlement.Status.revoked.wireValue
                record.willRenew = false
                record.accessUntil = revoked
            } else if let end = record.currentPeriodEnd, end <= now {
                record.status = Entitlement.Status.expired.wireValue
            } else if record.entitlementStatus != .gracePeriod && record.entitlementStatus != .pastDue {
                record.status = Entitlement.Status.active.wireValue
            }
            record.appstoreSignedAt = transaction.signedDate ?? 0
            record.updatedAt = now
            if existing == nil { try await db.insert(record, into: "subscriptions") } else { try await db.update(record) }
            return .init(output: owned, before: before, after: record)
        }
    }

    func status(originalTransactionId: String) async throws -> Schemas.StoreKitSubscriptionStatus {
        let now = subscriptions.now()
        let live = RequestScope.current?.livemode ?? false
        return try await subscriptions.store.exclusive { db in
            guard let record = try await Self.record(db, originalTransactionId: originalTransactionId), record.livemode == live else {
                throw SaveDeskError.notFound("no App Store subscription with original transaction id \(originalTransactionId)", code: "unknown_transaction")
            }
            let entitlement = EntitlementMapping.entitlement(record, now: now, policy: subscriptions.config.billing.lifecyclePolicy)
            return Schemas.StoreKitSubscriptionStatus(
                status: SwitchAndSaveService.appStoreStatus(record.entitlementStatus)?.code ?? 2,
                autoRenewStatus: record.willRenew ? 1 : 0, expiresAt: entitlement.expiresAt, isActive: entitlement.isActive
            )
        }
    }
}
