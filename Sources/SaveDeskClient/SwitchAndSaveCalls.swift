import Foundation
import RetentionDomain
import SaveDeskAPI

/// Switch and save, checkout, App Store sync and upgrades (the IAP API).
extension SaveDeskClient {
    /// The switch-and-save decision for a user, with the reasons when it is not offered.
    public func userOffer(userId: String) async throws(SaveDeskClientError) -> SwitchAndSaveDecision {
        try await send(retry: true, { try await api.getUserOffer(query: .init(userId: userId)) }) {
            try SwitchAndSaveDecision(try $0.ok.body.json)
        }
    }

    /// Records a dismissal on the server, so every console sees it.
    public func recordOfferDismissed(userId: String, variantId: Int? = nil, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) {
        try await send(retry: true, {
            try await api.recordOfferDismissed(headers: .init(idempotencyKey: key), body: .json(.init(
                userId: userId, flowType: .switchAndSave, variantId: variantId)))
        }) { _ = try $0.ok }
    }

    /// Creates a web checkout. With the App Store period's end, the web subscription starts in a
    /// migration trial that ends then, so the customer is never charged twice.
    public func createCheckout(
        productId: String, userId: String, stripeCustomerId: String? = nil,
        appStoreSubscriptionEnd: Date? = nil, originalTransactionId: String? = nil, idempotencyKey key: String = newIdempotencyKey()
    ) async throws(SaveDeskClientError) -> Wire.Checkout {
        return try await send(retry: true, {
            try await api.createCheckout(headers: .init(idempotencyKey: key), body: .json(.init(
                productId: productId, userId: userId, stripeCustomerId: stripeCustomerId,
                storekitSubscriptionEnd: appStoreSubscriptionEnd, storekitOriginalTransactionId: originalTransactionId,
                checkoutMode: .native, platform: "savedesk")))
        }) { try $0.ok.body.json }
    }

    public func transaction(id: String) async throws(SaveDeskClientError) -> Wire.CheckoutTransaction {
        try await send(retry: true, { try await api.getTransaction(path: .init(transactionId: id)) }) { try $0.ok.body.json }
    }

    /// Polls a checkout transaction until it is no longer pending, at most `attempts` times.
    public func confirmTransaction(
        id: String, attempts: Int = 10, interval: Duration = .milliseconds(300)
    ) async throws(SaveDeskClientError) -> Wire.CheckoutTransaction {
        var last = try await transaction(id: id)
        for _ in 1..<max(1, attempts) where last.status == .pending || last.status == .processing {
            try? await Task.sleep(for: interval)
            last = try await transaction(id: id)
        }
        return last
    }

    /// Reports whether Apple still renews (`renewing`) or renewal is off, on the web transaction.
    public func reportAppleRenewal(transactionId: String, renewing: Bool, appStoreSubscriptionEnd: Date? = nil) async throws(SaveDeskClientError) {
        try await send(retry: true, {
            try await api.updateTransactionStoreKitStatus(path: .init(transactionId: transactionId), body: .json(.init(
                storekitStatus: renewing ? 1 : 2, storekitSubscriptionEnd: appStoreSubscriptionEnd)))
        }) { _ = try $0.ok }
    }

    /// What the server knows of an App Store subscription.
    public func storeKitSubscriptionStatus(originalTransactionId: String) async throws(SaveDeskClientError) -> Wire.StoreKitSubscriptionStatus {
        try await send(retry: true, {
            try await api.getStoreKitSubscriptionStatus(query: .init(originalTransactionId: originalTransactionId))
        }) { try $0.ok.body.json }
    }

    /// Syncs a signed StoreKit transaction to a user; `idempotencyKey` stays the same across a
    /// queue's retries. A conflict (another user owns it) is an answer, not an error.
    public func syncStoreKitTransaction(
        jws: String, userId: String, idempotencyKey: String = newIdempotencyKey()
    ) async throws(SaveDeskClientError) -> Wire.StoreKitSync {
        try await send(retry: false, {
            try await api.syncStoreKitTransaction(headers: .init(idempotencyKey: idempotencyKey), body: .json(
                .StoreKitTransactionRequest(.init(jwsRepresentation: jws, userId: userId))))
        }) { output in
            guard case .StoreKitTransactionResponse(let synced) = try output.ok.body.json else { throw CancellationError() }
            return synced
        }
    }

    /// Undoes a cancel at period end: the subscription renews again.
    public func reactivateSubscription(productId: String, userId: String, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) -> Date? {
        return try await send(retry: true, {
            try await api.reactivateSubscription(headers: .init(idempotencyKey: key), body: .json(.init(userId: userId, productId: productId)))
        }) { try $0.ok.body.json.renewsAt }
    }

    public func upgradeOffer(userId: String, productId: String) async throws(SaveDeskClientError) -> Wire.UpgradeOffer {
        try await send(retry: true, { try await api.getUpgradeOffer(query: .init(userId: userId, productId: productId)) }) { try $0.ok.body.json }
    }

    public func executeUpgrade(userId: String, from current: String, to target: String, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) -> Wire.UpgradeResult {
        return try await send(retry: true, {
            try await api.executeUpgrade(headers: .init(idempotencyKey: key), body: .json(.init(
                userId: userId, currentProductId: current, targetProductId: target)))
        }) { try $0.ok.body.json }
    }

    public func respondToUpgradeOffer(
        userId: String, from current: String, to target: String, outcome: Wire.UpgradeAnswer, idempotencyKey key: String = newIdempotencyKey()
    ) async throws(SaveDeskClientError) {
        try await send(retry: true, {
            try await api.respondToUpgradeOffer(headers: .init(idempotencyKey: key), body: .json(.init(
                userId: userId, currentProductId: current, targetProductId: target, outcome: outcome)))
        }) { _ = try $0.ok }
    }

    /// An impression of the offer; fire-and-forget through the outbox (counted once per user,
    /// session and variant by the server).
    public func recordOfferViewed(userId: String, productId: String, sessionId: String, variantId: Int? = nil) {
        enqueue(.offerViewed, Components.Schemas.OfferViewedRequest(
            userId: userId, productId: productId, sessionId: sessionId, flowType: "switch_and_save", variantId: variantId))
    }

    /// The user paid on the web (fired by `markCheckoutSucceeded`); fire-and-forget through the outbox.
    public func recordMigrationConverted(userId: String) {
        enqueue(.migrationConverted, Components.Schemas.MigrationConvertedRequest(userId: userId, source: "web_checkout"))
    }
}
