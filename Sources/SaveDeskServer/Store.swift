import Foundation
import Logging
import NIOCore
import SQLKit
import SQLiteKit

/// The durable store: one SQLite database (WAL, foreign keys on, `synchronous=FULL` so an
/// acknowledged change survives power loss), written through SQLKit so the same SQL can run on
/// PostgreSQL. Work runs one unit at a time: `transaction` wraps its body in
/// BEGIN/COMMIT (ROLLBACK on any error), so a change, its audit row and its idempotency record
/// are written together or not at all.
public final class Store: Sendable {
    private let connection: SQLiteConnection
    private let gate = SerialGate()
    let logger: Logger
    /// The database file; its folder is the server's data directory.
    let path: String

    private init(connection: SQLiteConnection, path: String, logger: Logger) {
        self.connection = connection
        self.path = path
        self.logger = logger
    }

    var sql: any SQLDatabase { connection.sql(queryLogLevel: nil) }

    /// How SQLite flushes a commit. `full` syncs the WAL on every commit (survives power loss);
    /// `normal` only at checkpoints (survives a crash of the process, not of the machine). Only
    /// `make bench` uses `normal`, to show what `full` costs.
    public enum Durability: String, Sendable {
        case full = "FULL", normal = "NORMAL"
    }

    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    public static func open(path: String, durability: Durability = .full, logger: Logger) async throws -> Store {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        } catch {
            throw SaveDeskError(status: 500, code: "database_unavailable", "cannot open the database at \(path): \(error)")
        }
        let store = Store(connection: connection, path: path, logger: logger)
        try await store.exclusive { db in
            _ = try await db.raw("PRAGMA journal_mode=WAL").all()
            try await db.raw("PRAGMA foreign_keys=ON").run()
            try await db.raw("PRAGMA busy_timeout=5000").run()
            try await db.raw(SQLQueryString("PRAGMA synchronous=\(unsafeRaw: durability.rawValue)")).run()
        }
        try await store.migrate()
        return store
    }

    public func close() async {
        try? await connection.close()
    }

    /// The journal mode in force ("wal").
    public func journalMode() async throws -> String {
        try await exclusive { db in
            try await db.raw("PRAGMA journal_mode").first()?.decode(column: "journal_mode", as: String.self) ?? ""
        }
    }

    /// Runs `body` alone on the connection, outside a transaction (reads).
    func exclusive<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        await gate.acquire()
        do {
            let result = try await body(sql)
            await gate.release()
            return result
        } catch {
            await gate.release()
            throw error
        }
    }

    /// Runs `body` alone in one transaction.
    func transaction<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await exclusive { db in
            try await db.raw("BEGIN").run()
            do {
                let result = try await body(db)
                try await db.raw("COMMIT").run()
                return result
            } catch {
                try? await db.raw("ROLLBACK").run()
                throw error
            }
        }
    }

    private func migrate() async throws {
        try await exclusive { db in
            try await db.raw("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)").run()
        }
        let applied = try await exclusive { db in
            Set(try await db.raw("SELECT version FROM schema_migrations").all().map { try $0.decode(column: "version", as: Int.self) })
        }
        for migration in Schema.migrations where !applied.contains(migration.version) {
            try await transaction { db in
                for statement in migration.statements { try await db.raw(SQLQueryString(statement)).run() }
                let now = Int64(Date().timeIntervalSince1970)
                try await db.raw("INSERT INTO schema_migrations (version, applied_at) VALUES (\(bind: migration.version), \(bind: now))").run()
            }
            logger.info("applied migration", metadata: ["version": "\(migration.version)"])
        }
    }
}
