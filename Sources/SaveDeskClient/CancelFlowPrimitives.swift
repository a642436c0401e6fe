import Foundation
import RetentionDomain
import SaveDeskAPI

/// The headless cancel-flow primitives of the seed, on a SaveDesk server.
extension SaveDeskClient {
    /// The catalog.
    public func products() async throws(SaveDeskClientError) -> [Product] {
        try await send(retry: true, { try await api.getProducts() }) { try Self.convert(try $0.ok.body.json.products) }
    }

    public func cancelFlowConfig(userId: String? = nil) async throws(SaveDeskClientError) -> CancelFlow.Config {
        try await send(retry: true, { try await api.getCancelFlowConfig(query: .init(userId: userId)) }) {
            try Self.convert(try $0.ok.body.json)
        }
    }

    public func acceptSaveOffer(productId: String, userId: String, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) -> SaveOfferResult {
        return try await send(retry: true, {
            try await api.acceptSaveOffer(headers: .init(idempotencyKey: key), body: .json(.init(userId: userId, productId: productId)))
        }) { try Self.convert(try $0.ok.body.json) }
    }

    /// Pauses for a number of days, or by a pause option; returns when it resumes (nil: open-ended).
    public func pauseSubscription(
        productId: String, userId: String, days: Int? = nil, pauseOptionId: Int? = nil, idempotencyKey key: String = newIdempotencyKey()
    ) async throws(SaveDeskClientError) -> Date? {
        return try await send(retry: true, {
            try await api.pauseSubscription(headers: .init(idempotencyKey: key), body: .json(.init(
                userId: userId, productId: productId, pauseDurationDays: days, pauseOptionId: pauseOptionId)))
        }) { try $0.ok.body.json.resumesAt }
    }

    public func resumeSubscription(productId: String, userId: String, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) {
        try await send(retry: true, {
            try await api.resumeSubscription(headers: .init(idempotencyKey: key), body: .json(.init(userId: userId, productId: productId)))
        }) { _ = try $0.ok }
    }

    /// Cancels at period end (default) or immediately; returns until when the customer has access.
    @discardableResult
    public func cancelSubscription(
        productId: String, userId: String, immediate: Bool = false, idempotencyKey key: String = newIdempotencyKey()
    ) async throws(SaveDeskClientError) -> Date {
        return try await send(retry: true, {
            try await api.cancelSubscription(headers: .init(idempotencyKey: key), body: .json(.init(
                userId: userId, productId: productId, immediate: immediate)))
        }) { try $0.ok.body.json.accessUntil }
    }

    /// A short-lived link to the customer's billing page.
    public func openCustomerPortal(userId: String, returnURL: URL? = nil, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) -> URL {
        return try await send(retry: true, {
            try await api.createCustomerPortalSession(
                headers: .init(idempotencyKey: key), body: .json(.init(userId: userId, returnUrl: returnURL?.absoluteString)))
        }) { output in
            guard let url = URL(string: try output.ok.body.json.portalUrl) else { throw CancellationError() }
            return url
        }
    }

    /// The customer's entitlements, web and App Store merged, each with its source.
    public func restoreEntitlements(userId: String) async throws(SaveDeskClientError) -> [Entitlement] {
        try await send(retry: true, { try await api.getEntitlements(query: .init(userId: userId)) }) {
            try Self.convert(try $0.ok.body.json.entitlements)
        }
    }

    /// The original transaction id of the user's App Store subscription: the active one, or with
    /// `activeOnly` false any (a lapsed one can still be refunded or renewed).
    public func appStoreOriginalTransactionId(userId: String, activeOnly: Bool = true) async throws(SaveDeskClientError) -> String? {
        let entitlements = try await restoreEntitlements(userId: userId)
        return activeOnly ? entitlements.activeAppStoreOriginalTransactionId : entitlements.appStoreOriginalTransactionId
    }

    /// Records how a cancel flow ended. Fire-and-forget: it never throws and never blocks. The
    /// response is written to the outbox first, so it survives a server that is down or an app
    /// that restarts, and is delivered in the background.
    public func submitCancelFlowResponse(_ response: CancelFlow.Response) {
        enqueue(.cancelFlowResponse, response)
    }
}
