import Foundation
import Logging
import SQLKit
import Synchronization

/// The durable store, on one of two engines: an embedded SQLite file (one server process; the
/// default) or a PostgreSQL database that several server instances share. Services see the
/// same three doors on both: `read`, `transaction` (a change, its audit row and its idempotency
/// record are committed together or not at all) and `exclusive` (schema work; tests).
public final class Store: Sendable {
    /// Which engine a store runs on.
    public enum Kind: String, Sendable { case sqlite, postgres }

    /// How SQLite flushes a commit. `full` syncs the WAL on every commit (survives power loss);
    /// `normal` only at checkpoints (survives a crash of the process, not of the machine). Only
    /// `make bench` uses `normal`, to show what `full` costs. PostgreSQL keeps its own settings.
    public enum Durability: String, Sendable {
        case full = "FULL", normal = "NORMAL"
    }

    private let engine: any StoreEngine
    /// Told after each committed transaction on SQLite, where one process writes (the event hub
    /// then reads what was recorded). On PostgreSQL the database tells every instance (`listen`).
    private let committed = Mutex<CommitHook?>(nil)
    /// A notification to the other instances under way, and whether commits since need another;
    /// the task telling them (the last one), which `close` lets finish.
    private let telling = Mutex<(running: Bool, again: Bool, task: Task<Void, Never>?)>((false, false, nil))
    let logger: Logger
    let location: StoreLocation
    let metrics: StoreMetrics

    public var kind: Store.Kind { engine.kind }
    /// Whether other server instances may write the same data (PostgreSQL): what one instance
    /// keeps in memory (the test clock's offset) is read again before it is used.
    var isShared: Bool { kind == .postgres }

    /// Where the server keeps its files unless told: the SQLite file's folder, or
    /// `savedesk-data` in the working directory.
    var defaultDataDirectory: URL {
        switch location {
        case .sqlite(let path): URL(fileURLWithPath: path).deletingLastPathComponent()
        case .postgres: URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("savedesk-data")
        }
    }

    private init(engine: any StoreEngine, location: StoreLocation, logger: Logger, metrics: StoreMetrics) {
        self.engine = engine
        self.location = location
        self.logger = logger
        self.metrics = metrics
    }

    /// Opens the store `location` names (a SQLite file, created if needed, or a `postgres://`
    /// URL) and applies pending migrations. `metrics`: where its figures go (the server's).
    static func open(
        path location: String, durability: Durability = .full, logger: Logger, metrics: StoreMetrics
    ) async throws -> Store {
        let location = try StoreLocation(location)
        let engine: any StoreEngine
        switch location {
        case .sqlite(let path): engine = try await SQLiteEngine.open(path: path, durability: durability, logger: logger)
        case .postgres(let configuration): engine = try await PostgresEngine.open(configuration, logger: logger)
        }
        let store = Store(engine: engine, location: location, logger: logger, metrics: metrics)
        do {
            try await store.migrate()
        } catch {
            await engine.close()
            throw error
        }
        return store
    }

    /// Opens a store for a tool or a test: its figures go nowhere.
    public static func open(path location: String, durability: Durability = .full, logger: Logger) async throws -> Store {
        try await open(path: location, durability: durability, logger: logger, metrics: .none)
    }

    /// Closes the engine once the last commit's notification is out (no longer than the engine's
    /// own bound): a store closed right after a commit (the seed) otherwise asked its pool for a
    /// connection while the pool shut down, and the notification was lost.
    public func close() async {
        if let last = telling.withLock({ $0.task }) { _ = await Deadline.value(of: last, within: PostgresEngine.closeTimeout) }
        await engine.close()
    }

    /// Reads through the repositories (on a reader connection: never behind a write).
    func read<T>(_ body: (Repositories) async throws -> T) async throws -> T {
        let asked = ContinuousClock.now
        return try await engine.read { db in try await body(readerRepositories(db, askedAt: asked)) }
    }

    /// `read`, for a few rows by their key on every change (an Idempotency-Key's fingerprint): on
    /// PostgreSQL its statements stay prepared (see `PostgresEngine.lookup`), as the commits'
    /// notification does.
    func lookup<T>(_ body: (Repositories) async throws -> T) async throws -> T {
        let asked = ContinuousClock.now
        return try await engine.lookup { db in try await body(readerRepositories(db, askedAt: asked)) }
    }

    /// `read`, for a report whose statements' one plan suits any of their values (the funnel's
    /// sums): on PostgreSQL they stay prepared and are planned once (see `PostgresEngine.report`).
    func report<T>(_ body: (Repositories) async throws -> T) async throws -> T {
        let asked = ContinuousClock.now
        return try await engine.report { db in try await body(readerRepositories(db, askedAt: asked)) }
    }

    /// The repositories over a reader's connection, the wait for it recorded.
    private func readerRepositories(_ db: any SQLDatabase, askedAt asked: ContinuousClock.Instant) -> Repositories {
        metrics.readerWait.recordNanoseconds(ServerMetrics.nanoseconds(ContinuousClock.now - asked))
        return Repositories(sql: db, kind: kind)
    }

