import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLKit
import SQLiteKit
import Synchronization
// SQLite's C API, as SQLiteNIO builds it (its names prefixed `sqlite_nio_`). The one copy of the
// library in the process: the writer, the readers and the checkpointer must share it, or their
// POSIX locks on the database file would not see each other.
import VaporCSQLite
import CSQLiteConfig

/// A SQLite connection on a thread of its own (the writer's, or one reader's): SQLite called
/// straight from that thread, its prepared statements kept for the next time they are run.
///
/// SQLiteNIO runs each statement as a work item on a thread pool and hands the result back
/// through an event loop (one more hop per row), so each of a change's dozen statements was two
/// thread wake-ups during which the writer, the store's one serial resource, sat idle; and it
/// prepared every statement anew, a seventh of the writer's time (and of a search's). Here a
/// statement run on the connection's thread (a transaction or a read prefers it:
/// `ThreadExecutor`) runs at once, without suspending; from any other thread it is handed to
/// the connection's thread and awaited, as SQLiteNIO does.
///
/// Rows and values are SQLiteNIO's and SQLiteKit's (`SQLiteData`, `SQLiteDataEncoder`, the
/// conversions of `SQLiteDataConvertible`, `SQLiteDataDecoder` for the rest, the first column of
/// a name), so a row reads exactly as SQLiteKit's would.
final class SQLiteThreadConnection: @unchecked Sendable {
    // Unchecked: `handle` and `statements` are touched only on the connection's thread, one call
    // at a time (`run`).
    private var handle: OpaquePointer?
    private var statements: [String: Prepared] = [:]
    /// The connection's own thread (a pool of one). SQLite waits for another connection's lock
    /// (its busy timeout) by sleeping on the thread that runs the statement; on the process's
    /// shared pool (one thread per core) such waits could take every thread, and the connection
    /// that holds the lock could then not run the statements that would release it.
    private let thread: NIOThreadPool
    /// The connection's thread, once known (`open` learns it on the thread itself).
    private let threadID: pthread_t
    /// Runs a task on the connection's thread, between its statements too: a transaction or a
    /// read that prefers it runs each statement at once.
    let executor: ThreadExecutor
    let eventLoop: any EventLoop
    let logger: Logger

    /// Statements prepared so far, again or anew (a statement kept is prepared once).
    let preparations = Atomic<Int>(0)

    /// Prepared statements kept; past it, all are dropped and the ones in use come back (the
    /// statements a server runs are a few dozen shapes; the rest, a list's length, come and go).
    static let statementLimit = 128

    /// A statement kept prepared, with its columns (named again if SQLite prepared it again after
    /// a change of the schema).
    private final class Prepared {
        let statement: OpaquePointer
        var columns: Columns
        var preparedAgain: Int32

        init(statement: OpaquePointer, columns: Columns, preparedAgain: Int32) {
            self.statement = statement
            self.columns = columns
            self.preparedAgain = preparedAgain
        }
    }

    /// A result's column names and where each name is first (SQLiteNIO's rule for a name twice).
    final class Columns: Sendable {
        let names: [String]
        let index: [String: Int]

        init(_ names: [String]) {
            self.names = names
            index = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    private init(handle: OpaquePointer, thread: NIOThreadPool, threadID: pthread_t, eventLoop: any EventLoop, logger: Logger) {
        self.handle = handle
        self.thread = thread
        self.threadID = threadID
        executor = ThreadExecutor(thread)
        self.eventLoop = eventLoop
        self.logger = logger
    }

    /// Opens (creating if needed) the database at `path`, on a thread of its own.
    static func open(path: String, logger: Logger) async throws -> SQLiteThreadConnection {
        _ = initialized
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        let thread = NIOThreadPool(numberOfThreads: 1)
        thread.start()
        do {
            return try await open(path: path, thread: thread, eventLoop: eventLoop, logger: logger)
        } catch {
            try? await thread.shutdownGracefully()
            throw error
        }
    }

    private static func open(path: String, thread: NIOThreadPool, eventLoop: any EventLoop, logger: Logger) async throws -> SQLiteThreadConnection {
        try await thread.runIfActive { () throws -> SQLiteThreadConnection in
            var handle: OpaquePointer?
            let flags = SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI | SQLITE_OPEN_EXRESCODE
            let status = sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil)
            guard status == SQLITE_OK, let handle else {
                let message = Self.message(handle, status)
                sqlite_nio_sqlite3_close_v2(handle)
                throw SQLiteFailure(code: status, message: message)
            }
            return SQLiteThreadConnection(handle: handle, thread: thread, threadID: pthread_self(), eventLoop: eventLoop, logger: logger)
        }
    }

