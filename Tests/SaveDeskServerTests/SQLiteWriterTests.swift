import Foundation
import Logging
import SQLKit
import Testing

@testable import SaveDeskServer

/// The SQLite writer's own connection (`SQLiteWriterConnection`): it reads and binds as the
/// readers (SQLiteNIO) do, keeps its statements prepared without going stale, and stays usable
/// after an error, whether a statement comes from a transaction on the writer's thread or from
/// anywhere else.
@Suite("SQLite: the writer's connection")
struct SQLiteWriterTests {
    static func open() async throws -> Store {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-writer-\(UUID())")
        return try await Store.open(
            path: directory.appendingPathComponent("savedesk.sqlite").path, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
    }

    /// What one row holds, read through SQLKit's row.
    struct Read: Equatable {
        var columns: [String]
        var integer: Int, real: Double, text: String, blob: Data, null: Bool, again: Int, missing: Bool

        init(_ row: any SQLRow) throws {
            columns = row.allColumns
            integer = try row.decode(column: "i", as: Int.self)
            real = try row.decode(column: "r", as: Double.self)
            text = try row.decode(column: "t", as: String.self)
            blob = try row.decode(column: "b", as: Data.self)
            null = try row.decodeNil(column: "n") && (try row.decode(column: "n", as: String?.self)) == nil
            again = try row.decode(column: "dup", as: Int.self)
            missing = !row.contains(column: "absent") && (try? row.decode(column: "absent", as: Int.self)) == nil
        }
    }

    @Test func theWriterReadsAndBindsAsTheReadersDo() async throws {
        let store = try await Self.open()
        let text = "naïve ✓ \"quoted\" 'single' \u{1F600}"
        let blob = Data([0, 1, 0x7F, 0xFF, 0])
        let select = SQLQueryString("SELECT i, r, t, b, n, i AS dup, r AS dup FROM kinds")
        let onWriter = try await store.sqlTransaction { db in
            try await db.raw("CREATE TABLE kinds (i INTEGER, r REAL, t TEXT, b BLOB, n TEXT)").run()
            try await db.raw("""
                INSERT INTO kinds (i, r, t, b, n) VALUES (\(bind: Int.max), \(bind: -1.5), \(bind: text), \(bind: blob), \(bind: String?.none))
                """).run()
            return try Read(try #require(try await db.raw(select).first()))
        }
        let onReader = try await store.sqlRead { db in try Read(try #require(try await db.raw(select).first())) }
        #expect(onWriter == onReader)
        #expect(onWriter.columns == ["i", "r", "t", "b", "n", "dup", "dup"])
        #expect(onWriter.integer == Int.max && onWriter.real == -1.5 && onWriter.text == text && onWriter.blob == blob)
        #expect(onWriter.null && onWriter.again == Int.max && onWriter.missing, "a name twice reads its first column")
        await store.close()
    }

    /// A statement kept prepared and run again after the schema changed answers with the new
    /// columns (SQLite prepares it again; the connection names its columns again).
    @Test func aKeptStatementSeesTheSchemaAsItIsNow() async throws {
        let store = try await Self.open()
        let columns = try await store.exclusive { db in
            try await db.raw("CREATE TABLE shapes (a INTEGER)").run()
            try await db.raw("INSERT INTO shapes (a) VALUES (1)").run()
            let before = try #require(try await db.raw("SELECT * FROM shapes").first()).allColumns
            try await db.raw("ALTER TABLE shapes ADD COLUMN b INTEGER NOT NULL DEFAULT 7").run()
            let row = try #require(try await db.raw("SELECT * FROM shapes").first())
            return (before, row.allColumns, try row.decode(column: "b", as: Int.self))
        }
        #expect(columns.0 == ["a"])
        #expect(columns.1 == ["a", "b"] && columns.2 == 7)
        await store.close()
    }

    /// A statement that fails (a key taken) is an error with SQLite's words; the same statement
    /// runs again at once, and the transaction it failed in left nothing behind.
    @Test func aFailedStatementLeavesTheConnectionWorking() async throws {
        let store = try await Self.open()
        try await store.exclusive { db in try await db.raw("CREATE TABLE keyed (k TEXT PRIMARY KEY)").run() }
        try await store.sqlTransaction { db in try await db.raw("INSERT INTO keyed (k) VALUES (\(bind: "x"))").run() }
        await #expect { try await store.sqlTransaction { db in
            try await db.raw("INSERT INTO keyed (k) VALUES (\(bind: "y"))").run()
            try await db.raw("INSERT INTO keyed (k) VALUES (\(bind: "x"))").run()
        } } throws: { error in "\(error)".contains("UNIQUE") }
        try await store.sqlTransaction { db in try await db.raw("INSERT INTO keyed (k) VALUES (\(bind: "z"))").run() }
        let keys = try await store.sqlRead { db in
            try await db.raw("SELECT k FROM keyed ORDER BY k").all().map { try $0.decode(column: "k", as: String.self) }
        }
        #expect(keys == ["x", "z"])
        await store.close()
    }

    /// More distinct statements than the connection keeps prepared: each still answers, and the
    /// first ones again after the others pushed them out.
    @Test func moreStatementsThanItKeeps() async throws {
        let store = try await Self.open()
        let count = SQLiteWriterConnection.statementLimit * 2 + 5
        let answers = try await store.sqlTransaction { db in
            var answers: [Int] = []
            for round in 0..<2 {
                for n in 0..<count where round == 0 || n < 3 {
                    let row = try #require(try await db.raw(SQLQueryString("SELECT \(unsafeRaw: String(n)) + \(bind: 1) AS n")).first())
                    answers.append(try row.decode(column: "n", as: Int.self))
                }
            }
            return answers
        }
        #expect(answers == Array(1...count) + [1, 2, 3])
        await store.close()
    }

    /// The statements the writer serializes are the ones SQLiteKit would: the same text and binds
    /// for each kind of statement the repositories build.
    @Test func theWriterSerializesAsSQLiteKitDoes() async throws {
        let store = try await Self.open()
        func statements(_ db: any SQLDatabase) -> [any SQLExpression] {
            [
                db.insert(into: "audit_events").columns("id", "at", "we\"ird").values(SQLBind("a"), SQLBind(1), SQLBind(String?.none))
                    .onConflict(with: ["id"]) { $0.set(excludedValueOf: "at") }.query,
                db.select().column("id").column(SQLColumn("n", table: "t"), as: "count").from("customers")
                    .join(SQLAlias(SQLIdentifier("subscriptions"), as: SQLIdentifier("s")), method: SQLJoinMethod.left,
                          on: SQLColumn("customer_id", table: "s"), .equal, SQLColumn("id", table: "customers"))
                    .where("livemode", .equal, SQLBind(false)).where("name", .like, "%a%").orderBy("created_at", .descending)
                    .groupBy("id").limit(15).offset(30).query,
                db.update("subscriptions").set("status", to: "paused").set("paused_at", to: SQLBind(5)).where("id", .in, ["a", "b"]).query,
                db.delete(from: "idempotency_records").where("created_at", .lessThan, 10).returning("idempotency_key").query,
                db.create(table: "scratch").ifNotExists().column("id", type: .bigint, .primaryKey(autoIncrement: true))
                    .column("body", type: .text, .notNull, .default("x")).query,
                db.drop(table: "scratch").ifExists().query,
                SQLQueryString("SELECT \(ident: "a\"b") FROM \(ident: "t") WHERE x = \(bind: 1) AND y = \(literal: "it's")"),
            ]
        }
        func serialized(_ db: any SQLDatabase) -> [String] {
            statements(db).map { db.serialize($0) }.map { "\($0.sql) · \($0.binds.count) binds" }
        }
        let writer = try await store.exclusive { db in serialized(db) }
        let reader = try await store.sqlRead { db in serialized(db) }
        #expect(writer == reader)
        #expect(writer.contains { $0.contains(#""we""ird""#) } && writer.contains { $0.contains(#""a""b""#) })
        await store.close()
    }

    /// A name with a double quote in it (none of the server's has one) is quoted, not cut short:
    /// a table and a column so named are made, written and read through SQLKit's builders.
    @Test func aNameWithADoubleQuoteStaysOneName() async throws {
        let store = try await Self.open()
        let table = #"odd" (x) ; --"#, column = #"col""umn"#
        let read = try await store.sqlTransaction { db in
            try await db.create(table: table).column(column, type: .text).column("n", type: .int).run()
            try await db.insert(into: table).columns(column, "n").values(SQLBind("kept"), SQLBind(1)).run()
            return try await db.select().column(column).from(table).where(column, .equal, "kept").all()
                .map { try $0.decode(column: column, as: String.self) }
        }
        #expect(read == ["kept"])
        let tables = try await store.sqlRead { db in
            try await db.raw("SELECT name FROM sqlite_master WHERE type = 'table'").all().map { try $0.decode(column: "name", as: String.self) }
        }
        #expect(tables.contains(table))
        await store.close()
    }
}
