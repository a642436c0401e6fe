import SQLKit

/// The answer of a request made with an Idempotency-Key: the request's fingerprint, the answer,
/// when it was stored.
struct IdempotencyAnswer: Sendable {
    var key: String
    var operation: String
    var principal: String
    var fingerprint: String
    var body: String
    var at: Int64
    var livemode: Bool
}

/// The answers of Idempotency-Keys, per key, operation and principal.
protocol IdempotencyRepository: Sendable {
    /// The stored answer.
    func find(key: String, operation: String, principal: String) async throws -> IdempotencyAnswer?
    /// The fingerprint, if it was stored after `cutoff`.
    func fingerprint(key: String, operation: String, principal: String, storedAfter cutoff: Int64) async throws -> String?
    func store(_ answer: IdempotencyAnswer) async throws
    func delete(key: String, operation: String, principal: String) async throws
    /// Removes the answers of one mode stored at or before `cutoff`.
    /// Removes the records of one mode stored at or before `cutoff`; returns how many.
    func purge(storedAtOrBefore cutoff: Int64, livemode: Bool) async throws -> Int
}

struct SQLIdempotencyRepository: IdempotencyRepository {
    let db: any SQLDatabase

    private func matching(_ builder: some SQLPredicateBuilder, key: String, operation: String, principal: String) {
        _ = builder.where("idempotency_key", .equal, key).where("route", .equal, operation).where("principal", .equal, principal)
    }

    func find(key: String, operation: String, principal: String) async throws -> IdempotencyAnswer? {
        let query = db.select().columns("fingerprint", "body", "created_at", "livemode").from("idempotency_records")
        matching(query, key: key, operation: operation, principal: principal)
        guard let row = try await query.first() else { return nil }
        return IdempotencyAnswer(
            key: key, operation: operation, principal: principal, fingerprint: try row.decode(column: "fingerprint", as: String.self),
            body: try row.decode(column: "body", as: String.self), at: try row.decode(column: "created_at", as: Int64.self),
            livemode: try row.decode(column: "livemode", as: Bool.self)
        )
    }

    func fingerprint(key: String, operation: String, principal: String, storedAfter cutoff: Int64) async throws -> String? {
        let query = db.select().column("fingerprint").from("idempotency_records").where("created_at", .greaterThan, cutoff)
        matching(query, key: key, operation: operation, principal: principal)
        return try await query.first()?.decode(column: "fingerprint", as: String.self)
    }

    func store(_ answer: IdempotencyAnswer) async throws {
        try await Self.insert(answer, on: db).run()
    }

    /// The insert of `answer` (also sent with a change's audit row: `SQLAuditRepository.append`).
    static func insert(_ answer: IdempotencyAnswer, on db: any SQLDatabase) -> SQLInsertBuilder {
        db.insert(into: "idempotency_records")
            .columns("idempotency_key", "route", "principal", "fingerprint", "body", "created_at", "livemode")
            .values(SQLBindings.of(answer.key, answer.operation, answer.principal, answer.fingerprint, answer.body, answer.at, answer.livemode))
    }

    func delete(key: String, operation: String, principal: String) async throws {
        let query = db.delete(from: "idempotency_records")
        matching(query, key: key, operation: operation, principal: principal)
        try await query.run()
    }

    func purge(storedAtOrBefore cutoff: Int64, livemode: Bool) async throws -> Int {
        try await db.deleteCounting(from: "idempotency_records") { _ = $0.where("livemode", .equal, livemode).where("created_at", .lessThanOrEqual, cutoff) }
    }
}