    /// SQLite's own set-up, once in the process, before its first connection of ours.
    private static let initialized: Int32 = {
        _ = savedesk_sqlite_config_statement_journal_spill(statementJournalSpillBytes)
        return sqlite_nio_sqlite3_initialize()
    }()

    /// How much of a statement journal SQLite keeps in memory before it writes it to a temporary
    /// file. Each member of a group commit after the first runs in a savepoint, and a savepoint
    /// copies every page its statements change into that journal (again for each statement that
    /// has a journal of its own): a durable write's member journals about 50 pages, so past
    /// SQLite's default of 64 KiB most groups wrote a temporary file, two pwrite calls a page on
    /// the writer's thread. The bound stays below 128 KiB because SQLite's unix VFS writes at most
    /// 0x1FFFF bytes in one call (`seekAndWriteFd` masks the length) and moves the in-memory
    /// journal to its file in pieces of this size: at 256 KiB or 1 MiB the move wrote a truncated
    /// piece and failed with SQLITE_FULL ("database or disk is full").
    static let statementJournalSpillBytes: Int32 = 0x1FFFF

    /// Runs `sql` with `binds`, handing each row to `onRow`: at once on the connection's thread,
    /// otherwise there.
    func run(_ sql: String, _ binds: [SQLiteData], _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        if pthread_equal(pthread_self(), threadID) != 0 { return try runHere(sql, binds, onRow) }
        try await thread.runIfActive { try self.runHere(sql, binds, onRow) }
    }

    /// Closes the connection and ends its thread.
    func close() async {
        try? await thread.runIfActive {
            for prepared in self.statements.values { sqlite_nio_sqlite3_finalize(prepared.statement) }
            self.statements = [:]
            sqlite_nio_sqlite3_close_v2(self.handle)
            self.handle = nil
        }
        try? await thread.shutdownGracefully()
    }

    private func runHere(_ sql: String, _ binds: [SQLiteData], _ onRow: (any SQLRow) -> Void) throws {
        let prepared = try statement(sql)
        let statement = prepared.statement
        // Reset, its values left bound: the next run binds every parameter again, and SQLite
        // prepares a statement again when a parameter its plan looked at (one compared with an
        // indexed column, a LIMIT) changes value, which clearing them would make every run.
        defer { sqlite_nio_sqlite3_reset(statement) }
        for (offset, value) in binds.enumerated() {
            try check(bind(value, at: Int32(offset + 1), of: statement))
        }
        while true {
            let status = sqlite_nio_sqlite3_step(statement)
            if status == SQLITE_DONE { return noticePreparedAgain(prepared) }
            guard status == SQLITE_ROW else { throw failure(status) }
            noticePreparedAgain(prepared)
            let columns = prepared.columns
            var values: [SQLiteData] = []
            values.reserveCapacity(columns.names.count)
            for column in 0..<Int32(columns.names.count) { values.append(try value(at: column, of: statement)) }
            onRow(Row(columns: columns, values: values))
        }
    }

    /// Names the columns again if SQLite prepared the statement again (a change of the schema, or
    /// of a value its plan depends on), and counts it.
    private func noticePreparedAgain(_ prepared: Prepared) {
        let again = sqlite_nio_sqlite3_stmt_status(prepared.statement, SQLITE_STMTSTATUS_REPREPARE, 0)
        guard again != prepared.preparedAgain else { return }
        prepared.columns = Self.columns(of: prepared.statement)
        prepared.preparedAgain = again
        preparations.add(1, ordering: .relaxed)
    }

