import Foundation
import RetentionDomain
import SaveDeskClient

/// The server calls a cancel flow makes. `SaveDeskClient` is the live one; view-model tests use
/// an in-memory fake. A call that changes something takes the Idempotency-Key of the agent's
/// action, so a retry of it is the same call to the server.
public protocol CancelFlowCalls: Sendable {
    func cancelFlowConfig(userId: String?) async throws(SaveDeskClientError) -> CancelFlow.Config
    func customer(id: String) async throws(SaveDeskClientError) -> Wire.CustomerDetail
    func products() async throws(SaveDeskClientError) -> [Product]
    func acceptSaveOffer(productId: String, userId: String, idempotencyKey: String) async throws(SaveDeskClientError) -> SaveOfferResult
    func issueRetentionOfferCode(customerId: String, productId: String, idempotencyKey: String) async throws(SaveDeskClientError) -> Wire.RetentionOfferCode
    func pauseSubscription(
        productId: String, userId: String, days: Int?, pauseOptionId: Int?, idempotencyKey: String
    ) async throws(SaveDeskClientError) -> Date?
    func cancelSubscription(productId: String, userId: String, immediate: Bool, idempotencyKey: String) async throws(SaveDeskClientError) -> Date
    func recordAppStoreCancellation(
        customerId: String, productId: String, idempotencyKey: String
    ) async throws(SaveDeskClientError) -> Wire.AppStoreCancellation
    /// Fire-and-forget (the live one writes it to the outbox first).
    func submitCancelFlowResponse(_ response: CancelFlow.Response)
}

extension SaveDeskClient: CancelFlowCalls {}
