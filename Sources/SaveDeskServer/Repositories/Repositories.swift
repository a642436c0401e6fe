import Foundation
import SQLKit
import Synchronization

/// The store's repositories on one connection: a read's, or a transaction's (then everything
/// written through them commits together or not at all). Services see only these; the SQL lives
/// in the `SQL…` implementations, one per aggregate.
struct Repositories: Sendable {
    let customers: any CustomerRepository
    /// Subscriptions, their discounts and their charges.
    let ledger: any LedgerRepository
    let audit: any AuditRepository
    /// The desk's event log (written with each audit row).
    let events: any EventLogRepository
    let idempotency: any IdempotencyRepository
    let cancelFlow: any CancelFlowResponseRepository
    /// Applied App Store notifications and the App Store cancellations read out.
    let appStore: any AppStoreRepository
    let checkouts: any CheckoutRepository
    /// Switch-and-save impressions, conversions and dismissals.
    let switchAndSave: any SwitchAndSaveRepository
    let portalSessions: any PortalSessionRepository
    let offerCodes: any OfferCodeRepository
    let testClock: any TestClockRepository
    let funnelEvents: any FunnelEventRepository
    /// Apple's real-time retention requests and the answers given.
    let retentionMessages: any RetentionMessageRepository
    /// Stripe's webhook events and the actions sent to Stripe.
    let stripe: any StripeRepository

    /// The SQLKit implementations on `db` (a connection of a store of `kind`); `recorded` is told
    /// when the event log gets a row (the store then tells the other instances after the commit).
    init(sql db: any SQLDatabase, kind: Store.Kind, recorded: EventsRecorded? = nil) {
        customers = SQLCustomerRepository(db: db, kind: kind)
        ledger = SQLLedgerRepository(db: db)
        events = SQLEventLogRepository(db: db, kind: kind, recorded: recorded)
        audit = SQLAuditRepository(db: db, kind: kind, events: events)
        idempotency = SQLIdempotencyRepository(db: db)
        cancelFlow = SQLCancelFlowResponseRepository(db: db, kind: kind)
        appStore = SQLAppStoreRepository(db: db)
        checkouts = SQLCheckoutRepository(db: db)
        switchAndSave = SQLSwitchAndSaveRepository(db: db)
        portalSessions = SQLPortalSessionRepository(db: db)
        offerCodes = SQLOfferCodeRepository(db: db)
        testClock = SQLTestClockRepository(db: db)
        funnelEvents = SQLFunnelEventRepository(db: db)
        retentionMessages = SQLRetentionMessageRepository(db: db)
        stripe = SQLStripeRepository(db: db)
    }
}

/// Inserts that read nothing the others write, written together: on PostgreSQL in one statement
/// (each one before the last a data-modifying CTE of the last: one round trip however many; a
/// reference among them is checked at the statement's end), on SQLite one after another.
struct Inserts: Sendable {
    var queries: [SQLInsert]

    init(_ queries: [SQLInsert] = []) { self.queries = queries }

    var isEmpty: Bool { queries.isEmpty }

    static func + (first: Inserts, then: Inserts) -> Inserts { Inserts(first.queries + then.queries) }

    func run(on db: any SQLDatabase, kind: Store.Kind) async throws {
        guard var last = queries.last else { return }
        guard kind == .postgres else {
            for query in queries { try await db.execute(sql: query) { _ in } }
            return
        }
        let carried = queries.dropLast().enumerated().map { SQLCommonTableExpression(alias: SQLIdentifier("w\($0.offset)"), query: $0.element) }
        if !carried.isEmpty {
            last.tableExpressionGroup = SQLCommonTableExpressionGroup(tableExpressions: carried + (last.tableExpressionGroup?.tableExpressions ?? []))
        }
        try await db.execute(sql: last) { _ in }
    }
}

/// Whether a transaction wrote to the event log (set by the log, read after the commit).
final class EventsRecorded: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .relaxed) }
    var isSet: Bool { flag.load(ordering: .relaxed) }
}

/// How records map to rows: snake_case columns, nil as NULL.
enum SQLCoding {
    static let encoder = SQLQueryEncoder(keyEncodingStrategy: .convertToSnakeCase, nilEncodingStrategy: .asNil)
    static let decoder = SQLRowDecoder(keyDecodingStrategy: .convertFromSnakeCase)
    /// For records whose CodingKeys are their column names (read back with `RowRecord`): no key to
    /// convert (SQLKit's conversion, redone for every key of every row, was a tenth of an import's time).
    static let rowEncoder = SQLQueryEncoder(nilEncodingStrategy: .asNil)
}

/// Reads records whose CodingKeys are their column names (`SubscriptionRecord`,
/// `CustomerRecord`, `AuditRecord`) straight from rows: a column is looked up once (an optional
/// one twice: null, then its value). SQLKit's `SQLRowDecoder` first asks the row whether it holds
/// each column and builds each name anew, so an optional column took four lookups; its decoding
/// was a quarter of a customer-list page's time.
enum RowRecord {
    static func decode<T: Decodable>(_: T.Type, from row: any SQLRow) throws -> T {
        try T(from: Reader(row: row))
    }

