import Foundation
import RetentionDomain
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
    let store: Store
    let changes: ChangeTransaction
    let clock: DataClock
    let config: ServerConfig
    let verifier: AppStoreVerifier?
    /// The local signing chain of a test or demo server (its simulators sign with it).
    let localCA: LocalStoreKitCA?
    /// Where notifications are counted (verified by outcome, refused by code).
    let metrics: ServerMetrics?

    init(
        store: Store, changes: ChangeTransaction, clock: DataClock, config: ServerConfig, dataDirectory: URL, metrics: ServerMetrics? = nil
    ) throws {
        self.metrics = metrics
        self.store = store
        self.changes = changes
        self.clock = clock
        self.config = config
        guard let settings = config.appStore else {
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

    /// Whether signed data (its `signedDate`, ms) that would turn `record` into `candidate` is
    /// taken (`AppStore.Ordering`: newer, or a tie that changes something without undoing a
    /// revocation).
    static func ordering(_ signedDate: Int64?, record: SubscriptionRecord?, candidate: SubscriptionRecord) -> AppStore.Ordering {
        AppStore.Ordering.decide(
            signed: signedDate, applied: record?.appstoreSignedAt, changes: record != candidate,
            undoesRevocation: record?.entitlementStatus == .revoked && candidate.entitlementStatus != .revoked
        )
    }

    // MARK: Synced transactions

    /// What applying one verified transaction did.
    enum Applied: Sendable {
        /// Another customer of this mode owns it: nothing changed.
        case conflict(owner: CustomerRecord?)
        /// Older than what was applied, or the same: nothing changed.
        case unchanged(SubscriptionRecord)
        case changed(before: SubscriptionRecord?, after: SubscriptionRecord)
    }

    /// A verified transaction of the request's mode, checked against the catalog.
    func verifiedTransaction(_ jws: String, scope: RequestScope) async throws -> (AppStoreTransaction, ServerConfig.ProductConfig, Price) {
        let transaction = try await requireVerifier().verify(jws, as: AppStoreTransaction.self, now: clock.server.now())
        let live = scope.livemode
        guard Self.isLive(environment: transaction.environment ?? "") == live else {
            throw SaveDeskError.unprocessable(
                "this transaction was signed in the \(transaction.environment ?? "") environment; \(live ? "a live key syncs only Production data" : "a test key never syncs Production data")",
                code: "jws_wrong_mode"
            )
        }
        guard let product = config.product(appStoreProductId: transaction.productId), let price = product.appStorePrice else {
            throw SaveDeskError.unprocessable("App Store product \(transaction.productId) is not in the catalog", code: "unknown_app_store_product")
        }
        return (transaction, product, price)
    }

    /// Applies a verified transaction (and its signed renewal info) to the user's App Store
    /// subscription inside the caller's transaction: created if new, changed only by newer signed
    /// data, never taken from another customer (`claim` does that, on purpose).
    func apply(
        _ transaction: AppStoreTransaction, product: ServerConfig.ProductConfig, price: Price, renewal: AppStoreRenewalInfo?,
        willAutoRenew: Bool?, userId: String, _ data: Repositories, now: Int64, scope: RequestScope
    ) async throws -> Applied {
        let live = scope.livemode
        let otid = transaction.originalTransactionId
        let existing = try await data.ledger.subscription(originalTransactionId: otid)
        if let existing, existing.customerId != userId || existing.livemode != live {
            return .conflict(owner: existing.livemode == live ? try await data.customers.find(id: existing.customerId) : nil)
        }
        var record = existing ?? SubscriptionRecord(
            id: "sub_as_\(otid)", customerId: userId, productId: product.id, source: .appStore, status: "active",
            willRenew: willAutoRenew ?? true, isTrial: false, trialType: nil,
            startedAt: Self.date(transaction.originalPurchaseDate ?? transaction.purchaseDate) ?? now,
            currentPeriodEnd: nil, trialEndsAt: nil, cancelledAt: nil, accessUntil: nil, cancelReason: nil, pausedAt: nil,
            pauseResumesAt: nil, gracePeriodEndsAt: nil, pastDueSince: nil, expirationIntent: nil,
            originalTransactionId: otid, priceMicros: price.amountMicros, currency: price.currencyCode, updatedAt: now,
            livemode: live
        )
        let before = existing
        var candidate = record
        candidate.productId = product.id
        candidate.currentPeriodEnd = Self.date(transaction.expiresDate) ?? candidate.currentPeriodEnd
        // The device's word on auto-renewal counts only until signed renewal info arrives.
        if let willAutoRenew, candidate.appstoreRenewalSignedAt == nil { candidate.willRenew = willAutoRenew }
        if let revoked = Self.date(transaction.revocationDate) {
            candidate.status = Entitlement.Status.revoked.wireValue
            candidate.willRenew = false
            candidate.accessUntil = revoked
        } else if let end = candidate.currentPeriodEnd, end <= now {
            candidate.status = Entitlement.Status.expired.wireValue
        } else if candidate.entitlementStatus != .gracePeriod && candidate.entitlementStatus != .pastDue {
            candidate.status = Entitlement.Status.active.wireValue
        }
        if existing == nil || Self.ordering(transaction.signedDate, record: existing, candidate: candidate) == .apply {
            record = candidate
            record.appstoreSignedAt = transaction.signedDate ?? 0
        }
        if let renewal, renewal.originalTransactionId == otid, (renewal.signedDate ?? 0) > (record.appstoreRenewalSignedAt ?? -1) {
            record.willRenew = renewal.autoRenewStatus == 1
            record.appstoreRenewalSignedAt = renewal.signedDate ?? 0
        }
        try await Self.noteRedemption(transaction, data, at: now)
        guard record != before else { return .unchanged(record) }
        record.updatedAt = now
        if existing == nil { try await data.ledger.insert(record) } else { try await data.ledger.update(record) }
        try await RetentionService.confirmCancellations(data, of: record, at: now)
        return .changed(before: before, after: record)
    }

    /// A purchase or renewal that redeemed a promotional offer Apple's cancel page showed marks
    /// those requests redeemed (their save).
    static func noteRedemption(_ transaction: AppStoreTransaction?, _ data: Repositories, at time: Int64) async throws {
        guard let transaction, let offer = transaction.offerIdentifier, !offer.isEmpty else { return }
        try await data.retentionMessages.markRedeemed(originalTransactionId: transaction.originalTransactionId, offerIdentifier: offer, at: time)
    }

    /// Who owns a transaction, masked for the device of another user (`c***@example.com`).
    static func ownerHint(_ owner: CustomerRecord?) -> String? {
        guard let email = owner?.email, let at = email.firstIndex(of: "@"), at > email.startIndex else { return nil }
        return String(email[email.startIndex]) + "***" + email[at...]
    }

    func sync(_ request: Schemas.StoreKitTransactionRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.StoreKitTransactionResponse {
        let (transaction, product, price) = try await verifiedTransaction(request.jwsRepresentation, scope: scope)
        let otid = transaction.originalTransactionId
        return try await changes.mutate(
            scope, operation: "syncStoreKitTransaction", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "app_store.transaction_synced"
        ) { data, now in
            try await changes.customer(data, id: request.userId, scope: scope, now: now)
            let applied: Applied
            if let holder = try await adoptToken(of: transaction, userId: request.userId, data, scope: scope) {
                applied = .conflict(owner: holder)
            } else {
                applied = try await apply(transaction, product: product, price: price, renewal: nil, willAutoRenew: request.willAutoRenew,
                                          userId: request.userId, data, now: now, scope: scope)
            }
            switch applied {
            case .conflict(let owner):
                return .init(
                    output: .init(status: "conflict", owned: false, originalTransactionId: otid, conflict: true, claimAvailable: true,
                                  existingOwnerHint: Self.ownerHint(owner)),
                    before: nil, after: nil, changed: false
                )
            case .unchanged(let record):
                try await attachKept(to: record, data, now: now, scope: scope)
                return .init(output: Self.owned(otid), before: record, after: record, changed: false)
            case .changed(let before, let after):
                try await attachKept(to: after, data, now: now, scope: scope)
                return .init(output: Self.owned(otid), before: before, after: after)
            }
        }
    }

    /// The `appAccountToken` of a synced transaction: when another customer of the mode holds it,
    /// the signed data says the purchase is theirs, and that customer is returned (a conflict for
    /// this user); a token nobody holds becomes this user's, if they hold none yet.
    func adoptToken(of transaction: AppStoreTransaction, userId: String, _ data: Repositories, scope: RequestScope) async throws -> CustomerRecord? {
        guard let token = transaction.accountToken else { return nil }
        if let holder = try await data.customers.find(appAccountToken: token, livemode: scope.livemode) {
            return holder.id == userId ? nil : holder
        }
        if var customer = try await data.customers.lookup(userId, scope), customer.appAccountToken == nil {
            customer.appAccountToken = token
            try await data.customers.update(customer)
        }
        return nil
    }

    static func owned(_ otid: String) -> Schemas.StoreKitTransactionResponse {
        .init(status: "ok", owned: true, originalTransactionId: otid, conflict: false, claimAvailable: false)
    }

    /// The SDK's bulk reconcile: each signed transaction (with its renewal info) verified and
    /// applied as a sync would be; a chunk sent again changes nothing (older or equal signed data).
    func reconcile(_ request: Schemas.StoreKitReconcileRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.StoreKitReconcileResponse {
        var verified: [(AppStoreTransaction, ServerConfig.ProductConfig, Price, AppStoreRenewalInfo?)] = []
        var skipped: [Schemas.ReconcileSkip] = []
        let verifier = try requireVerifier()
        for item in request.transactions {
            do {
                let (transaction, product, price) = try await verifiedTransaction(item.signedTransaction, scope: scope)
                let renewal = try await item.signedRenewalInfo.asyncMap {
                    try await verifier.verify($0, as: AppStoreRenewalInfo.self, now: clock.server.now())
                }
                verified.append((transaction, product, price, renewal))
            } catch let error as SaveDeskError {
                skipped.append(.init(reason: error.code))
            }
        }
        let userId = request.userId
        return try await changes.mutate(
            scope, operation: "reconcileStoreKitTransactions", request: request, idempotencyKey: idempotencyKey, customerId: userId,
            action: "app_store.reconciled"
        ) { data, now in
            try await changes.customer(data, id: userId, scope: scope, now: now)
            var skipped = skipped, emitted = 0
            for (transaction, product, price, renewal) in verified {
                if try await adoptToken(of: transaction, userId: userId, data, scope: scope) != nil {
                    skipped.append(.init(reason: "owned_by_another_user", transactionId: transaction.transactionId))
                    continue
                }
                switch try await apply(transaction, product: product, price: price, renewal: renewal, willAutoRenew: nil,
                                       userId: userId, data, now: now, scope: scope) {
                case .conflict: skipped.append(.init(reason: "owned_by_another_user", transactionId: transaction.transactionId))
                case .unchanged(let record): try await attachKept(to: record, data, now: now, scope: scope)
                case .changed(_, let after):
                    emitted += 1
                    try await attachKept(to: after, data, now: now, scope: scope)
                }
            }
            return .init(
                output: .init(status: "ok", processed: verified.count, eventsEmitted: emitted, skipped: skipped),
                before: nil, after: nil, changed: emitted > 0
            )
        }
    }

    /// Moves a verified App Store subscription to this user (the device holds its signed
    /// transaction, which is the proof); audited on both customers.
    func claim(_ request: Schemas.ClaimRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.ClaimResponse {
        let (transaction, product, price) = try await verifiedTransaction(request.jwsRepresentation, scope: scope)
        let otid = transaction.originalTransactionId
        return try await changes.mutate(
            scope, operation: "claimEntitlement", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "app_store.claimed"
        ) { data, now in
            try await changes.customer(data, id: request.userId, scope: scope, now: now)
            if var record = try await data.ledger.subscription(originalTransactionId: otid), record.livemode == scope.livemode,
                record.customerId != request.userId
            {
                let before = record
                record.customerId = request.userId
                record.updatedAt = now
                try await data.ledger.update(record)
                try await data.audit.append(AuditRecord(
                    id: AuditID.next(), at: now, actor: scope.actor, customerId: before.customerId,
                    action: "app_store.claimed_by_another_user", parameters: try ChangeTransaction.json(["claimed_by": request.userId]),
                    beforeState: try ChangeTransaction.json(before), afterState: nil, requestId: scope.requestId
                ))
                return .init(
                    output: .init(status: "claimed", claimed: true, productId: product.id, originalTransactionId: otid,
                                  message: "moved from another account to this one"),
                    before: before, after: record
                )
            }
            let applied = try await apply(transaction, product: product, price: price, renewal: nil, willAutoRenew: nil,
                                          userId: request.userId, data, now: now, scope: scope)
            let output = Schemas.ClaimResponse(status: "ok", claimed: true, productId: product.id, originalTransactionId: otid)
            switch applied {
            case .changed(let before, let after):
                try await attachKept(to: after, data, now: now, scope: scope)
                return .init(output: output, before: before, after: after)
            case .unchanged(let record):
                try await attachKept(to: record, data, now: now, scope: scope)
                return .init(output: output, before: nil, after: nil, changed: false)
            case .conflict: return .init(output: output, before: nil, after: nil, changed: false)
            }
        }
    }

    func status(originalTransactionId: String, scope: RequestScope) async throws -> Schemas.StoreKitSubscriptionStatus {
        let now = clock.now(scope)
        let live = scope.livemode
        return try await store.read { data in
            guard let record = try await data.ledger.subscription(originalTransactionId: originalTransactionId), record.livemode == live else {
                throw SaveDeskError.notFound("no App Store subscription with original transaction id \(originalTransactionId)", code: "unknown_transaction")
            }
            let entitlement = EntitlementMapping.entitlement(record, now: now, policy: config.billing.lifecyclePolicy)
            return Schemas.StoreKitSubscriptionStatus(
                status: SwitchAndSaveService.appStoreStatus(record.entitlementStatus)?.code ?? 2,
                autoRenewStatus: record.willRenew ? 1 : 0, expiresAt: entitlement.expiresAt, isActive: entitlement.isActive,
                autoRenewEnabled: record.willRenew
            )
        }
    }
}