    /// Changes through the repositories in one transaction. See `StoreEngine.transaction`: `key`
    /// names what the transaction changes (a customer), and `alsoLocking` anything else it
    /// changes that others change too (the cancel-flow rollups), so changes to the same thing
    /// queue rather than race.
    func transaction<T>(key: String? = nil, alsoLocking others: [String] = [], _ body: (Repositories) async throws -> T) async throws -> T {
        try await transaction(key: key, alsoLocking: others, prelude: { _ in () }) { data, _ in try await body(data) }
    }

    /// A job's transaction that only transactions of `key` write beside (the cancel-flow fold):
    /// kept apart from them by the key alone (see `StoreEngine.transaction`'s `queued`).
    func queuedTransaction<T>(key: String, _ body: (Repositories) async throws -> T) async throws -> T {
        try await transaction(key: key, alsoLocking: [], queued: true, prelude: { _ in () }) { data, _ in try await body(data) }
    }

    /// The same, with a `prelude` that reads once the keys are held, before the transaction (see
    /// `StoreEngine.transaction`), and hands what it read to the body.
    func transaction<Prior, T>(
        key: String? = nil, alsoLocking others: [String] = [], queued: Bool = false, prelude: (Repositories) async throws -> Prior,
        _ body: (Repositories, Prior) async throws -> T
    ) async throws -> T {
        let recorded = EventsRecorded()
        let value = try await sqlTransaction(key: key, alsoLocking: others, queued: queued, prelude: { db in try await prelude(Repositories(sql: db, kind: kind)) }) { db, prior in
            try await body(Repositories(sql: db, kind: kind, recorded: recorded), prior)
        }
        if kind == .postgres, recorded.isSet { tellInstances() }
        return value
    }

