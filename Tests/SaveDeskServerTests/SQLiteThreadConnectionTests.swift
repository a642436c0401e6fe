import Foundation
import Logging
import SQLKit
import SQLiteKit
import Testing

@testable import SaveDeskServer

/// The store's own SQLite connections (`SQLiteThreadConnection`), the writer's and the readers':
/// they read and bind as SQLiteNIO and SQLiteKit do, keep their statements prepared without going
/// stale, and stay usable after an error, whether a statement comes from a transaction or read on
/// the connection's thread or from anywhere else.
@Suite("SQLite: the store's own connections")
struct SQLiteThreadConnectionTests {
    static let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    static func open() async throws -> Store {
        try await open(at: path())
    }

    static func path() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-connections-\(UUID())/savedesk.sqlite").path
    }

    static func open(at path: String) async throws -> Store {
        try await Store.open(path: path, logger: logger)
    }

    /// `body` on a connection of SQLiteNIO's own to the database at `path` (SQLiteKit's database).
    static func withSQLiteKit<T>(_ path: String, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
        let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
        do {
            let value = try await body(connection.sql(queryLogLevel: nil))
            try await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
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

    @Test func theConnectionsReadAndBindAsSQLiteKitDoes() async throws {
        let path = Self.path()
        let store = try await Self.open(at: path)
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
        let bySQLiteKit = try await Self.withSQLiteKit(path) { db in try Read(try #require(try await db.raw(select).first())) }
        #expect(onWriter == bySQLiteKit && onReader == bySQLiteKit)
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
        let count = SQLiteThreadConnection.statementLimit * 2 + 5
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

    /// The statements the connections serialize are the ones SQLiteKit would: the same text and
    /// binds for each kind of statement the repositories build.
    @Test func theConnectionsSerializeAsSQLiteKitDoes() async throws {
        let path = Self.path()
        let store = try await Self.open(at: path)
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
        let bySQLiteKit = try await Self.withSQLiteKit(path) { db in serialized(db) }
        #expect(writer == bySQLiteKit && reader == bySQLiteKit)
        #expect(writer.contains { $0.contains(#""we""ird""#) } && writer.contains { $0.contains(#""a""b""#) })
        await store.close()
    }

    /// The plain statements a change runs most are written in one pass (`SQLiteStatementText`),
    /// to the same text and binds as SQLiteKit's; a statement with anything else in it is left to
    /// SQLKit (nil), and still written as SQLiteKit writes it.
    @Test func plainStatementsAreWrittenAsSQLiteKitWritesThem() async throws {
        let path = Self.path()
        let store = try await Self.open(at: path)
        struct Row: Encodable { var id: String; var at: Int64; var note: String?; var livemode: Bool }
        func plain(_ db: any SQLDatabase) throws -> [any SQLExpression] {
            [
                db.insert(into: "audit_events").columns("id", "at", "note").values(SQLBindings.of("a", 1, String?.none)).query,
                try db.insert(into: "audit_events").model(Row(id: "b", at: 2, note: nil, livemode: true), with: SQLCoding.rowEncoder).query,
                try db.insert(into: "audit_events").models([Row(id: "c", at: 3, note: "x", livemode: false), Row(id: "d", at: 4, note: "y", livemode: true)]).query,
                db.select().column("*").from("customers").where("id", .equal, "cus_ava").limit(1).query,
                db.select().columns("fingerprint", "body").from("idempotency_records").where("idempotency_key", .equal, "k")
                    .where("route", .equal, "r").where("principal", .equal, "p").where("created_at", .greaterThan, 5).limit(1).query,
                db.select().column("*").from("discounts").where("subscription_id", .equal, "sub_1").orWhere("at", .lessThanOrEqual, 3)
                    .orderBy("starts_at", .ascending).orderBy("id", .descending).limit(10).offset(20).query,
                db.select().column(SQLColumn("name", table: "c")).from("customers").where(SQLColumn("n", table: "c"), .isNot, SQLLiteral.null).query,
            ]
        }
        func other(_ db: any SQLDatabase) -> [any SQLExpression] {
            [
                db.insert(into: "audit_events").columns("id", "at").values(SQLBind("a"), SQLBind(1)).onConflict(with: ["id"]) { $0.set(excludedValueOf: "at") }.query,
                db.insert(into: "audit_events").columns("id", "we\"ird").values(SQLBind("a"), SQLBind(1)).query,
                db.select().column("id").from("customers").where("id", .in, ["a", "b"]).query,
                db.select().column("id").from("customers").where("livemode", .equal, SQLLiteral.boolean(true)).query,
                db.select().column("id").from("customers").join("subscriptions", on: "subscriptions.customer_id = customers.id").query,
                db.select().distinct().column("id").from("customers").query,
                db.update("subscriptions").set("status", to: "paused").where("id", .equal, "a").query,
            ]
        }
        func text(_ serialized: (sql: String, binds: [any Encodable & Sendable])) -> String {
            "\(serialized.sql) · \(serialized.binds.map { "\($0)" })"
        }
        let (written, bySQLKit, otherHere) = try await store.exclusive { db in
            let written = try plain(db).map { SQLiteStatementText.of($0).map(text) ?? "not plain" }
            let writer = try #require(db as? SQLiteThreadDatabase)
            return (written, try plain(db).map { text(SQLiteThreadDatabase.serialized($0, connection: writer.connection)) },
                    other(db).map { text(SQLiteThreadDatabase.serialized($0, connection: writer.connection)) })
        }
        let bySQLiteKit = try await Self.withSQLiteKit(path) { db in (try plain(db).map { text(db.serialize($0)) }, other(db).map { text(db.serialize($0)) }) }
        #expect(written == bySQLiteKit.0)
        #expect(bySQLKit == bySQLiteKit.0 && otherHere == bySQLiteKit.1)
        #expect(try await store.exclusive { db in other(db).allSatisfy { SQLiteStatementText.of($0) == nil } })
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

    /// The types records are made of are converted without SQLiteKit's decoder, and to the same
    /// values, or the same refusal, as that decoder gives, from every kind of value SQLite holds.
    @Test func valuesConvertAsSQLiteKitsDecoderConverts() throws {
        let values: [SQLiteData] = [
            .integer(0), .integer(1), .integer(-7), .integer(Int.max), .float(1.5), .float(2), .float(-0.25),
            .text("12"), .text("1"), .text("true"), .text("2.5"), .text(""), .text("Zoë"), .text("active"), .text("\"active\""), .blob(ByteBuffer(bytes: [0, 1])), .null,
        ]
        let decoder = SQLiteDataDecoder()
        func same<T: Decodable & Equatable>(_: T.Type, _ value: SQLiteData) -> Bool {
            let fast = try? SQLiteValue.decode(T.self, from: value), kit = try? decoder.decode(T.self, from: value)
            return fast == kit
        }
        enum Status: String, Decodable, TextColumnValue { case active }
        enum Level: Int, Decodable { case one = 1 }
        for value in values {
            #expect(same(String.self, value), "String from \(value)")
            #expect(same(Int.self, value), "Int from \(value)")
            #expect(same(Int64.self, value), "Int64 from \(value)")
            #expect(same(Bool.self, value), "Bool from \(value)")
            #expect(same(Double.self, value), "Double from \(value)")
            #expect(same(String?.self, value), "String? from \(value)")
            #expect(same(Status.self, value), "an enum from \(value)")
            #expect(same(Status?.self, value), "an optional enum from \(value)")
            #expect(same(Level.self, value), "an enum of numbers from \(value)")
        }
        #expect(try SQLiteValue.decode(Status.self, from: .text("active")) == .active)
        #expect(throws: DecodingError.self) { try SQLiteValue.decode(Int.self, from: .text("12")) }
    }

    /// Bound values become what SQLiteKit's encoder makes of them, the types records are made
    /// of (optional ones too) and the rest (which go to that encoder).
    @Test func boundValuesEncodeAsSQLiteKitsEncoderEncodes() throws {
        struct Nested: Codable, Sendable { var a = 1 }
        enum Status: String, Codable, Sendable { case active }
        let values: [any Encodable & Sendable] = [
            "", "Zoë", 0, -7, Int.max, Int64(-3), Int64.max, true, false, 1.5, -0.25, Double(2),
            String?.some("x"), Int?.some(4), Int64?.some(5), Bool?.some(true), Double?.some(0.5),
            String?.none, Int?.none, Bool?.none, Int32(9), UInt8(2), Float(1.5), Status.active, Nested(), Data([0, 1]), [1, 2],
        ]
        let encoder = SQLiteDataEncoder()
        for value in values {
            #expect(try SQLiteValue.encode(value) == encoder.encode(value), "\(value)")
        }
    }

    /// More reads at once than there are readers, some failing: each gets a reader in turn (none
    /// kept by a read that threw), sees what was committed, and cannot write.
    @Test func moreReadsThanReadersEachGetOne() async throws {
        let store = try await Self.open()
        try await store.sqlTransaction { db in
            try await db.raw("CREATE TABLE counted (n INTEGER)").run()
            try await db.raw("INSERT INTO counted (n) VALUES (41)").run()
        }
        let reads = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<(SQLiteEngine.readerCount * 8) {
                    group.addTask {
                        try await store.sqlRead { db in
                            if index % 3 == 0 {
                                _ = try? await db.raw("SELECT * FROM missing").all()
                                throw CancellationError()
                            }
                            return try #require(try await db.raw("SELECT n + 1 AS n FROM counted").first()).decode(column: "n", as: Int.self)
                        }
                    }
                }
                var answers: [Int?] = []
                while let next = await group.nextResult() { answers.append(try? next.get()) }
                return answers
            }
        }
        // A bound, not a speed: a reader kept by a failed read would leave the rest waiting forever.
        let answers = try #require(await Deadline.value(of: reads, within: .seconds(120))).get()
        #expect(answers.count == SQLiteEngine.readerCount * 8)
        #expect(answers.compactMap { $0 } == Array(repeating: 42, count: answers.count - (0..<answers.count).filter { $0 % 3 == 0 }.count))
        await #expect(throws: (any Error).self) { try await store.sqlRead { db in try await db.raw("INSERT INTO counted (n) VALUES (1)").run() } }
        await store.close()
    }

    /// A console page's reads and a change's, asked again, prepare nothing again: not their values
    /// (SQLite prepares a statement again when a value its plan looked at changes, and a value
    /// cleared after each run changed every time), nor a LIMIT handed to the search index.
    @Test func statementsAskedAgainAreNotPreparedAgain() async throws {
        let store = try await Self.open()
        try await store.transaction(key: "test") { data in
            for index in 0..<40 {
                try await data.customers.insert(CustomerRecord(
                    id: "cus_\(index)", name: "Okafor \(index)", email: "okafor\(index)@example.com", country: nil, createdAt: 1_700_000_000,
                    cardFailing: false
                ))
            }
        }
        func round() async throws {
            // The listing's pages, a name's prefix, a word, an email (its rarest part first), an id.
            for (text, page) in [("", 1), ("", 2), ("ok", 1), ("okafor", 1), ("okafor7@example", 1), ("cus_3", 1)] {
                _ = try await store.read { data in try await data.customers.search(text, kind: nil, livemode: false, page: page, perPage: 5) }
            }
            _ = try await store.transaction(key: "customer:cus_1") { data in try await data.ledger.subscriptions(customerId: "cus_1") }
        }
        try await round()
        let prepared = try #require(store.statementsPrepared)
        try await round()
        try await round()
        #expect(store.statementsPrepared == prepared)
        await store.close()
    }
}
