import Foundation
import Logging
import PostgresKit
import PostgresNIO
import SQLKit
import Synchronization

/// A pooled PostgreSQL connection as SQLKit's database, whose statements are prepared once per
/// connection and then only bound and run.
///
/// PostgresKit sends every statement unnamed: PostgreSQL parses, analyses and plans it on each
/// run (a sixth of the machine's time in the durable-write bench). Here a statement is given a
/// name the first time its engine sees its text (with the types of its values), and
/// PostgresNIO prepares that name once on each connection that runs it.
///
/// PostgresNIO prepares only statements whose text is known to their type
/// (`PostgresPreparedStatement.sql` is static); `Named` reads its text and name from a task-local
/// value set around the one call that reads them.
///
/// Bounded: at most `limit` texts are named by an engine (each is kept on every connection that
/// ran it); past that, for a schema statement, and for a value PostgresNIO has no encoding of
/// its own for, a statement goes unnamed through PostgresKit as before.
struct PostgresPreparedDatabase: AsyncSQLDatabase {
    let connection: PostgresConnection
    let names: PreparedNames
    let logger: Logger

    var eventLoop: any EventLoop { connection.eventLoop }
    var dialect: any SQLDialect { PostgresDialect() }
    var queryLogLevel: Logger.Level? { nil }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        let (sql, binds) = serialize(query)
        guard let (name, bindings) = try named(sql, binds) else {
            return try await connection.sql(queryLogLevel: nil).execute(sql: query, onRow)
        }
        try await Named.$current.withValue(Named.Text(name: name, sql: sql)) {
            for try await row in try await connection.execute(Named(bindings: bindings), logger: logger) {
                onRow(row.sql())
            }
        }
    }

    /// The name `sql` runs under with `binds` and the values bound, or nil: it goes unnamed (a
    /// schema statement, a value PostgresNIO has no encoding of its own for, past the bound).
    private func named(_ sql: String, _ binds: [any Encodable & Sendable]) throws -> (String, PostgresBindings)? {
        guard Self.planned(sql) else { return nil }
        var bindings = PostgresBindings(capacity: binds.count)
        var types = ""
        for bind in binds {
            let unwrapped = Self.unwrapped(bind)
            if unwrapped == nil {
                bindings.appendNull()
                types += " null"
            } else if let value = unwrapped as? any PostgresThrowingDynamicTypeEncodable {
                try bindings.append(value, context: .default)
                types += " \(value.psqlType.rawValue)"
            } else {
                return nil
            }
        }
        return names.name(of: sql, types: types).map { ($0, bindings) }
    }

    /// Whether PostgreSQL plans `sql` (a query or a change of rows), so preparing it saves work.
    /// A schema statement (a migration's) runs once and goes unnamed.
    static func planned(_ sql: String) -> Bool {
        let verb = sql.prefix { !$0.isWhitespace && $0 != "(" }.uppercased()
        return ["SELECT", "INSERT", "UPDATE", "DELETE", "WITH"].contains(verb)
    }

    /// `value` with any optional around it taken off; nil when it is an optional that holds none.
    private static func unwrapped(_ value: Any) -> Any? {
        guard let optional = value as? any OptionalValue else { return value }
        return optional.wrappedAny.flatMap(unwrapped)
    }

    /// Whether an error of a named statement may come from its preparation, or leave the name
    /// unusable on its connection: PostgresNIO keeps a failed preparation's error for the name,
    /// and a schema change since (another instance migrated) fails every run of it. A connection
    /// that saw one is closed rather than given back, and the pool opens a fresh one.
    static func spoilsConnection(_ error: any Error) -> Bool {
        guard let state = (error as? PSQLError)?.serverInfo?[.sqlState] else { return false }
        // An aborted transaction (a Parse inside one fails), a statement that no longer fits the
        // schema, syntax and undefined names (class 42), and a prepared statement not known.
        return state == "25P02" || state == "0A000" || state.hasPrefix("42") || state.hasPrefix("26")
    }

    /// The statement PostgresNIO prepares and runs: its name and text are the task's.
    struct Named: PostgresPreparedStatement {
        struct Text: Sendable {
            let name: String
            let sql: String
        }
        @TaskLocal static var current = Text(name: "", sql: "")

        static var name: String { current.name }
        static var sql: String { current.sql }

        let bindings: PostgresBindings

        func makeBindings() throws -> PostgresBindings { bindings }
        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }
}

/// The names an engine gave statement texts (with their values' types), up to a bound.
final class PreparedNames: Sendable {
    /// At most this many texts are named (a text built with values inside would otherwise name
    /// one statement per value, each kept by PostgreSQL for the connection's life).
    static let limit = 512

    private let table = Mutex<[String: String]>([:])

    func name(of sql: String, types: String) -> String? {
        let key = sql + "\u{0}" + types
        return table.withLock { table in
            if let name = table[key] { return name }
            guard table.count < Self.limit else { return nil }
            // Short: PostgreSQL keeps 63 bytes of a name.
            let name = "savedesk_\(table.count)"
            table[key] = name
            return name
        }
    }
}

extension SQLDatabase {
    /// This database, but each statement planned when it runs (on PostgreSQL, unnamed; SQLite
    /// plans every statement it prepares): for statements over tables whose size changes much
    /// between runs. A named statement keeps the plan PostgreSQL made for the table's size the
    /// first time (a statement without parameters keeps its generic plan until the table is
    /// analyzed again), and a plan for the few rows of a new database, kept while the table grows,
    /// scans all of it.
    var plannedEachRun: any SQLDatabase { (self as? PostgresPreparedDatabase)?.connection.sql(queryLogLevel: nil) ?? self }
}

/// Any optional, to look inside one whose wrapped type is not known.
private protocol OptionalValue {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalValue {
    fileprivate var wrappedAny: Any? { self.map { $0 as Any } }
}
