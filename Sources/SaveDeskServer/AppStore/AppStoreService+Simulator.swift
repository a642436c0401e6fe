import Foundation
import RetentionDomain
import SaveDeskAPI

/// The demo device's App Store: events signed with the local StoreKit CA and delivered through
/// the same verification and the same `apply` as Apple's notifications, both on request and as the
/// test clock passes due dates. Test data only (the audience of these operations is test-mode
/// operators, and the local CA signs in the Sandbox environment).
extension AppStoreService {
    /// How long Apple retries billing before the subscription expires.
    static let billingRetryDays: Int64 = 60

    func simulate(_ request: Schemas.SimulateAppStoreRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.StatusResponse {
        let now = clock.now(scope).unixSeconds
        return try await changes.idempotent(
            scope, operation: "simulateAppStoreEvent", request: request, idempotencyKey: idempotencyKey
        ) { data in
            guard let record = try await testRecord(data, request.originalTransactionId) else {
                throw SaveDeskError.notFound("no App Store subscription with original transaction id \(request.originalTransactionId)", code: "unknown_transaction")
            }
            let period = record.currentPeriodEnd ?? now
            let event: (type: String, subtype: String?, expires: Int64, renewal: AppStoreRenewalInfo?)
            switch request.event {
            case .renewalFailedGrace:
                let days = request.graceDays ?? 16
                guard [3, 16, 28].contains(days) else {
                    throw SaveDeskError.unprocessable("grace periods are 3, 16 or 28 days, got \(days)", code: "invalid_grace_days")
                }
                event = ("DID_FAIL_TO_RENEW", "GRACE_PERIOD", period, renewal(record, autoRenew: true, graceEnds: now + Int64(days) * Seconds.wholeDay))
            case .renewalFailed: event = ("DID_FAIL_TO_RENEW", nil, period, renewal(record, autoRenew: true))
            case .autoRenewOff: event = ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", period, renewal(record, autoRenew: false))
            case .autoRenewOn: event = ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED", period, renewal(record, autoRenew: true))
            case .refund: event = ("REFUND", nil, period, nil)
            case .renew: event = ("DID_RENEW", nil, nextPeriodEnd(record, from: max(period, now)), renewal(record, autoRenew: true))
            case .expire: event = ("EXPIRED", "VOLUNTARY", period, renewal(record, autoRenew: false))
            }
            let signed = try await sign(record, type: event.type, subtype: event.subtype, expires: event.expires, renewal: event.renewal, at: now)
            return try await apply(signed, data, scope: scope)
        }.output
    }

    /// What the demo device's StoreKit hands the app after a purchase (or a renewal of an existing
    /// subscription): a transaction signed with the local CA. Nothing is stored here; the device
    /// syncs it to `storekit-transactions`, through its sync queue.
    func simulatePurchase(
        _ request: Schemas.SimulateStoreKitPurchaseRequest, scope: RequestScope, idempotencyKey: String?
    ) async throws -> Schemas.SimulatedStoreKitTransaction {
        try await changes.idempotent(
            scope, operation: "simulateStoreKitPurchase", request: request, idempotencyKey: idempotencyKey
        ) { data in try await signPurchase(request, data, scope: scope) }.output
    }

    private func signPurchase(
        _ request: Schemas.SimulateStoreKitPurchaseRequest, _ data: Repositories, scope: RequestScope
    ) async throws -> Schemas.SimulatedStoreKitTransaction {
        guard let ca = localCA, let settings = config.appStore else {
            throw SaveDeskError.unprocessable("simulated App Store purchases need a local StoreKit CA (app_store.local_ca = true)", code: "no_local_ca")
        }
        guard let product = config.product(id: request.productId), let storeId = product.storekitProductId else {
            throw SaveDeskError.notFound("no App Store product for \"\(request.productId)\"", code: "unknown_product")
        }
        let now = clock.now(scope).unixSeconds
        var otid = "2000009" + String(UInt64.random(in: 100_000_000...999_999_999))
        var started = now, expires = BillingLedger.add(product.interval, to: now)
        var signedAt = now * 1000
        if let requested = request.originalTransactionId {
            guard let record = try await testRecord(data, requested) else {
                throw SaveDeskError.notFound("no App Store subscription with original transaction id \(requested)", code: "unknown_transaction")
            }
            otid = requested
            started = record.startedAt
            expires = nextPeriodEnd(record, from: max(record.currentPeriodEnd ?? now, now))
            signedAt = Self.signedDate(at: now, after: record)
        }
        let transaction = AppStoreTransaction(
            transactionId: "sim_\(UUID.random().uuidString.prefix(12))", originalTransactionId: otid, bundleId: settings.bundleId,
            productId: storeId, purchaseDate: now * 1000, originalPurchaseDate: started * 1000, expiresDate: expires * 1000,
            environment: settings.environment, type: "Auto-Renewable Subscription", revocationDate: nil, signedDate: signedAt
        )
        return .init(
            jwsRepresentation: try await ca.sign(transaction), transactionId: transaction.transactionId, originalTransactionId: otid,
            expiresAt: Date(timeIntervalSince1970: TimeInterval(expires))
        )
    }

    /// Runs the App Store's own timeline up to `now` for every App Store subscription of `scope`'s
    /// mode (a test scope: the test clock), inside the caller's transaction: grace period →
    /// billing retry → expired, cancelled → expired, renewing → renewed.
    func advanceSimulatedAppStore(
        _ data: Repositories, now: Int64, scope: RequestScope
    ) async throws -> [(customerId: String, subscriptionId: String, steps: [String])] {
        guard localCA != nil, !scope.livemode else { return [] }
        var taken: [(String, String, [String])] = []
        let records = try await data.ledger.appStoreSubscriptions(livemode: scope.livemode)
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
                    let deadline = (record.pastDueSince ?? now) + Self.billingRetryDays * Seconds.wholeDay
                    guard deadline <= now else { step = nil; break }
                    step = ("EXPIRED", "BILLING_RETRY", deadline, record.currentPeriodEnd ?? deadline, renewal(record, autoRenew: false), "billing retry ended; expired")
                case .active:
                    guard let end = record.currentPeriodEnd, end <= now else { step = nil; break }
                    guard record.willRenew else {
                        step = ("EXPIRED", "VOLUNTARY", end, end, renewal(record, autoRenew: false), "Apple period ended; expired")
                        break
                    }
                    // Every renewal due by now, as one signed notification of the latest (nobody
                    // watched the ones in between; a long jump stays one step per subscription).
                    var (start, next, periods) = (end, nextPeriodEnd(record, from: end), 1)
                    while next <= now, periods < 10_000 {
                        (start, next, periods) = (next, nextPeriodEnd(record, from: next), periods + 1)
                    }
                    step = ("DID_RENEW", nil, start, next, renewal(record, autoRenew: true),
                            periods == 1 ? "renewed by Apple" : "renewed by Apple \(periods) times")
                default:
                    step = nil
                }
                guard let step else { break }
                let signed = try await sign(record, type: step.type, subtype: step.subtype, expires: step.expires, renewal: step.renewal, at: step.at)
                _ = try await apply(signed, data, at: now, scope: scope)
                steps.append(step.text)
                guard let updated = try await testRecord(data, record.originalTransactionId ?? ""), updated != record else { break }
                record = updated
            }
            if !steps.isEmpty { taken.append((record.customerId, record.id, steps)) }
        }
        return taken
    }

    /// A test-mode App Store subscription.
    private func testRecord(_ data: Repositories, _ otid: String) async throws -> SubscriptionRecord? {
        guard let record = try await data.ledger.subscription(originalTransactionId: otid), !record.livemode else { return nil }
        return record
    }

    private func nextPeriodEnd(_ record: SubscriptionRecord, from time: Int64) -> Int64 {
        BillingLedger.add(config.product(id: record.productId)?.interval ?? .month, to: time)
    }

    /// When the simulated App Store signs an event at `time`: never at or before what the
    /// subscription last applied, as Apple's own signing dates only move forward.
    static func signedDate(at time: Int64, after record: SubscriptionRecord) -> Int64 {
        max(time * 1000, (record.appstoreSignedAt ?? 0) + 1)
    }

    private func renewal(_ record: SubscriptionRecord, autoRenew: Bool, graceEnds: Int64? = nil) -> AppStoreRenewalInfo {
        AppStoreRenewalInfo(
            originalTransactionId: record.originalTransactionId ?? "", productId: storeProductId(record), autoRenewStatus: autoRenew ? 1 : 0,
            expirationIntent: nil, gracePeriodExpiresDate: graceEnds.map { $0 * 1000 }, isInBillingRetryPeriod: nil,
            environment: config.appStore?.environment ?? "Sandbox", signedDate: nil
        )
    }

    private func storeProductId(_ record: SubscriptionRecord) -> String {
        config.product(id: record.productId)?.storekitProductId ?? record.productId
    }

    /// Signs a notification (and its transaction and renewal info) with the local CA, then checks
    /// it as Apple's would be checked.
    private func sign(
        _ record: SubscriptionRecord, type: String, subtype: String?, expires: Int64, renewal: AppStoreRenewalInfo?, at time: Int64
    ) async throws -> VerifiedNotification {
        guard let ca = localCA, let settings = config.appStore else {
            throw SaveDeskError.unprocessable("simulated App Store events need a local StoreKit CA (app_store.local_ca = true)", code: "no_local_ca")
        }
        let signedAt = Self.signedDate(at: time, after: record)
        let transaction = AppStoreTransaction(
            transactionId: "sim_\(UUID.random().uuidString.prefix(12))", originalTransactionId: record.originalTransactionId ?? "",
            bundleId: settings.bundleId, productId: storeProductId(record), purchaseDate: time * 1000,
            originalPurchaseDate: record.startedAt * 1000, expiresDate: expires * 1000, environment: settings.environment,
            type: "Auto-Renewable Subscription", revocationDate: type == "REFUND" ? time * 1000 : nil, signedDate: signedAt
        )
        var signedRenewal: String?
        if var renewal {
            renewal.signedDate = signedAt
            signedRenewal = try await ca.sign(renewal)
        }
        let notification = AppStoreNotification(
            notificationType: type, subtype: subtype, notificationUUID: UUID.random().uuidString,
            data: .init(bundleId: settings.bundleId, environment: settings.environment,
                        signedTransactionInfo: try await ca.sign(transaction), signedRenewalInfo: signedRenewal, status: nil),
            signedDate: signedAt
        )
        return try await verifyNotification(try await ca.sign(notification), now: clock.server.now())
    }
}
