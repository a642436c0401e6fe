import Foundation
import RetentionDomain
import SQLKit

/// Switch and save's facts: offer impressions (once per user, session and variant), conversions
/// (once per user) and dismissals (the latest per user); and their funnel counts per variant.
protocol SwitchAndSaveRepository: Sendable {
    func hasImpression(customerId: String, sessionId: String, variantId: String) async throws -> Bool
    func recordImpression(
        customerId: String, sessionId: String, variantId: String, productId: String, flowType: String, at: Int64, livemode: Bool
    ) async throws
    /// The variant the customer saw last ("" if none).
    func lastVariantSeen(customerId: String) async throws -> String
    func hasConversion(customerId: String) async throws -> Bool
    func recordConversion(customerId: String, variantId: String, source: String?, at: Int64, livemode: Bool) async throws
    func dismissal(customerId: String) async throws -> SwitchAndSaveEligibility.Dismissal?
    /// Replaces the customer's dismissal.
    func recordDismissal(customerId: String, flowType: String, by actor: String, at: Int64, variantId: String?) async throws
    func deleteDismissal(customerId: String) async throws
    /// Per variant within `[from, to)`: impressions, conversions, and conversions whose customer
    /// has no App Store subscription still renewing (completed).
    func funnel(livemode: Bool, from: Int64?, to: Int64?) async throws -> (impressions: [String: Int], conversions: [String: Int], completed: [String: Int])
}

struct SQLSwitchAndSaveRepository: SwitchAndSaveRepository {
    let db: any SQLDatabase

    func hasImpression(customerId: String, sessionId: String, variantId: String) async throws -> Bool {
        try await db.select().column("created_at").from("offer_impressions")
            .where("customer_id", .equal, customerId).where("session_id", .equal, sessionId)
            .where("variant_id", .equal, variantId).first() != nil
    }

    func recordImpression(
        customerId: String, sessionId: String, variantId: String, productId: String, flowType: String, at time: Int64, livemode: Bool
    ) async throws {
        try await db.insert(into: "offer_impressions")
            .columns("customer_id", "session_id", "variant_id", "product_id", "flow_type", "created_at", "livemode")
            .values(SQLBindings.of(customerId, sessionId, variantId, productId, flowType, time, livemode))
            .run()
    }

    func lastVariantSeen(customerId: String) async throws -> String {
        try await db.select().column("variant_id").from("offer_impressions")
            .where("customer_id", .equal, customerId).orderBy("created_at", .descending).limit(1).first()?
            .decode(column: "variant_id", as: String.self) ?? ""
    }

    func hasConversion(customerId: String) async throws -> Bool {
        try await db.select().column("created_at").from("migration_conversions").where("customer_id", .equal, customerId).first() != nil
    }

    func recordConversion(customerId: String, variantId: String, source: String?, at time: Int64, livemode: Bool) async throws {
        try await db.insert(into: "migration_conversions").columns("customer_id", "variant_id", "source", "created_at", "livemode")
            .values(SQLBindings.of(customerId, variantId, source, time, livemode)).run()
    }

    func dismissal(customerId: String) async throws -> SwitchAndSaveEligibility.Dismissal? {
        guard let row = try await db.select().columns("dismissed_by", "dismissed_at").from("switch_dismissals")
            .where("customer_id", .equal, customerId).first()
        else { return nil }
        return SwitchAndSaveEligibility.Dismissal(
            dismissedAt: Date(unixSeconds: try row.decode(column: "dismissed_at", as: Int64.self)),
            dismissedBy: try row.decode(column: "dismissed_by", as: String.self)
        )
    }

    func recordDismissal(customerId: String, flowType: String, by actor: String, at time: Int64, variantId: String?) async throws {
        try await deleteDismissal(customerId: customerId)
        try await db.insert(into: "switch_dismissals")
            .columns("customer_id", "flow_type", "dismissed_by", "dismissed_at", "variant_id")
            .values(SQLBindings.of(customerId, flowType, actor, time, variantId))
            .run()
    }

    func deleteDismissal(customerId: String) async throws {
        try await db.delete(from: "switch_dismissals").where("customer_id", .equal, customerId).run()
    }

    func funnel(livemode: Bool, from: Int64?, to: Int64?) async throws -> (impressions: [String: Int], conversions: [String: Int], completed: [String: Int]) {
        func perVariant(_ table: String, _ narrow: (SQLSelectBuilder) -> SQLSelectBuilder = { $0 }) async throws -> [String: Int] {
            let builder = db.select().column("variant_id").column(SQLFunction("count", args: SQLLiteral.all), as: "n").from(table)
                .where("livemode", .equal, livemode)
            if let from { builder.where("created_at", .greaterThanOrEqual, SQLBind(from)) }
            if let to { builder.where("created_at", .lessThan, SQLBind(to)) }
            var counts: [String: Int] = [:]
            for row in try await narrow(builder).groupBy("variant_id").all() {
                counts[try row.decode(column: "variant_id", as: String.self)] = try row.decode(column: "n", as: Int.self)
            }
            return counts
        }
        // Completed: converted, and no App Store subscription still renewing.
        let renewing = db.select().column("customer_id").from("subscriptions").where("livemode", .equal, livemode)
            .where("source", .equal, "app_store").where("will_renew", .equal, true)
            .where("status", .in, ["active", "grace_period", "past_due"])
        return (
            try await perVariant("offer_impressions"),
            try await perVariant("migration_conversions"),
            try await perVariant("migration_conversions") { $0.where("customer_id", .notIn, SQLGroupExpression(renewing.select)) }
        )
    }
}
