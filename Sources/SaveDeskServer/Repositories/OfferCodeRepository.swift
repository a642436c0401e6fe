import SQLKit

/// App Store offer codes by pool, each handed to at most one customer.
protocol OfferCodeRepository: Sendable {
    /// Adds the codes the pool does not have yet.
    func add(_ codes: [String], pool: String) async throws
    /// The code a customer holds from a pool.
    func code(of customerId: String, pool: String) async throws -> String?
    /// The first code of a pool nobody holds.
    func firstFree(pool: String) async throws -> String?
    /// Hands a free code to a customer (unless someone holds it already).
    func assign(_ code: String, to customerId: String, by actor: String, at: Int64) async throws
}

struct SQLOfferCodeRepository: OfferCodeRepository {
    let db: any SQLDatabase

    func add(_ codes: [String], pool: String) async throws {
        for code in codes {
            try await db.insert(into: "win_back_codes").columns("code", "pool").values(SQLBind(code), SQLBind(pool))
                .ignoringConflicts(with: "code").run()
        }
    }

    func code(of customerId: String, pool: String) async throws -> String? {
        try await db.select().column("code").from("win_back_codes").where("pool", .equal, pool)
            .where("customer_id", .equal, customerId).first()?.decode(column: "code", as: String.self)
    }

    func firstFree(pool: String) async throws -> String? {
        try await db.select().column("code").from("win_back_codes").where("pool", .equal, pool)
            .where("customer_id", .is, SQLLiteral.null).orderBy("code").limit(1).first()?.decode(column: "code", as: String.self)
    }

    func assign(_ code: String, to customerId: String, by actor: String, at time: Int64) async throws {
        try await db.update("win_back_codes").set("customer_id", to: customerId).set("issued_by", to: actor).set("issued_at", to: time)
            .where("code", .equal, code).where("customer_id", .is, SQLLiteral.null).run()
    }
}
