import SQLKit

/// One recorded change as the desk's event stream carries it: numbered in commit order.
struct DeskEventRecord: Codable, Hashable, Sendable {
    var id: Int64
    var livemode: Bool
    var customerId: String
    /// The audit action (`subscription.pause`, `checkout.paid`, `app_store.did_change_renewal_status`…).
    var type: String
    var actor: String
    /// When it happened, in its mode's time (Unix seconds).
    var at: Int64
    var auditId: String
    var requestId: String
}

/// The event log: every audited change, numbered in commit order, kept for the retention window.
/// Written only with its audit row (`AuditRepository.append`), so nothing changes unannounced.
protocol EventLogRepository: Sendable {
    /// Records the event of `audit`, its customer's mode read with it (on PostgreSQL the audit row's
    /// trigger writes it at the commit).
    func record(_ audit: AuditRecord) async throws
    /// Up to `limit` events numbered after `id`, in order, of every mode (the hub filters).
    func after(_ id: Int64, limit: Int) async throws -> [DeskEventRecord]
    /// The largest number recorded (0: none).
    func latest() async throws -> Int64
    /// The largest number the purge removed: a resume from before it has missed events.
    func horizon() async throws -> Int64
    /// A customer's version: the number of its latest event (0: none yet).
    func version(customerId: String) async throws -> Int64
    /// A customer's events after `version` made by anyone but `actor`, oldest first.
    func changes(customerId: String, after version: Int64, notBy actor: String, limit: Int) async throws -> [DeskEventRecord]
    /// Removes the events recorded more than `seconds` ago (by the database's clock) and moves the
    /// horizon past them; returns how many.
    func purge(olderThan seconds: Int64) async throws -> Int
}

struct SQLEventLogRepository: EventLogRepository {
    let db: any SQLDatabase
    let kind: Store.Kind
    var recorded: EventsRecorded? = nil

    /// The transaction-scoped advisory lock a PostgreSQL transaction takes before it numbers its
    /// events (at its commit: see `Schema.postgresEventsAtCommit`): it is released after the
    /// commit is visible, so numbers commit in order and a reader that has seen number n never
    /// later finds a smaller one appear.
    static let orderLock: Int64 = 0x5344_4556_454E_5453  // "SDEVENTS"
    /// The deferred trigger that writes a PostgreSQL transaction's events when it commits.
    static let atCommit = "audit_events_desk_event"
    /// The channel PostgreSQL instances are told on when events commit. The store tells it after
    /// the commit, not inside the transaction: a NOTIFY in a transaction takes a lock that queues
    /// the commits of every notifying transaction of the whole cluster.
    static let channel = "savedesk_events"

    static let columns = ["id", "livemode", "customer_id", "type", "actor", "at", "audit_id", "request_id"]

    func record(_ audit: AuditRecord) async throws {
        recorded?.set()
        switch kind {
        case .sqlite:
            try await db.raw("""
                INSERT INTO desk_events (livemode, customer_id, type, actor, at, audit_id, request_id, recorded_at)
                SELECT livemode, \(bind: audit.customerId), \(bind: audit.action), \(bind: audit.actor), \(bind: audit.at), \(bind: audit.id),
                    \(bind: audit.requestId), CAST(strftime('%s', 'now') AS INTEGER)
                FROM customers WHERE id = \(bind: audit.customerId)
                """).run()
        case .postgres:
            // Nothing to send: the audit row's trigger writes its event when the transaction
            // commits (`Schema.postgresEventsAtCommit`).
            break
        }
    }

    /// PostgreSQL: before this transaction reads the log, the events of its own audit rows are
    /// written now rather than at its commit (it then holds the order lock from here), so it reads
    /// them as it would on SQLite.
    private func ownEventsWritten() async throws {
        guard kind == .postgres, recorded?.isSet == true else { return }
        try await db.raw("SET CONSTRAINTS \(unsafeRaw: Self.atCommit) IMMEDIATE").run()
    }

    func after(_ id: Int64, limit: Int) async throws -> [DeskEventRecord] {
        try await ownEventsWritten()
        return try await db.select().columns(Self.columns.map { SQLColumn($0) }).from("desk_events").where("id", .greaterThan, id)
            .orderBy("id").limit(limit).all(decoding: DeskEventRecord.self, with: SQLCoding.decoder)
    }

    func latest() async throws -> Int64 {
        try await ownEventsWritten()
        return try await db.select().column(SQLFunction("max", args: SQLColumn("id")), as: "n").from("desk_events")
            .first()?.decode(column: "n", as: Int64?.self) ?? 0
    }

    func horizon() async throws -> Int64 {
        try await db.select().column("purged_through").from("desk_event_horizon").first()?.decode(column: "purged_through", as: Int64.self) ?? 0
    }

    func version(customerId: String) async throws -> Int64 {
        try await ownEventsWritten()
        return try await db.select().column(SQLFunction("max", args: SQLColumn("id")), as: "n").from("desk_events")
            .where("customer_id", .equal, customerId).first()?.decode(column: "n", as: Int64?.self) ?? 0
    }

    func changes(customerId: String, after version: Int64, notBy actor: String, limit: Int) async throws -> [DeskEventRecord] {
        try await ownEventsWritten()
        return try await db.select().columns(Self.columns.map { SQLColumn($0) }).from("desk_events")
            .where("customer_id", .equal, customerId).where("id", .greaterThan, version).where("actor", .notEqual, actor)
            .orderBy("id").limit(limit).all(decoding: DeskEventRecord.self, with: SQLCoding.decoder)
    }

    func purge(olderThan seconds: Int64) async throws -> Int {
        let now: SQLQueryString = kind == .sqlite
            ? "CAST(strftime('%s', 'now') AS INTEGER)" : "CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS BIGINT)"
        let cutoff: SQLQueryString = "\(now) - \(bind: seconds)"
        guard let through = try await db.raw("SELECT max(id) AS n FROM desk_events WHERE recorded_at < \(cutoff)").first()?
            .decode(column: "n", as: Int64?.self) else { return 0 }
        let count = try await db.raw("SELECT count(*) AS n FROM desk_events WHERE id <= \(bind: through)").first()?.decode(column: "n", as: Int.self) ?? 0
        try await db.raw("DELETE FROM desk_events WHERE id <= \(bind: through)").run()
        try await db.update("desk_event_horizon").set("purged_through", to: through).where("purged_through", .lessThan, through).run()
        return count
    }
}
