import Foundation
import SaveDeskAPI

extension SubscriptionService {
    /// A paywall or checkout funnel event from the SDK; the event keeps the key's mode. A user id
    /// the server has not seen becomes a customer with nothing yet; "anonymous" stays no one.
    func recordFunnelEvent(_ event: Components.Schemas.FunnelEvent, scope: RequestScope, idempotencyKey: String?) async throws -> Components.Schemas.StatusResponse {
        let metadata = try event.metadata.map { try ChangeTransaction.json($0.additionalProperties) }
        let key = event.userId == CustomerRecord.anonymous ? nil : "customer:" + event.userId
        return try await changes.idempotent(scope, operation: "recordFunnelEvent", request: event, idempotencyKey: idempotencyKey, key: key) { data in
            if event.userId != CustomerRecord.anonymous {
                try await changes.customer(data, id: event.userId, scope: scope, now: clock.now(scope).unixSeconds)
            }
            try await data.funnelEvents.record(
                id: "fe_" + UUID.random().uuidString.lowercased(), type: event.eventType.rawValue, userId: event.userId,
                productId: event.productId, screenName: event.screenName, metadata: metadata, livemode: scope.livemode,
                at: clock.now(scope).unixSeconds
            )
            return Components.Schemas.StatusResponse(status: "recorded")
        }.output
    }
}
