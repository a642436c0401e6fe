import Foundation
import SQLKit
import SaveDeskAPI

extension SubscriptionService {
    /// A paywall or checkout funnel event from the SDK. `user_id` may be "anonymous" (or a user
    /// the server does not know yet), so no customer is required; the event keeps the key's mode.
    func recordFunnelEvent(_ event: Components.Schemas.FunnelEvent, idempotencyKey: String?) async throws -> Components.Schemas.StatusResponse {
        let metadata = try event.metadata.map { try Self.json($0.additionalProperties) }
        let livemode = RequestScope.current?.livemode ?? false
        return try await idempotent(operation: "recordFunnelEvent", request: event, idempotencyKey: idempotencyKey) { db in
            try await db.insert(into: "funnel_events")
                .columns("id", "event_type", "user_id", "product_id", "screen_name", "metadata", "livemode", "created_at")
                .values(SQLBindings.of("fe_" + UUID().uuidString.lowercased(), event.eventType.rawValue, event.userId, event.productId,
                                       event.screenName, metadata, livemode, self.now().unixSeconds))
                .run()
            return Components.Schemas.StatusResponse(status: "recorded")
        }.output
    }
}
