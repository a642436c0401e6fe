import Foundation
import Logging
import SQLKit
import Synchronization

/// The embedded engine: one SQLite database (WAL, foreign keys on, `synchronous=FULL` so an
/// acknowledged change survives power loss), for one server process.
///
/// One writer connection and a pool of read-only connections. `read` borrows a reader, so reads
/// run side by side and never wait for a write. `transaction` runs its body on the writer, alone,
/// in a group transaction (each body after the group's first inside a savepoint of its own):
/// while other transactions wait their turn, the group stays open and the last of them commits
/// for all (group commit), so one fsync acknowledges several requests. A body that fails rolls
/// back to its savepoint (the first, the whole transaction) and leaves the others intact;
/// nobody's `transaction` returns before the COMMIT that holds its work, so a change, its audit
/// row and its idempotency record are durable together or not at all.
final class SQLiteEngine: StoreEngine {
    /// The writer, on its own thread (`SQLiteThreadConnection`). A transaction runs on that
    /// thread, not only its statements: each statement was a hop to that thread and one back,
    /// and a change runs a dozen.
    private let writer: SQLiteThreadConnection
    private let gate = SerialGate()
    /// Read-only connections, each on a thread of its own; a read runs on its connection's.
    private let readers: ReaderPool
    /// Copies committed pages from the WAL into the database, on a connection and thread of its
    /// own, after commits (at most `checkpointPause` apart). The writer checkpoints only past
    /// `writerCheckpointPages`: a checkpoint writes and syncs the database file, and done by the
    /// writer (SQLite's default, every 1,000 pages) it held up every change waiting behind it.
    private let checkpointer: Checkpointer
    /// The writer's open group transaction: the members waiting for its COMMIT. Touched only by
    /// the gate's holder.
    private let group = Mutex<Group?>(nil)
    /// Transactions begun and not yet at the gate (on their way to the writer's thread).
    private let arriving = Atomic<Int>(0)
    let logger: Logger

    /// Savepoints one COMMIT may hold before it is written regardless of who waits.
    static let groupLimit = 64
    /// Read-only connections.
    static let readerCount = 4
    /// Each connection's page cache (KiB) and memory-mapped window (bytes): reads come from
    /// memory rather than a read(2) per page.
    static let cacheKiB = 16_384, mmapBytes = 256 << 20
    /// WAL pages past which the writer checkpoints itself (a checkpointer that cannot keep up, or
    /// readers that keep it from finishing): the WAL's bound.
    static let writerCheckpointPages = 10_000
    /// The least time between two of the checkpointer's runs.
    static let checkpointPause = Duration.milliseconds(200)

    private struct Group {
        var members: [CheckedContinuation<Void, any Error>] = []
        var savepoints = 0
    }

    private init(writer: SQLiteThreadConnection, readers: [SQLiteThreadConnection], checkpointer: Checkpointer, logger: Logger) {
        self.writer = writer
        self.checkpointer = checkpointer
        self.readers = ReaderPool(readers)
        self.logger = logger
    }

    var kind: Store.Kind { .sqlite }

    private var sql: any SQLDatabase { SQLiteThreadDatabase(connection: writer) }

    /// Opens (creating if needed) the database at `path`.
    static func open(path: String, durability: Store.Durability, logger: Logger) async throws -> SQLiteEngine {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var opened: [SQLiteThreadConnection] = []
        /// A connection with its settings: how long it waits for another's lock, its memory.
        func connect() async throws -> SQLiteThreadDatabase {
            let connection: SQLiteThreadConnection
            do {
                connection = try await SQLiteThreadConnection.open(path: path, logger: logger)
            } catch {
                throw SaveDeskError(status: 500, code: "database_unavailable", "cannot open the database at \(path): \(error)")
            }
            opened.append(connection)
            let db = SQLiteThreadDatabase(connection: connection)
            try await db.raw("PRAGMA busy_timeout=5000").run()
            try await db.raw(SQLQueryString("PRAGMA cache_size=-\(unsafeRaw: String(cacheKiB))")).run()
            _ = try await db.raw(SQLQueryString("PRAGMA mmap_size=\(unsafeRaw: String(mmapBytes))")).all()
            return db
        }
        do {
            let db = try await connect()
            _ = try await db.raw("PRAGMA journal_mode=WAL").all()
            try await db.raw("PRAGMA foreign_keys=ON").run()
            try await db.raw(SQLQueryString("PRAGMA synchronous=\(unsafeRaw: durability.rawValue)")).run()
            try await db.raw(SQLQueryString("PRAGMA wal_autocheckpoint=\(unsafeRaw: String(writerCheckpointPages))")).run()
            for _ in 0..<readerCount {
                try await connect().raw("PRAGMA query_only=ON").run()
            }
            let checkpointing = try await connect()
            try await checkpointing.raw(SQLQueryString("PRAGMA synchronous=\(unsafeRaw: durability.rawValue)")).run()
            let checkpointer = Checkpointer(db: checkpointing, pause: checkpointPause, logger: logger)
            return SQLiteEngine(writer: opened[0], readers: Array(opened[1...readerCount]), checkpointer: checkpointer, logger: logger)
        } catch {
            for connection in opened { await connection.close() }
            throw error
        }
    }

    func close() async {
        await gate.acquire()
        try? await commitGroup()
        await readers.close()
        await checkpointer.close()
        await writer.close()
        gate.release()
    }

    /// Statements the writer and the readers have prepared, again or anew.
    var statementsPrepared: Int { writer.preparations.load(ordering: .relaxed) + readers.preparations }