    /// `sql` prepared, from the kept ones or now (and kept).
    private func statement(_ sql: String) throws -> Prepared {
        if let kept = statements[sql] { return kept }
        guard let handle else { throw SQLiteFailure(code: SQLITE_MISUSE, message: "the connection is closed") }
        var statement: OpaquePointer?
        let status = sqlite_nio_sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw failure(status) }
        preparations.add(1, ordering: .relaxed)
        if statements.count >= Self.statementLimit {
            for prepared in statements.values { sqlite_nio_sqlite3_finalize(prepared.statement) }
            statements = [:]
        }
        let prepared = Prepared(
            statement: statement, columns: Self.columns(of: statement),
            preparedAgain: sqlite_nio_sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_REPREPARE, 0)
        )
        statements[sql] = prepared
        return prepared
    }

    private static func columns(of statement: OpaquePointer) -> Columns {
        Columns((0..<sqlite_nio_sqlite3_column_count(statement)).map { column in
            sqlite_nio_sqlite3_column_name(statement, column).map { String(cString: $0) } ?? ""
        })
    }

    private func bind(_ value: SQLiteData, at position: Int32, of statement: OpaquePointer) -> Int32 {
        switch value {
        case .integer(let number): return sqlite_nio_sqlite3_bind_int64(statement, position, Int64(number))
        case .float(let number): return sqlite_nio_sqlite3_bind_double(statement, position, number)
        case .text(let text):
            return sqlite_nio_sqlite3_bind_text64(statement, position, text, UInt64(text.utf8.count), Self.transient, UInt8(SQLITE_UTF8))
        case .blob(let buffer):
            return buffer.withUnsafeReadableBytes { bytes in
                sqlite_nio_sqlite3_bind_blob64(statement, position, bytes.baseAddress, UInt64(bytes.count), Self.transient)
            }
        case .null: return sqlite_nio_sqlite3_bind_null(statement, position)
        }
    }

    /// SQLite copies the value before the call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private func value(at column: Int32, of statement: OpaquePointer) throws -> SQLiteData {
        switch sqlite_nio_sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(Int(sqlite_nio_sqlite3_column_int64(statement, column)))
        case SQLITE_FLOAT: return .float(sqlite_nio_sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            guard let text = sqlite_nio_sqlite3_column_text(statement, column) else { throw failure(sqlite_nio_sqlite3_errcode(handle)) }
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            let count = Int(sqlite_nio_sqlite3_column_bytes(statement, column))
            var buffer = ByteBufferAllocator().buffer(capacity: count)
            if let bytes = sqlite_nio_sqlite3_column_blob(statement, column) { buffer.writeBytes(UnsafeRawBufferPointer(start: bytes, count: count)) }
            return .blob(buffer)
        default: return .null
        }
    }

    private func check(_ status: Int32) throws {
        guard status == SQLITE_OK else { throw failure(status) }
    }

    private func failure(_ status: Int32) -> SQLiteFailure {
        SQLiteFailure(code: status, message: Self.message(handle, status))
    }

    /// The connection's message for its last error, or the code alone.
    private static func message(_ handle: OpaquePointer?, _ status: Int32) -> String {
        guard let handle, let text = sqlite_nio_sqlite3_errmsg(handle) else { return "status \(status)" }
        return String(cString: text)
    }

    /// A row as SQLKit reads it, decoded as SQLiteKit decodes its rows.
    private struct Row: SQLRow {
        let columns: Columns
        let values: [SQLiteData]

        var allColumns: [String] { columns.names }
        func contains(column: String) -> Bool { columns.index[column] != nil }
        func decodeNil(column: String) throws -> Bool { columns.index[column].map { values[$0] == .null } ?? true }
        func decode<D: Decodable>(column: String, as type: D.Type) throws -> D {
            guard let offset = columns.index[column] else { throw SQLiteFailure(code: SQLITE_ERROR, message: "no column \(column) in the result") }
            return try SQLiteValue.decode(D.self, from: values[offset])
        }
    }
}

/// A column's value as SQLiteKit decodes it (`SQLiteDataDecoder`), with the types records are
/// made of converted at once by SQLiteNIO's own conversions: the decoder finds them by a dynamic
/// cast and builds a JSON decoder on each call (SQLiteKit's rows make a decoder per column), and
/// that was most of the time a search spent reading its page's rows.
enum SQLiteValue {
    static func decode<D: Decodable>(_: D.Type, from value: SQLiteData) throws -> D {
        // Each branch is taken only when `D` is that type, and hands its value over as a `D`
        // without a cast at run time (`as? D` looked the cast up, and made `D?`'s type, for each
        // column of each row). Spelled out per type: one generic helper taking the `T?` made that
        // type at run time again.
        if D.self == String.self {
            guard let text = String(sqliteData: value) else { throw mismatch(D.self, value) }
            return unsafeBitCast(text, to: D.self)
        } else if D.self == Int64.self {
            guard let number = Int64(sqliteData: value) else { throw mismatch(D.self, value) }
            return unsafeBitCast(number, to: D.self)
        } else if D.self == Bool.self {
            guard let flag = Bool(sqliteData: value) else { throw mismatch(D.self, value) }
            return unsafeBitCast(flag, to: D.self)
        } else if D.self == Int.self {
            guard let number = Int(sqliteData: value) else { throw mismatch(D.self, value) }
            return unsafeBitCast(number, to: D.self)
        } else if D.self == Double.self {
            guard let number = Double(sqliteData: value) else { throw mismatch(D.self, value) }
            return unsafeBitCast(number, to: D.self)
        } else if let textual = D.self as? any TextColumnValue.Type {
            return try ofText(textual, value)
        }
        return try decoder.decode(D.self, from: value)
    }

