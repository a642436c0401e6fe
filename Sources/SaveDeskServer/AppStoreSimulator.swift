import Foundation
import RetentionDomain
import SQLKit
import SaveDeskAPI

/// The demo device's App Store: events signed with the local StoreKit CA and delivered through
/// the same webhook path as Apple's, both on request and as the test clock passes due dates.
extension AppStoreService {
    /// How long Apple retries billing before the subscription expires.
    static let billingRetryDays: Int64 = 60

    func simulate(_ request: Schemas.SimulateAppStoreRequest) async throws -> Schemas.StatusResponse {
        guard RequestScope.current?.isSandbox == true else {
            throw SaveDeskError.forbidden("simulators need a test-mode key (sk_test_…)", code: "test_mode_only")
        }
        let record = try await subscriptions.store.exclusive { db in try await appStoreRecord(db, request.originalTransactionId) }
        guard let record else {
            throw SaveDeskError.notFound("no App Store subscription with original transaction id \(request.originalTransactionId)", code: "unknown_transaction")
        }
        let now = subscriptions.clock.now().unixSeconds
        let period = record.currentPeriodEnd ?? now
        let event: (type: String, subtype: String?, expires: Int64, renewal: AppStoreRenewalInfo?)
        switch request.event {
        case .renewalFailedGrace:
            let days = request.graceDays ?? 16
            guard [3, 16, 28].contains(days) else {
                throw SaveDeskError.badRequest("grace periods are 3, 16 or 28 days, got \(days)", code: "invalid_grace_days")
            }
            event = ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", period, renewal(record, autoRenew: true, graceEnds: now + Int64(days) * 86_400))
        case .renewalFailed: event = ("DID_FAIL_TO_RENEW", nil, period, renewal(record, autoRenew: true))
        case .autoRenewOff: event = ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", period, renewal(record, autoRenew: false))
        case .autoRenewOn: event = ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", period, renewal(record, autoRenew: true))
        case .refund: event = ("REFUND", nil, period, nil)
        case .renew: event = ("DID_RENEW", nil, nextPeriodEnd(record, from: max(period, now)), renewal(record, autoRenew: true))
        case .expire: event = ("EXPIRED", "VOLUNTARY", period, renewal(record, autoRenew: false))
        }
        return try await deliver(record, type: event.type, subtype: event.subtype, expires: event.expires, renewal: event.renewal, at: now)
    }