    /// Runs `body` on a read-only connection of its own (reads; a write there fails), on that
    /// connection's thread.
    func read<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        let reader = await readers.borrow()
        defer { readers.giveBack(reader) }
        return try await withTaskExecutorPreference(reader.executor) { try await body(SQLiteThreadDatabase(connection: reader)) }
    }

    /// Runs `body` alone on the writer, outside any transaction (schema work; tests).
    func exclusive<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        await gate.acquire()
        do {
            try await commitGroup()
            let result = try await body(sql)
            checkpointer.committed()
            gate.release()
            return result
        } catch {
            gate.release()
            throw error
        }
    }

    /// Runs `body` alone in one transaction, committed (perhaps with others' transactions) before
    /// this returns. The one writer queues every transaction, `queued` or not.
    func transaction<Prior, T>(
        keys: [String], queued: Bool, prelude: (any SQLDatabase) async throws -> Prior, _ body: (any SQLDatabase, Prior) async throws -> T
    ) async throws -> T {
        arriving.add(1, ordering: .relaxed)
        return try await withTaskExecutorPreference(writer.executor) { try await inGroup { db in try await body(db, try await prelude(db)) } }
    }

    private func inGroup<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        arriving.subtract(1, ordering: .relaxed)
        await gate.acquire()
        let db = sql
        let value: T
        do {
            // The group's first member needs no savepoint: if it fails, the transaction holds
            // nothing else and is rolled back whole. A savepoint makes SQLite copy each page a
            // statement changes into the statement journal once more, for as long as it is open
            // (an import's batch of 1,000 rows: its whole transaction).
            let first = group.withLock { $0 == nil }
            if first {
                try await db.raw("BEGIN IMMEDIATE").run()
                group.withLock { $0 = Group() }
            } else {
                try await db.raw("SAVEPOINT member").run()
            }
            do {
                value = try await body(db)
                if !first { try await db.raw("RELEASE member").run() }
            } catch {
                if first {
                    // The body's error is the answer. A ROLLBACK that finds no transaction (SQLite
                    // ended it on some errors) has nothing left to undo.
                    group.withLock { $0 = nil }
                    try? await db.raw("ROLLBACK").run()
                } else {
                    try await db.raw("ROLLBACK TO member").run()
                    try await db.raw("RELEASE member").run()
                }
                throw error
            }
        } catch {
            // A failed body (or a broken connection): nothing of this body stays. The group it
            // joined is still committed by someone, so the others are not left waiting.
            try? await endTurn(joined: false)
            throw error
        }
        group.withLock { $0?.savepoints += 1 }
        try await endTurn(joined: true)
        return value
    }

    /// Ends the gate holder's turn: hands the gate on while others wait and the group has room
    /// (the last of them commits), else commits now. A holder whose work `joined` the group
    /// returns once the group's COMMIT is written, or throws its error.
    private func endTurn(joined: Bool) async throws {
        let full = group.withLock { ($0?.savepoints ?? 0) >= Self.groupLimit }
        if !full, joined, !gate.hasWaiters, arriving.load(ordering: .relaxed) > 0 {
            // Transactions on their way to the gate wait in the writer thread's queue behind this
            // turn, which ran without a pause: let them reach the gate, so this group's COMMIT
            // (one fsync) is theirs too rather than this one's alone.
            await Task.yield()
        }
        if !full, gate.hasWaiters {
            guard joined else { return gate.release() }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                group.withLock { $0?.members.append(continuation) }
                gate.release()
            }
            return
        }
        do {
            try await commitGroup()
        } catch {
            gate.release()
            throw error
        }
        gate.release()
    }

    /// Commits the open group, if any, and tells its members. Called by the gate's holder.
    private func commitGroup() async throws {
        guard let open = group.withLock({ state -> Group? in defer { state = nil }; return state }) else { return }
        do {
            try await sql.raw("COMMIT").run()
            checkpointer.committed()
        } catch {
            try? await sql.raw("ROLLBACK").run()
            for member in open.members { member.resume(throwing: error) }
            throw error
        }
        for member in open.members { member.resume() }
    }
}

/// Runs SQLite's checkpoints apart from the writer: after commits, a PASSIVE checkpoint on its own
/// connection copies what the WAL holds into the database file and syncs it, while the writer
/// goes on (PASSIVE waits for no lock; readers still reading older pages only make it stop short,
/// and the next run goes on from there).
final class Checkpointer: Sendable {
    private let db: SQLiteThreadDatabase
    private let due: AsyncStream<Void>.Continuation
    private let runs: Task<Void, Never>

    /// `db`: a connection of its own (`SQLiteThreadDatabase`), closed with the checkpointer.
    init(db: SQLiteThreadDatabase, pause: Duration, logger: Logger) {
        self.db = db
        let (commits, due) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.due = due
        runs = Task {
            for await _ in commits {
                do {
                    _ = try await db.raw("PRAGMA wal_checkpoint(PASSIVE)").all()
                } catch is CancellationError {
                    // The store is closing (`close`): nothing failed.
                } catch {
                    logger.warning("SQLite checkpoint failed; the writer checkpoints past its bound", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: pause)
            }
        }
    }

    /// Something was committed: a checkpoint is due (one run for any number of commits meanwhile).
    func committed() { due.yield() }

    /// Stops after the run under way (not waiting out its pause), and closes the connection.
    func close() async {
        due.finish()
        runs.cancel()
        await runs.value
        await db.connection.close()
    }
}