    /// The `R` (which is `D`) a column's text names, refused as its `Decodable` refuses a text
    /// that names none. (SQLiteKit's decoder reads it so too, through a JSON decoder.)
    private static func ofText<R: TextColumnValue, D>(_: R.Type, _ value: SQLiteData) throws -> D {
        guard let text = String(sqliteData: value) else { throw mismatch(D.self, value) }
        guard let found = R(columnText: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Cannot initialize \(R.self) from invalid String value \(text)"))
        }
        return unsafeBitCast(found, to: D.self)
    }

    private static func mismatch(_ type: Any.Type, _ value: SQLiteData) -> DecodingError {
        DecodingError.typeMismatch(type, .init(codingPath: [], debugDescription: "Could not convert SQLite data to \(type): \(value)."))
    }

    /// SQLiteKit's decoder, for every other type (its JSON decoder is safe to share).
    private static let decoder = SQLiteDataDecoder()

    /// A bound value as SQLiteKit's encoder (`SQLiteDataEncoder`) makes it, the types records are
    /// made of converted at once: the encoder first asks whether the value converts itself (a
    /// cast to a protocol, looked up in the runtime's conformance tables for every value), and an
    /// optional one it then encodes through a coder of its own: 3 % of the process under durable
    /// writes, all of it on the SQLite writer's thread.
    static func encode(_ value: any Encodable & Sendable) throws -> SQLiteData {
        switch value {
        case let text as String: .text(text)
        case let number as Int: .integer(number)
        case let number as Int64: .integer(Int(number))
        case let flag as Bool: .integer(flag ? 1 : 0)
        case let number as Double: .float(number)
        default: try encoder.encode(value)
        }
    }

    /// SQLiteKit's encoder, for every other type (its JSON encoder is only read).
    private static let encoder = SQLiteDataEncoder()
}

/// A type a column holds as its text raw value (the records' enums), which `SQLiteValue` reads
/// without SQLiteKit's decoder. A plain protocol: a cast to `RawRepresentable<String>` checked
/// the type's requirements again on each call, 4 µs, longer than the decoder took.
protocol TextColumnValue: Decodable {
    init?(columnText: String)
}

extension TextColumnValue where Self: RawRepresentable, RawValue == String {
    init?(columnText: String) { self.init(rawValue: columnText) }
}

/// Runs tasks on a connection's own thread (its one-thread pool). A task preferring it runs
/// there between its statements too, so each statement runs at once on the connection: no
/// thread is woken per statement.
final class ThreadExecutor: TaskExecutor {
    private let thread: NIOThreadPool

