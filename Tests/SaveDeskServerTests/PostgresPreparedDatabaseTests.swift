import Foundation
import Logging
import SQLKit
import Testing
import TestSupport

@testable import SaveDeskServer

/// A PostgreSQL transaction's statements are prepared once on each connection and then only
/// bound and run (`PostgresPreparedDatabase`). Each store here has one connection, so every
/// transaction runs on the same one.
@Suite("PostgreSQL: statements prepared once per connection", .enabled(if: TestDatabase.isPostgres))
struct PostgresPreparedDatabaseTests {
    static func open() async throws -> Store {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = try await TestDatabase.prepare(in: directory) + "?max_connections=1"
        let store = try await Store.open(path: path, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        try await store.transaction { data in try await data.customers.insert(CustomerRecord.new(id: "cus_a", livemode: false, at: 0)) }
        return store
    }

    static func lookUp(_ db: any SQLDatabase) async throws -> [String] {
        try await db.select().column("id").from("customers").where("id", .equal, "cus_a").all().map { try $0.decode(column: "id", as: String.self) }
    }

    /// The statements this connection has prepared: their text and how often each was run.
    static func prepared(_ store: Store) async throws -> [(statement: String, runs: Int)] {
        try await store.sqlTransaction { db in
            try await db.raw("SELECT statement, generic_plans + custom_plans AS runs FROM pg_prepared_statements WHERE name LIKE 'savedesk_%'")
                .all().map { (try $0.decode(column: "statement", as: String.self), try $0.decode(column: "runs", as: Int.self)) }
        }
    }

    @Test func aStatementAskedAgainIsRunAsPreparedOnItsConnection() async throws {
        let store = try await Self.open()
        for _ in 0..<3 { #expect(try await store.sqlTransaction(key: "customer:cus_a") { db in try await Self.lookUp(db) } == ["cus_a"]) }
        let prepared = try await Self.prepared(store)
        await store.close()
        let lookup = prepared.filter { $0.statement.contains(#"FROM "customers""#) }
        #expect(lookup.count == 1 && lookup.first?.runs == 3, "\(prepared)")
    }

    /// A keyed transaction's own two statements, its key's session lock and the release, are
    /// prepared too: PostgreSQL parsed and planned each on every change. (They are taken by a run
    /// after a lost race, here the second of each: see `PostgresKeyLockTests`.)
    @Test func aKeyedTransactionsLockAndReleaseAreRunAsPrepared() async throws {
        let store = try await Self.open()
        for _ in 0..<3 {
            var runs = 0
            _ = try await store.sqlTransaction(key: "customer:cus_a") { db in
                runs += 1
                if runs == 1 { try await PostgresKeyLockTests.loseTheRace(db) }
                return try await Self.lookUp(db)
            }
        }
        let prepared = try await Self.prepared(store)
        await store.close()
        let lock = prepared.filter { $0.statement.contains("pg_advisory_lock(") }
        let release = prepared.filter { $0.statement.contains("pg_advisory_unlock_all()") }
        #expect(lock.count == 1 && lock.first?.runs == 3, "\(prepared)")
        #expect(release.count == 1 && release.first?.runs == 3, "\(prepared)")
    }

    /// A lookup (the fingerprint an Idempotency-Key is bound to, read before every change) and the
    /// notification after a change are prepared like a transaction's statements; any other read (a search, a range of days) is
    /// planned on each run for its values.
    @Test func aLookupIsRunAsPreparedAndOtherReadsAreNot() async throws {
        let store = try await Self.open()
        for _ in 0..<3 {
            _ = try await store.lookup { data in
                try await data.idempotency.fingerprint(key: "k", operation: "submitCancelFlowResponse", principal: "app", storedAfter: 0)
            }
            _ = try await store.read { data in try await data.customers.find(id: "cus_a") }
            try await store.notify("savedesk_test", payload: "")
        }
        let prepared = try await Self.prepared(store)
        await store.close()
        let lookup = prepared.filter { $0.statement.contains(#"FROM "idempotency_records""#) }
        #expect(lookup.count == 1 && lookup.first?.runs == 3, "\(prepared)")
        let notification = prepared.filter { $0.statement.contains("pg_notify(") }
        #expect(notification.count == 1 && notification.first?.runs == 3, "\(prepared)")
        #expect(!prepared.contains { $0.statement.contains(#"FROM "customers""#) }, "\(prepared)")
    }

    /// A report (the funnel's sums over rollups and rows) is prepared and planned once for any
    /// values from its first run: PostgreSQL planned the funnel of a week anew for each run's
    /// values, which cost more than running it. It answers as a plain read does, and the
    /// connection's plan mode is set back after it, after a report that failed too (a search on
    /// the connection later is planned for its own values again).
    @Test func aReportIsPlannedOnceForAnyValuesAndLeavesItsConnectionAsItWas() async throws {
        struct Refused: Error {}
        let store = try await Self.open()
        try await store.transaction { data in
            for n in 0..<20 {
                try await data.cancelFlow.insert(CancelFlowResponseRow(
                    id: "cr_\(n)", customerId: "cus_a", productId: "premium_monthly", outcome: n % 3 == 0 ? "cancelled" : "retained",
                    offerShown: true, offerAccepted: n % 3 != 0, pauseShown: false, pauseAccepted: false, pauseDurationDays: nil,
                    lastStepSeen: 2, answers: [.init(questionId: 1, optionId: 11, freeText: "why \(n)")], answersJSON: "[]", variantId: nil,
                    actor: "app", livemode: false, createdAt: Int64(n) * 7_200
                ))
            }
        }
        try await store.transaction { data in _ = try await data.cancelFlow.foldUnrolled(livemode: false, first: 10) }
        func figures(_ data: Repositories, days: Int64) async throws -> CancelFlowFigures {
            try await data.cancelFlow.figures(livemode: false, from: 1_800, to: days * 86_400 + 3_900, actor: nil, samplesOf: [1], samples: 3)
        }
        var reported: [CancelFlowFigures] = [], read: [CancelFlowFigures] = []
        for days in 1...3 as ClosedRange<Int64> {
            reported.append(try await store.report { data in try await figures(data, days: days) })
            read.append(try await store.read { data in try await figures(data, days: days) })
        }
        await #expect(throws: Refused.self) { try await store.report { data in _ = try await figures(data, days: 4); throw Refused() } }
        let mode = try await store.sqlRead { db in try await db.raw("SHOW plan_cache_mode").first()?.decode(column: "plan_cache_mode", as: String.self) }
        let plans = try await store.sqlRead { db in
            // The funnel's one statement per shape of range: a day's has no whole day in it.
            try await db.raw("""
                SELECT generic_plans, custom_plans FROM pg_prepared_statements
                WHERE statement LIKE 'SELECT (SELECT CAST(coalesce(json_agg(q)%' ORDER BY generic_plans
                """).all()
                .map { [try $0.decode(column: "generic_plans", as: Int.self), try $0.decode(column: "custom_plans", as: Int.self)] }
        }
        await store.close()
        #expect(reported == read)
        #expect(reported.map { $0.outcomes["app"]?.values.reduce(0, +) ?? 0 } == [12, 19, 19], "\(reported.map(\.outcomes))")
        #expect(plans == [[1, 0], [3, 0]], "two statements (one day; more), each run on its one generic plan")
        #expect(mode == "auto")
    }

    /// A schema statement runs once (a migration's) and is not kept prepared: the store's one
    /// connection, which ran every migration, holds none.
    @Test func schemaStatementsAreNotKeptPrepared() async throws {
        let store = try await Self.open()
        try await store.sqlTransaction { db in try await db.raw("CREATE TABLE scratch (n BIGINT)").run() }
        let prepared = try await Self.prepared(store)
        await store.close()
        #expect(!prepared.isEmpty, "the migrations' bookkeeping reads are prepared")
        let schema = prepared.filter { ["CREATE", "ALTER", "DROP"].contains($0.statement.prefix { $0 != " " }.uppercased()) }
        #expect(schema.isEmpty, "\(schema.count) kept, as \(schema.prefix(3).map(\.statement))")
    }

    /// A transaction's body runs on its connection's event loop, where PostgresNIO writes each
    /// statement and reads its answer: no thread is woken per statement.
    @Test func aTransactionRunsOnItsConnectionsEventLoop() async throws {
        let store = try await Self.open()
        let onLoop = try await store.sqlTransaction { db in
            let before = db.eventLoop.inEventLoop
            _ = try await Self.lookUp(db)
            return before && db.eventLoop.inEventLoop
        }
        await store.close()
        #expect(onLoop)
    }

    /// A statement's name holds its values' types: one first run with NULL (PostgreSQL then takes
    /// the column's type, a 4-byte integer here) does not bind a later 8-byte integer to it.
    @Test func theSameTextWithValuesOfAnotherTypeIsAStatementOfItsOwn() async throws {
        let store = try await Self.open()
        try await store.sqlTransaction { db in try await db.raw("CREATE TABLE scratch (n INTEGER)").run() }
        for value in [nil, 7, nil, 8] as [Int?] {
            try await store.sqlTransaction { db in try await db.insert(into: "scratch").columns("n").values(SQLBind(value)).run() }
        }
        let stored = try await store.sqlRead { db in try await db.raw("SELECT n FROM scratch ORDER BY n").all().map { try $0.decode(column: "n", as: Int?.self) } }
        await store.close()
        #expect(stored == [7, 8, nil, nil])
    }

    /// A statement first asked inside a transaction that an error already aborted fails to
    /// prepare, and PostgresNIO keeps that failure for its name on the connection. The connection
    /// is closed, so the next transaction (on a fresh one) runs the statement.
    @Test func aStatementThatFailedToPrepareDoesNotSpoilItsNameForLater() async throws {
        let store = try await Self.open()
        await #expect(throws: (any Error).self) {
            try await store.sqlTransaction { db in
                _ = try? await db.raw("SELECT 1 / 0").run()
                return try await Self.lookUp(db)
            }
        }
        let later = try await store.sqlTransaction { db in try await Self.lookUp(db) }
        await store.close()
        #expect(later == ["cus_a"])
    }

    /// A fold of the responses listed for the rollups reads the listed ones by key, and its
    /// statements are planned when they run, not kept prepared: a plan kept from a smaller table
    /// (a new database's few rows) scanned all of it as it grew, and a join of the list let the
    /// planner hash the list and scan every response and answer, so a fold cost what the tables
    /// held, not what it folded.
    @Test func aFoldReadsTheListedResponsesByKeyAndIsPlannedWhenItRuns() async throws {
        let store = try await Self.open()
        func row(_ n: Int) -> CancelFlowResponseRow {
            CancelFlowResponseRow(
                id: "cr_\(n)", customerId: "cus_a", productId: "premium_monthly", outcome: "retained", offerShown: true,
                offerAccepted: n % 2 == 0, pauseShown: false, pauseAccepted: false, pauseDurationDays: nil, lastStepSeen: 2,
                answers: [.init(questionId: 1, optionId: 11, freeText: nil), .init(questionId: 2, optionId: nil, freeText: "why \(n)")],
                answersJSON: "[]", variantId: nil, actor: "app", livemode: false, createdAt: Int64(n)
            )
        }
        try await store.transaction { data in for n in 0..<3_000 { try await data.cancelFlow.insert(row(n)) } }
        try await store.transaction { data in _ = try await data.cancelFlow.foldUnrolled(livemode: false, first: 5_000) }
        for n in 3_000..<3_005 { try await store.transaction { data in try await data.cancelFlow.insert(row(n)) } }
        try await store.sqlTransaction { db in try await db.raw("ANALYZE").run() }
        let plans = try await store.sqlTransaction { db in
            var plans: [String] = []
            for source in [Schema.unrolledResponses(.postgres, livemode: false, first: 128), Schema.unrolledAnswers(.postgres, livemode: false, first: 128)] {
                let lines = try await db.raw(SQLQueryString("EXPLAIN SELECT count(*) FROM \(source)")).all()
                plans.append(try lines.map { try $0.decode(column: "QUERY PLAN", as: String.self) }.joined(separator: "\n"))
            }
            return plans
        }
        let folded = try await store.transaction { data in try await data.cancelFlow.foldUnrolled(livemode: false, first: 128) }
        let prepared = try await Self.prepared(store)
        await store.close()
        #expect(folded == 5)
        for plan in plans { #expect(!plan.contains("Seq Scan on cancel_flow_responses") && !plan.contains("Seq Scan on cancel_flow_answers"), "\(plan)") }
        let kept = prepared.filter { $0.statement.contains("FROM cancel_flow_unrolled WHERE livemode") }
        #expect(kept.isEmpty, "\(kept.count) kept, as \(kept.prefix(2).map(\.statement))")
    }
}
