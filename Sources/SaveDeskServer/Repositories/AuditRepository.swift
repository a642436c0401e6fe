import SQLKit

/// The audit trail: every change, with who made it and the state before and after. Kept forever.
/// Each row appended is also the event log's next event (`EventLogRepository`): every change the
/// server records reaches the desk's event stream.
protocol AuditRepository: Sendable {
    /// Appends `event`, and stores `answer` (its change's Idempotency-Key's) and the change's
    /// `writes` with it: on PostgreSQL in one statement (`Inserts`).
    func append(_ event: AuditRecord, answering answer: IdempotencyAnswer?, with writes: Inserts) async throws
    /// A customer's newest events first.
    func timeline(customerId: String, limit: Int) async throws -> [AuditRecord]
}

extension AuditRepository {
    func append(_ event: AuditRecord) async throws { try await append(event, answering: nil, with: Inserts()) }
}

struct SQLAuditRepository: AuditRepository {
    let db: any SQLDatabase
    let kind: Store.Kind
    let events: any EventLogRepository

    func append(_ event: AuditRecord, answering answer: IdempotencyAnswer?, with writes: Inserts) async throws {
        let row = try db.insert(into: "audit_events").model(event, with: SQLCoding.rowEncoder)
        let stored = answer.map { [SQLIdempotencyRepository.insert($0, on: db).insert] } ?? []
        try await (writes + Inserts([row.insert] + stored)).run(on: db, kind: kind)
        try await events.record(event)
    }

    func timeline(customerId: String, limit: Int) async throws -> [AuditRecord] {
        try await db.select().column("*").from("audit_events").where("customer_id", .equal, customerId)
            .orderBy("at", .descending).orderBy("id", .descending).limit(limit)
            .all(records: AuditRecord.self)
    }
}