    init(_ thread: NIOThreadPool) { self.thread = thread }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // A pool already shut down calls the item at once (state cancelled): the job still runs,
        // on the caller's thread, rather than never.
        thread.submit { _ in job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// An error SQLite reported: its (extended) result code and message.
struct SQLiteFailure: Error, CustomStringConvertible {
    let code: Int32
    let message: String

    var description: String { "SQLite error \(code): \(message)" }
}

/// A `SQLiteThreadConnection` as SQLKit's database: statements serialized in SQLite's dialect
/// (with its identifiers quoted by `IdentifierQuote`) and bound with SQLiteKit's encoder.
struct SQLiteThreadDatabase: AsyncSQLDatabase {
    let connection: SQLiteThreadConnection
    /// The dialect this value serializes with (its quote keeps state: one serialization at a time).
    let dialect: any SQLDialect

    init(connection: SQLiteThreadConnection) {
        self.connection = connection
        dialect = SQLiteQuotingDialect()
    }

    var logger: Logger { connection.logger }
    var eventLoop: any EventLoop { connection.eventLoop }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = Self.serialized(query, connection: connection)
        try await connection.run(sql, try binds.map(SQLiteValue.encode), onRow)
    }
}

extension SQLiteThreadDatabase {
    /// `query`'s SQL and binds: a plain statement's written at once (`SQLiteStatementText`),
    /// any other by SQLKit. Debug builds check the first against SQLKit's, statement by statement.
    static func serialized(_ query: any SQLExpression, connection: SQLiteThreadConnection) -> (String, [any Encodable & Sendable]) {
        // A value of its own for each statement, so its quote's state is this statement's alone.
        let sqlKit = { SQLiteThreadDatabase(connection: connection).serialize(query) }
        guard let plain = SQLiteStatementText.of(query) else { return sqlKit() }
        #if DEBUG
        let expected = sqlKit()
        assert(
            plain.sql == expected.sql && plain.binds.map { "\($0)" } == expected.binds.map { "\($0)" },
            "SQLiteStatementText wrote \(plain.sql) (\(plain.binds)) where SQLKit writes \(expected.sql) (\(expected.binds))"
        )
        #endif
        return plain
    }
}

/// SQLiteKit's dialect, every answer its own, but for how an identifier is quoted
/// (`IdentifierQuote`).
struct SQLiteQuotingDialect: SQLDialect {
    private let base = SQLiteDialect()
    let identifierQuote: any SQLExpression = IdentifierQuote()

    var name: String { base.name }
    var literalStringQuote: any SQLExpression { base.literalStringQuote }
    var supportsAutoIncrement: Bool { base.supportsAutoIncrement }
    var autoIncrementClause: any SQLExpression { base.autoIncrementClause }
    var autoIncrementFunction: (any SQLExpression)? { base.autoIncrementFunction }
    func bindPlaceholder(at position: Int) -> any SQLExpression { base.bindPlaceholder(at: position) }
    func literalBoolean(_ value: Bool) -> any SQLExpression { base.literalBoolean(value) }
    var literalDefault: any SQLExpression { base.literalDefault }
    var supportsIfExists: Bool { base.supportsIfExists }
    var enumSyntax: SQLEnumSyntax { base.enumSyntax }
    var supportsDropBehavior: Bool { base.supportsDropBehavior }
    var supportsReturning: Bool { base.supportsReturning }
    var triggerSyntax: SQLTriggerSyntax { base.triggerSyntax }
    var alterTableSyntax: SQLAlterTableSyntax { base.alterTableSyntax }
    func customDataType(for dataType: SQLDataType) -> (any SQLExpression)? { base.customDataType(for: dataType) }
    func normalizeSQLConstraint(identifier: any SQLExpression) -> any SQLExpression { base.normalizeSQLConstraint(identifier: identifier) }
    var upsertSyntax: SQLUpsertSyntax { base.upsertSyntax }
    var unionFeatures: SQLUnionFeatures { base.unionFeatures }
    var sharedSelectLockExpression: (any SQLExpression)? { base.sharedSelectLockExpression }
    var exclusiveSelectLockExpression: (any SQLExpression)? { base.exclusiveSelectLockExpression }
    func nestedSubpathExpression(in column: any SQLExpression, for path: [String]) -> (any SQLExpression)? {
        base.nestedSubpathExpression(in: column, for: path)
    }

    /// The double quote around an identifier, the identifier's own double quotes doubled, as
    /// SQLKit does for SQLiteKit's quote; but SQLKit does it with the standard library's
    /// `replacing`, which on Linux was a fifth of the writer's time, and here a name without a
    /// double quote (all of them) is only scanned. SQLKit writes an identifier as this quote,
    /// the name, this quote: the second call finds the name after the first one's quote.
    final class IdentifierQuote: SQLExpression, @unchecked Sendable {
        // Unchecked: a statement is serialized on one thread, by a database value of its own
        // (`SQLiteThreadDatabase.execute`).
        private var nameStart: Int?

        func serialize(to serializer: inout SQLSerializer) {
            guard let start = nameStart else {
                serializer.write("\"")
                nameStart = serializer.sql.utf8.count
                return
            }
            nameStart = nil
            let name = serializer.sql.utf8.index(serializer.sql.utf8.startIndex, offsetBy: start)
            if serializer.sql.utf8[name...].contains(UInt8(ascii: "\"")) {
                let escaped = serializer.sql[name...].split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"")
                serializer.sql.replaceSubrange(name..., with: escaped)
            }
            serializer.write("\"")
        }
    }
}
