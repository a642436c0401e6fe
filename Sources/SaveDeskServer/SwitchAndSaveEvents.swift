import Foundation
import SQLKit
import SaveDeskAPI

/// Funnel events of switch and save: impressions (once per user, session and variant) and
/// conversions (once per user, attributed to the variant the user last saw).
extension SwitchAndSaveService {
    func recordImpression(_ request: Schemas.OfferViewedRequest, idempotencyKey: String?) async throws -> Schemas.StatusResponse {
        guard !request.sessionId.isEmpty else {
            throw SaveDeskError.badRequest("session_id must not be empty", code: "missing_session_id")
        }
        _ = try subscriptions.product(request.productId)
        let variant = request.variantId.map(String.init) ?? ""
        return try await subscriptions.mutate(
            operation: "recordOfferViewed", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "switch_and_save.viewed"
        ) { db, now in
            _ = try await subscriptions.customer(db, id: request.userId)
            let seen = try await db.select().column("created_at").from("offer_impressions")
                .where("customer_id", .equal, request.userId).where("session_id", .equal, request.sessionId)
                .where("variant_id", .equal, variant).first()
            guard seen == nil else {
                return SubscriptionService.Change(output: Schemas.StatusResponse(status: "duplicate"), before: nil, after: nil, changed: false)
            }
            try await db.insert(into: "offer_impressions")
                .columns("customer_id", "session_id", "variant_id", "product_id", "flow_type", "created_at", "livemode")
                .values(SQLBindings.of(request.userId, request.sessionId, variant, request.productId, request.flowType, now,
                                       RequestScope.current?.livemode ?? false))
                .run()
            return SubscriptionService.Change(output: Schemas.StatusResponse(status: "recorded"), before: nil, after: nil)
        }
    }

    func recordConversion(
        _ request: Schemas.MigrationConvertedRequest, idempotencyKey: String?
    ) async throws -> Schemas.MigrationConvertedResponse {
        try await subscriptions.mutate(
            operation: "recordMigrationConverted", request: request, idempotencyKey: idempotencyKey,
            customerId: request.userId, action: "switch_and_save.converted"
        ) { db, now in
            _ = try await subscriptions.customer(db, id: request.userId)
            let already = try await db.select().column("created_at").from("migration_conversions")
                .where("customer_id", .equal, request.userId).first() != nil
            if !already {
                let variant = try await db.select().column("variant_id").from("offer_impressions")
                    .where("customer_id", .equal, request.userId).orderBy("created_at", .descending).limit(1).first()?
                    .decode(column: "variant_id", as: String.self) ?? ""
                try await db.insert(into: "migration_conversions").columns("customer_id", "variant_id", "source", "created_at", "livemode")
                    .values(SQLBindings.of(request.userId, variant, request.source, now, RequestScope.current?.livemode ?? false)).run()
            }
            return SubscriptionService.Change(
                output: Schemas.MigrationConvertedResponse(status: already ? "duplicate" : "recorded", conversions: 1),
                before: nil, after: nil, changed: !already
            )
        }
    }
}
