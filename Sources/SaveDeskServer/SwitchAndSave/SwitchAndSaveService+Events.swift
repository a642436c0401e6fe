import Foundation
import SaveDeskAPI

/// Funnel events of switch and save: impressions (once per user, session and variant) and
/// conversions (once per user, attributed to the variant the user last saw).
extension SwitchAndSaveService {
    func recordImpression(_ request: Schemas.OfferViewedRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.StatusResponse {
        _ = try config.requireProduct(request.productId)
        // The SDK's placeholder for a user it does not know: nobody to count an impression for.
        guard request.userId != CustomerRecord.anonymous else { return Schemas.StatusResponse(status: "anonymous") }
        let variant = request.variantId.map(String.init) ?? ""
        return try await changes.mutate(
            scope, operation: "recordOfferViewed", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "switch_and_save.viewed"
        ) { data, now in
            try await changes.customer(data, id: request.userId, scope: scope, now: now)
            guard try await !data.switchAndSave.hasImpression(customerId: request.userId, sessionId: request.sessionId, variantId: variant) else {
                return ChangeTransaction.Change(output: Schemas.StatusResponse(status: "duplicate"), before: nil, after: nil, changed: false)
            }
            try await data.switchAndSave.recordImpression(
                customerId: request.userId, sessionId: request.sessionId, variantId: variant, productId: request.productId,
                flowType: request.flowType, at: now, livemode: scope.livemode
            )
            return ChangeTransaction.Change(output: Schemas.StatusResponse(status: "recorded"), before: nil, after: nil)
        }
    }

    func recordConversion(
        _ request: Schemas.MigrationConvertedRequest, scope: RequestScope, idempotencyKey: String?
    ) async throws -> Schemas.MigrationConvertedResponse {
        try await changes.mutate(
            scope, operation: "recordMigrationConverted", request: request, idempotencyKey: idempotencyKey,
            customerId: request.userId, action: "switch_and_save.converted"
        ) { data, now in
            try await changes.customer(data, id: request.userId, scope: scope, now: now)
            let already = try await data.switchAndSave.hasConversion(customerId: request.userId)
            if !already {
                try await data.switchAndSave.recordConversion(
                    customerId: request.userId, variantId: try await data.switchAndSave.lastVariantSeen(customerId: request.userId),
                    source: request.source, at: now, livemode: scope.livemode
                )
            }
            return ChangeTransaction.Change(
                output: Schemas.MigrationConvertedResponse(status: already ? "duplicate" : "recorded", conversions: 1),
                before: nil, after: nil, changed: !already
            )
        }
    }
}
