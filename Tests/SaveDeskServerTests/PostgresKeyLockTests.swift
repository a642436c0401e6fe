import Foundation
import Logging
import SQLKit
import Testing
import TestSupport

@testable import SaveDeskServer

/// When a keyed PostgreSQL transaction takes its keys' advisory locks (`PostgresEngine.KeysInFlight`):
/// not on a first run alone on its keys in its instance (the lock and its release were two of a
/// change's ten round trips), but beside another transaction of the same key here, and on every
/// run after a lost race, so that changes of one customer queue instead of racing again.
@Suite("PostgreSQL: a change's key locked when it has company", .enabled(if: TestDatabase.isPostgres))
struct PostgresKeyLockTests {
    static func open() async throws -> Store {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = try await TestDatabase.prepare(in: directory) + "?max_connections=2"
        return try await Store.open(path: path, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
    }

    /// The advisory locks this transaction's session holds now.
    static func locksHeld(_ db: any SQLDatabase) async throws -> Int {
        try await db.raw("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted")
            .first()?.decode(column: "n", as: Int.self) ?? -1
    }

    /// Fails the transaction as a serialization failure would (SQLSTATE 40001): it is run again.
    static func loseTheRace(_ db: any SQLDatabase) async throws {
        try await db.raw("DO $$ BEGIN RAISE EXCEPTION 'lost a race' USING ERRCODE = '40001'; END $$").run()
    }

    @Test func aChangeAloneOnItsKeyTakesNoLock() async throws {
        let store = try await Self.open()
        var held: [Int] = []
        for _ in 0..<3 { held.append(try await store.sqlTransaction(key: "customer:cus_a") { db in try await Self.locksHeld(db) }) }
        await store.close()
        #expect(held == [0, 0, 0])
    }

    @Test func aChangeBesideAnotherOfItsKeyTakesTheLock() async throws {
        let store = try await Self.open()
        let (entered, enter) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        let first = Task {
            try await store.sqlTransaction(key: "customer:cus_a") { db -> Int in
                enter.yield()
                for await _ in released { break }
                return try await Self.locksHeld(db)
            }
        }
        for await _ in entered { break }
        // The first is still in its body: this one has company, and the other key none.
        let second = try await store.sqlTransaction(key: "customer:cus_a") { db in try await Self.locksHeld(db) }
        release.yield()
        let alone = try await first.value
        let other = try await store.sqlTransaction(key: "customer:cus_b") { db in try await Self.locksHeld(db) }
        await store.close()
        #expect(alone == 0 && second == 1 && other == 0, "first \(alone), second \(second), another key \(other)")
    }

    @Test func aRunAfterALostRaceTakesTheLockAndReleasesIt() async throws {
        let store = try await Self.open()
        let held = Held()
        try await store.sqlTransaction(key: "customer:cus_a", alsoLocking: ["cancel-flow:rollups"]) { db in
            held.runs.append(try await Self.locksHeld(db))
            if held.runs.count == 1 { try await Self.loseTheRace(db) }
        }
        // The release: the next transaction finds no lock left on either connection (of this
        // test's database; other tests share the cluster).
        let after = try await store.sqlTransaction(key: "customer:cus_b") { db in
            try await db.raw("""
                SELECT count(*) AS n FROM pg_locks
                WHERE locktype = 'advisory' AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """).first()?.decode(column: "n", as: Int.self) ?? -1
        }
        await store.close()
        #expect(held.runs == [0, 2], "the first run without the two keys' locks, the second with both")
        #expect(after == 0)
    }

    /// A queued transaction (the cancel-flow fold's) always holds its key, alone or not, and runs
    /// REPEATABLE READ: no predicate locks, so the responses written beside it lose no race to it.
    @Test func aQueuedTransactionHoldsItsKeyAndRunsRepeatableRead() async throws {
        let store = try await Self.open()
        let (held, isolation) = try await store.sqlTransaction(key: CancelFlowRollups.lockKey, queued: true) { db in
            (try await Self.locksHeld(db),
             try await db.raw("SELECT current_setting('transaction_isolation') AS i").first()?.decode(column: "i", as: String.self) ?? "")
        }
        let change = try await store.sqlTransaction(key: "customer:cus_a") { db in
            try await db.raw("SELECT current_setting('transaction_isolation') AS i").first()?.decode(column: "i", as: String.self) ?? ""
        }
        await store.close()
        #expect(held == 1 && isolation == "repeatable read", "\(held) \(isolation)")
        #expect(change == "serializable")
    }

    /// What a transaction's runs saw, written by its body (runs are one after another).
    final class Held: @unchecked Sendable {
        var runs: [Int] = []
    }
}