    private struct Reader: Decoder {
        let row: any SQLRow
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }
        func container<Key: CodingKey>(keyedBy: Key.Type) throws -> KeyedDecodingContainer<Key> {
            KeyedDecodingContainer(Columns<Key>(row: row))
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a row is read by column name"))
        }
        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a row is read by column name"))
        }
    }

    /// A missing column reads as null (as in `SQLRowDecoder`), so an optional field may have no column.
    private struct Columns<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let row: any SQLRow
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { row.allColumns.compactMap(Key.init(stringValue:)) }
        func contains(_ key: Key) -> Bool { row.contains(column: key.stringValue) }
        func decodeNil(forKey key: Key) throws -> Bool { try row.decodeNil(column: key.stringValue) }
        func decode<T: Decodable>(_: T.Type, forKey key: Key) throws -> T { try row.decode(column: key.stringValue, as: T.self) }
        func decodeIfPresent<T: Decodable>(_: T.Type, forKey key: Key) throws -> T? { try optional(key) }
        // The standard library's own versions of these ask `contains` first: one lookup more.
        func decodeIfPresent(_: String.Type, forKey key: Key) throws -> String? { try optional(key) }
        func decodeIfPresent(_: Int64.Type, forKey key: Key) throws -> Int64? { try optional(key) }
        func decodeIfPresent(_: Int.Type, forKey key: Key) throws -> Int? { try optional(key) }
        func decodeIfPresent(_: Bool.Type, forKey key: Key) throws -> Bool? { try optional(key) }
        func decodeIfPresent(_: Double.Type, forKey key: Key) throws -> Double? { try optional(key) }
        private func optional<T: Decodable>(_ key: Key) throws -> T? {
            try row.decodeNil(column: key.stringValue) ? nil : row.decode(column: key.stringValue, as: T.self)
        }
        func nestedContainer<N: CodingKey>(keyedBy: N.Type, forKey key: Key) throws -> KeyedDecodingContainer<N> {
            throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: [key], debugDescription: "a column holds one value"))
        }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: [key], debugDescription: "a column holds one value"))
        }
        func superDecoder() throws -> any Decoder { Reader(row: row) }
        func superDecoder(forKey key: Key) throws -> any Decoder { Reader(row: row) }
    }
}

extension SQLQueryFetcher {
    /// Every row, as `RowRecord` reads it.
    func all<T: Decodable>(records: T.Type) async throws -> [T] {
        try await all().map { try RowRecord.decode(T.self, from: $0) }
    }

    /// The first row, as `RowRecord` reads it.
    func first<T: Decodable>(record: T.Type) async throws -> T? {
        try await first().map { try RowRecord.decode(T.self, from: $0) }
    }
}

extension SQLDatabase {
    func insert<T: Encodable & Sendable>(_ record: T, into table: String) async throws {
        try await insert(into: table).model(record, with: SQLCoding.encoder).run()
    }

    /// Deletes the rows of `table` that `filter` selects and returns how many they were (counted
    /// first, in the caller's transaction, with the same conditions).
    func deleteCounting(from table: String, where filter: (any SQLPredicateBuilder) -> Void) async throws -> Int {
        let count = select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from(table)
        filter(count)
        let rows = try await count.first()?.decode(column: "n", as: Int.self) ?? 0
        guard rows > 0 else { return 0 }
        let delete = delete(from: table)
        filter(delete)
        try await delete.run()
        return rows
    }
}

/// Builds a row of binds from mixed values (nil binds as NULL).
enum SQLBindings {
    static func of(_ values: (any Encodable & Sendable)?...) -> [any SQLExpression] {
        values.map { value in
            if let value { return SQLBind(value) }
            return SQLLiteral.null
        }
    }
}

/// Several reads answered by one statement: each query's rows as a JSON array in a column of its
/// own. One round trip instead of one per query (PostgreSQL), and, being one statement, one
/// snapshot on either engine, so the queries need no transaction around them to agree.
struct SQLQueriesAsJSON {
    let kind: Store.Kind
    private var parts: [SQLQueryString] = []

    init(kind: Store.Kind) { self.kind = kind }

    /// Adds `query`, whose result columns are `columns`; returns the column its rows come in.
    mutating func add(_ query: SQLQueryString, columns: [String]) -> String {
        let name = "rows_\(parts.count)"
        let array: SQLQueryString = switch kind {
        case .postgres: "CAST(coalesce(json_agg(q), '[]') AS TEXT)"
        case .sqlite:
            "json_group_array(json_object("
                + columns.map { "\(literal: $0), q.\(ident: $0)" as SQLQueryString }.joined(separator: ", ") + "))"
        }
        parts.append("(SELECT \(array) FROM (\(query)) AS q) AS \(ident: name)")
        return name
    }

    /// Runs the statement; nil when nothing was added.
    func run(on db: any SQLDatabase) async throws -> (any SQLRow)? {
        guard !parts.isEmpty else { return nil }
        return try await db.raw("SELECT " + parts.joined(separator: ", ")).first()
    }

    /// The rows at `column` of `row`, keyed by the query's column names.
    static func rows<T: Decodable>(_ row: any SQLRow, _ column: String, as type: T.Type) throws -> [T] {
        try JSONDecoder().decode([T].self, from: Data(try row.decode(column: column, as: String.self).utf8))
    }
}
