import SQLKit

/// The customer portal's short-lived links, each bound to one customer.
protocol PortalSessionRepository: Sendable {
    func insert(_ session: PortalSessionRecord) async throws
    func find(token: String) async throws -> PortalSessionRecord?
    func markUsed(token: String, at: Int64) async throws
    /// Removes the sessions of one mode that expired at or before `time`; returns how many.
    func purge(expiredAtOrBefore time: Int64, livemode: Bool) async throws -> Int
}

struct PortalSessionRecord: Codable, Sendable {
    var token: String
    var customerId: String
    var expiresAt: Int64
    var returnUrl: String?
    var usedAt: Int64?
    /// Its customer's mode.
    var livemode: Bool
}

struct SQLPortalSessionRepository: PortalSessionRepository {
    let db: any SQLDatabase

    func insert(_ session: PortalSessionRecord) async throws {
        try await db.insert(into: "portal_sessions").columns("token", "customer_id", "expires_at", "return_url", "livemode")
            .values(SQLBindings.of(session.token, session.customerId, session.expiresAt, session.returnUrl, session.livemode)).run()
    }

    func find(token: String) async throws -> PortalSessionRecord? {
        try await db.select().columns("token", "customer_id", "expires_at", "return_url", "used_at", "livemode").from("portal_sessions")
            .where("token", .equal, token).first(decoding: PortalSessionRecord.self, with: SQLCoding.decoder)
    }

    func markUsed(token: String, at time: Int64) async throws {
        try await db.update("portal_sessions").set("used_at", to: time).where("token", .equal, token).run()
    }

    func purge(expiredAtOrBefore time: Int64, livemode: Bool) async throws -> Int {
        try await db.deleteCounting(from: "portal_sessions") { _ = $0.where("livemode", .equal, livemode).where("expires_at", .lessThanOrEqual, time) }
    }
}