    /// PostgreSQL: tells every instance's hub (its own too) that events were committed, after the
    /// commit and apart from it. While one is being told, commits meanwhile make one more, not one
    /// each. A notification lost (the process dies first) is made up by each hub's heartbeat read.
    private func tellInstances() {
        let start = telling.withLock { state -> Bool in
            if state.running {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        guard start else { return }
        let task = Task {
            repeat {
                try? await notify(SQLEventLogRepository.channel, payload: "")
            } while telling.withLock { state -> Bool in
                if state.again {
                    state.again = false
                    return true
                }
                state.running = false
                return false
            }
        }
        telling.withLock { $0.task = task }
    }

    /// SQLite: the statements its connections have prepared so far (nil on PostgreSQL). A statement
    /// kept prepared is not counted again when it runs again.
    var statementsPrepared: Int? { (engine as? SQLiteEngine)?.statementsPrepared }

    /// The SQL doors, below the repositories: for the schema, bulk loaders and tests.
    func sqlRead<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T { try await engine.read(body) }
    /// Every transaction is timed from the call to its commit, its wait for the writer (the
    /// first run's) recorded, and each run after the first counted as a retry.
    func sqlTransaction<T>(
        key: String? = nil, alsoLocking others: [String] = [], queued: Bool = false, _ body: (any SQLDatabase) async throws -> T
    ) async throws -> T {
        try await sqlTransaction(key: key, alsoLocking: others, queued: queued, prelude: { _ in () }) { db, _ in try await body(db) }
    }

    private func sqlTransaction<Prior, T>(
        key: String?, alsoLocking others: [String], queued: Bool, prelude: (any SQLDatabase) async throws -> Prior,
        _ body: (any SQLDatabase, Prior) async throws -> T
    ) async throws -> T {
        let asked = ContinuousClock.now
        var runs = 0
        defer { metrics.transactionDuration.recordNanoseconds(ServerMetrics.nanoseconds(ContinuousClock.now - asked)) }
        let value = try await engine.transaction(keys: Set((key.map { [$0] } ?? []) + others).sorted(), queued: queued, prelude: prelude) { db, prior in
            runs += 1
            if runs == 1 {
                metrics.writerWait.recordNanoseconds(ServerMetrics.nanoseconds(ContinuousClock.now - asked))
            } else {
                metrics.transactionRetries.increment()
            }
            return try await body(db, prior)
        }
        if kind == .sqlite { committed.withLock { $0 }?.call() }
        return value
    }

    /// Calls `handler` after each committed transaction (SQLite; see `committed`).
    func onCommit(_ handler: @escaping @Sendable () -> Void) {
        committed.withLock { $0 = CommitHook(call: handler) }
    }

    /// The commit handler, in a struct of its own. A bare closure (or a tuple holding one) kept in
    /// a `Mutex` is wrapped in one more reabstraction thunk each time `withLock` hands it out, and
    /// the wrapped closure is what stays stored (Swift 6.3): after n commits the call ran n thunks
    /// deep, so every write cost more than the one before (13 % of the server's CPU after some
    /// ten thousand writes), without bound. A struct is handed out as it is.
    struct CommitHook: Sendable {
        let call: @Sendable () -> Void
    }

    /// PostgreSQL: listens on `channels` until cancelled or the connection fails (see
    /// `PostgresEngine.listen`). SQLite has nothing to listen to: it returns at once.
    func listen(
        _ channels: [String], ready: @Sendable () -> Void, received: @escaping @Sendable (_ channel: String, _ payload: String) -> Void
    ) async throws {
        guard let engine = engine as? PostgresEngine else { return }
        try await engine.listen(channels, ready: ready, received: received)
    }

    /// PostgreSQL: tells every instance listening on `channel` (at once: no transaction).
    func notify(_ channel: String, payload: String) async throws {
        guard kind == .postgres else { return }
        _ = try await engine.lookup { db in try await db.raw("SELECT pg_notify(\(bind: channel), \(bind: payload))").run() }
    }
    func exclusive<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T { try await engine.exclusive(body) }

    /// For tools that load data in bulk outside the server's services (`make bench`): `body` runs
    /// alone on a connection, outside any transaction, and owns its SQL. The server never uses it.
    public func bulkLoad<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T { try await exclusive(body) }

    /// Fills the cancel-flow rollups again from every stored response, and refreshes the planner's
    /// statistics (after a bulk load).
    /// One transaction without the statement timeout requests have: millions of rows take longer.
    public func rebuildRollups() async throws {
        try await exclusive { db in
            if kind == .postgres { try await db.raw("SET statement_timeout = 0").run() }
            try await db.raw("BEGIN").run()
            do {
                try await Repositories(sql: db, kind: kind).cancelFlow.rebuildRollups()
                try await db.raw("COMMIT").run()
            } catch {
                try? await db.raw("ROLLBACK").run()
                throw error
            }
            try await db.raw("ANALYZE").run()
            if kind == .postgres { try await db.raw("RESET statement_timeout").run() }
        }
    }

    /// After a bulk write (an import): SQLite's search index merged into one b-tree. Each write
    /// transaction adds a segment to the FTS5 index and its automatic merging keeps several, and a
    /// search reads every segment for each trigram of its text: 14 segments in a million
    /// customers loaded at once made an email search cost 1.4 times as much. PostgreSQL's trigram
    /// indexes need nothing.
    public func compactSearchIndex() async throws {
        guard kind == .sqlite else { return }
        try await sqlTransaction { db in try await db.raw("INSERT INTO customer_search (customer_search) VALUES ('optimize')").run() }
    }

    /// The journal mode in force ("wal" on SQLite).
    public func journalMode() async throws -> String {
        guard kind == .sqlite else { return "" }
        return try await sqlRead { db in
            try await db.raw("PRAGMA journal_mode").first()?.decode(column: "journal_mode", as: String.self) ?? ""
        }
    }

    /// The migrations this build knows.
    var knownMigrations: Set<Int> { Set(Schema.migrations(for: kind).map(\.version)) }

    /// The migrations applied to the database (readiness; a fresh read each time).
    func appliedMigrations() async throws -> Set<Int> {
        try await sqlRead { db in
            Set(try await db.raw("SELECT version FROM schema_migrations").all().map { try $0.decode(column: "version", as: Int.self) })
        }
    }

    /// Applies the migrations not yet applied, each in its own transaction. Instances starting
    /// together on one PostgreSQL database take turns (a transaction-scoped advisory lock), so
    /// each migration runs once.
    private func migrate() async throws {
        // Up to date (the usual case for a second instance or a tool opening the same store):
        // nothing to write, so no write lock is taken.
        let versions = Set(Schema.migrations(for: kind).map(\.version))
        let applied = try? await sqlRead { db in
            try await db.raw("SELECT version FROM schema_migrations").all().map { try $0.decode(column: "version", as: Int.self) }
        }
        if let applied, versions.isSubset(of: Set(applied)) { return }
        try await sqlTransaction { db in
            if kind == .postgres { try await db.raw("SELECT pg_advisory_xact_lock(\(bind: Self.migrationLock))").run() }
            try await db.raw("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)").run()
        }
        for migration in Schema.migrations(for: kind) {
            let applied = try await sqlTransaction { db -> Bool in
                if kind == .postgres { try await db.raw("SELECT pg_advisory_xact_lock(\(bind: Self.migrationLock))").run() }
                let done = try await db.select().column("version").from("schema_migrations").where("version", .equal, migration.version).first()
                guard done == nil else { return false }
                for statement in migration.statements { try await db.raw(SQLQueryString(statement)).run() }
                let now = Int64(Date().timeIntervalSince1970)
                try await db.raw("INSERT INTO schema_migrations (version, applied_at) VALUES (\(bind: migration.version), \(bind: now))").run()
                return true
            }
            if applied { logger.info("applied migration", metadata: ["version": "\(migration.version)"]) }
        }
    }

    /// The advisory lock instances take to migrate one at a time.
    static let migrationLock: Int64 = 0x5341_5645_4445_534B  // "SAVEDESK"
}
