import Foundation
import SaveDeskAPI

extension SubscriptionService {
    /// A paywall or checkout funnel event from the SDK. `user_id` may be "anonymous" (or a user
    /// the server does not know yet), so no customer is required; the event keeps the key's mode.
    func recordFunnelEvent(_ event: Components.Schemas.FunnelEvent, scope: RequestScope, idempotencyKey: String?) async throws -> Components.Schemas.StatusResponse {
        let metadata = try event.metadata.map { try ChangeTransaction.json($0.additionalProperties) }
        return try await changes.idempotent(scope, operation: "recordFunnelEvent", request: event, idempotencyKey: idempotencyKey) { data in
            try await data.funnelEvents.record(
                id: "fe_" + UUID().uuidString.lowercased(), type: event.eventType.rawValue, userId: event.userId,
                productId: event.productId, screenName: event.screenName, metadata: metadata, livemode: scope.livemode,
                at: clock.now(scope).unixSeconds
            )
            return Components.Schemas.StatusResponse(status: "recorded")
        }.output
    }
}
