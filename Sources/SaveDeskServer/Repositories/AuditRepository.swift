import SQLKit

/// The audit trail: every change, with who made it and the state before and after. Kept forever.
/// Each row appended is also the event log's next event (`EventLogRepository`): every change the
/// server records reaches the desk's event stream.
protocol AuditRepository: Sendable {
    func append(_ event: AuditRecord) async throws
    /// A customer's newest events first.
    func timeline(customerId: String, limit: Int) async throws -> [AuditRecord]
}

struct SQLAuditRepository: AuditRepository {
    let db: any SQLDatabase
    let events: any EventLogRepository

    func append(_ event: AuditRecord) async throws {
        try await db.insert(event, into: "audit_events")
        try await events.record(event)
    }

    func timeline(customerId: String, limit: Int) async throws -> [AuditRecord] {
        try await db.select().column("*").from("audit_events").where("customer_id", .equal, customerId)
            .orderBy("at", .descending).orderBy("id", .descending).limit(limit)
            .all(decoding: AuditRecord.self, with: SQLCoding.decoder)
    }
}
