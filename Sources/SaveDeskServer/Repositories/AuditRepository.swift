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
        // Its columns spelled out, as the change's own inserts are: SQLKit's model encoder (a
        // Codable pass over the record) was 1.5 % of the process under durable writes, on the
        // SQLite writer's thread.
        let row = db.insert(into: "audit_events")
            .columns("id", "at", "actor", "customer_id", "action", "parameters", "before_state", "after_state", "request_id")
            .values(SQLBindings.of(
                event.id, event.at, event.actor, event.customerId, event.action, event.parameters, event.beforeState,
                event.afterState, event.requestId
            ))
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