    /// What the demo device's StoreKit hands the app after a purchase (or a renewal of an existing
    /// subscription): a transaction signed with the local CA. Nothing is stored here; the device
    /// syncs it to `storekit-transactions`, through its sync queue.
    func simulatePurchase(_ request: Schemas.SimulateStoreKitPurchaseRequest) async throws -> Schemas.SimulatedStoreKitTransaction {
        guard RequestScope.current?.isSandbox == true else {
            throw SaveDeskError.forbidden("simulators need a test-mode key (sk_test_…)", code: "test_mode_only")
        }
        guard let ca = localCA, let settings = subscriptions.config.appStore else {
            throw SaveDeskError.unprocessable("simulated App Store purchases need a local StoreKit CA (app_store.local_ca = true)", code: "no_local_ca")
        }
        guard let product = subscriptions.config.product(id: request.productId), let storeId = product.storekitProductId else {
            throw SaveDeskError.notFound("no App Store product for \"\(request.productId)\"", code: "unknown_product")
        }
        let now = subscriptions.clock.now().unixSeconds
        var otid = "2000009" + String(UInt64.random(in: 100_000_000...999_999_999))
        var started = now, expires = BillingLedger.add(product.interval, to: now)
        if let requested = request.originalTransactionId {
            let record = try await subscriptions.store.exclusive { db in try await appStoreRecord(db, requested) }
            guard let record else {
                throw SaveDeskError.notFound("no App Store subscription with original transaction id \(requested)", code: "unknown_transaction")
            }
            otid = requested
            started = record.startedAt
            expires = nextPeriodEnd(record, from: max(record.currentPeriodEnd ?? now, now))
        }
        let transaction = AppStoreTransaction(
            transactionId: "sim_\(UUID().uuidString.prefix(12))", originalTransactionId: otid, bundleId: settings.bundleId,
            productId: storeId, purchaseDate: now * 1000, originalPurchaseDate: started * 1000, expiresDate: expires * 1000,
            environment: settings.environment, type: "Auto-Renewable Subscription", revocationDate: nil, signedDate: now * 1000
        )
        return .init(
            jwsRepresentation: try await ca.sign(transaction), transactionId: transaction.transactionId, originalTransactionId: otid,
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expires))
        )
    }

    /// Runs the App Store's own timeline up to `now` for every App Store subscription (test clock):
    /// grace period → billing retry → expired, cancelled → expired, renewing → renewed.
    func advanceSimulatedAppStore(now: Int64) async throws -> [(customerId: String, subscriptionId: String, steps: [String])] {
        guard localCA != nil else { return [] }
        var taken: [(String, String, [String])] = []
        let records = try await subscriptions.store.exclusive { db in
            try await db.select().column("*").from("subscriptions").where("source", .equal, "app_store").orderBy("id")
                .all(decoding: SubscriptionRecord.self, with: SQLRowDecoder(keyDecodingStrategy: .convertFromSnakeCase))
        }
        for original in records {
            var record = original
            var steps: [String] = []
            for _ in 0..<1_000 {
                let step: (type: String, subtype: String?, at: Int64, expires: Int64, renewal: AppStoreRenewalInfo?, text: String)?
                switch record.entitlementStatus {
                case .gracePeriod:
                    guard let end = record.gracePeriodEndsAt, end <= now else { step = nil; break }
                    step = ("GRACE_PERIOD_EXPIRED", nil, end, record.currentPeriodEnd ?? end, nil, "grace period ended; billing retry")
                case .pastDue:
                    let deadline = (record.pastDueSince ?? now) + Self.billingRetryDays * 86_400
                    guard deadline <= now else { step = nil; break }
                    step = ("EXPIRED", "BILLING_RETRY", deadline, record.currentPeriodEnd ?? deadline, renewal(record, autoRenew: false), "billing retry ended; expired")
                case .active:
                    guard let end = record.currentPeriodEnd, end <= now else { step = nil; break }
                    step = record.willRenew
                        ? ("DID_RENEW", nil, end, nextPeriodEnd(record, from: end), renewal(record, autoRenew: true), "renewed by Apple")
                        : ("EXPIRED", "VOLUNTARY", end, end, renewal(record, autoRenew: false), "Apple period ended; expired")
                default:
                    step = nil
                }
                guard let step else { break }
                _ = try await deliver(record, type: step.type, subtype: step.subtype, expires: step.expires, renewal: step.renewal, at: step.at)
                steps.append(step.text)
                guard let updated = try await subscriptions.store.exclusive({ db in
                    try await appStoreRecord(db, record.originalTransactionId ?? "")
                }), updated != record else { break }
                record = updated
            }
            if !steps.isEmpty { taken.append((record.customerId, record.id, steps)) }
        }
        return taken
    }

    private func appStoreRecord(_ db: any SQLDatabase, _ otid: String) async throws -> SubscriptionRecord? {
        try await db.select().column("*").from("subscriptions").where("original_transaction_id", .equal, otid)
            .first(decoding: SubscriptionRecord.self, with: SQLRowDecoder(keyDecodingStrategy: .convertFromSnakeCase))
    }

    private func nextPeriodEnd(_ record: SubscriptionRecord, from time: Int64) -> Int64 {
        BillingLedger.add(subscriptions.config.product(id: record.productId)?.interval ?? .month, to: time)
    }

    private func renewal(_ record: SubscriptionRecord, autoRenew: Bool, graceEnds: Int64? = nil) -> AppStoreRenewalInfo {
        AppStoreRenewalInfo(
            originalTransactionId: record.originalTransactionId ?? "", productId: storeProductId(record), autoRenewStatus: autoRenew ? 1 : 0,
            expirationIntent: nil, gracePeriodExpiresDate: graceEnds.map { $0 * 1000 }, isInBillingRetryPeriod: nil,
            environment: subscriptions.config.appStore?.environment ?? "Sandbox", signedDate: nil
        )
    }

    private func storeProductId(_ record: SubscriptionRecord) -> String {
        subscriptions.config.product(id: record.productId)?.storekitProductId ?? record.productId
    }

    /// Signs a notification (and its transaction and renewal info) and sends it through `receive`.
    private func deliver(
        _ record: SubscriptionRecord, type: String, subtype: String?, expires: Int64, renewal: AppStoreRenewalInfo?, at time: Int64
    ) async throws -> Schemas.StatusResponse {
        guard let ca = localCA, let settings = subscriptions.config.appStore else {
            throw SaveDeskError.unprocessable("simulated App Store events need a local StoreKit CA (app_store.local_ca = true)", code: "no_local_ca")
        }
        let transaction = AppStoreTransaction(
            transactionId: "sim_\(UUID().uuidString.prefix(12))", originalTransactionId: record.originalTransactionId ?? "",
            bundleId: settings.bundleId, productId: storeProductId(record), purchaseDate: time * 1000,
            originalPurchaseDate: record.startedAt * 1000, expiresDate: expires * 1000, environment: settings.environment,
            type: "Auto-Renewable Subscription", revocationDate: type == "REFUND" ? time * 1000 : nil, signedDate: time * 1000
        )
        var signedRenewal: String?
        if var renewal {
            renewal.signedDate = time * 1000
            signedRenewal = try await ca.sign(renewal)
        }
        let notification = AppStoreNotification(
            notificationType: type, subtype: subtype, notificationUUID: UUID().uuidString,
            data: .init(bundleId: settings.bundleId, environment: settings.environment,
                        signedTransactionInfo: try await ca.sign(transaction), signedRenewalInfo: signedRenewal, status: nil),
            signedDate: time * 1000
        )
        return try await receive(.init(signedPayload: try await ca.sign(notification)))
    }
}
