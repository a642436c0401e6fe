import Foundation
import RetentionDomain
import SQLKit
import Synchronization

/// Customers, and the operators' search over them.
protocol CustomerRepository: Sendable {
    func find(id: String) async throws -> CustomerRecord?
    /// The customer and its subscriptions (as `LedgerRepository.subscriptions(customerId:)` gives
    /// them), nil when there is no such customer: what every change reads first (its billing's
    /// settlement). On PostgreSQL one statement, where two were two of a change's round trips.
    func findWithSubscriptions(id: String) async throws -> (customer: CustomerRecord, subscriptions: [SubscriptionRecord])?
    /// Reads the customers of `ids` at once (a query per 500), so that `find(id:)` of any of them
    /// asks the database no more in this read or transaction (the import, a batch at a time).
    func prefetch(ids: [String]) async throws
    func insert(_ customer: CustomerRecord) async throws
    /// Writes a stored customer's fields (an operator's update, the import).
    func update(_ customer: CustomerRecord) async throws
    /// How many customers the key with digest `principal` made at or after `time`.
    func createdCount(by principal: String, since time: Int64) async throws -> Int
    /// How many customers app calls made in a mode at or after `time` (all keys).
    func createdByApps(livemode: Bool, since time: Int64) async throws -> Int
    /// The customer of a mode the app gave `token` as its App Store `appAccountToken`.
    func find(appAccountToken token: String, livemode: Bool) async throws -> CustomerRecord?
    /// The customer an operator linked an App Store original transaction to (the import).
    func linked(originalTransactionId: String, livemode: Bool) async throws -> String?
    /// Links App Store original transactions to a customer (an operator's import); a link another
    /// customer holds moves.
    func link(originalTransactionIds: [String], to customerId: String, livemode: Bool) async throws
    /// How many customers there are whose id starts with `idPrefix` ("" for all).
    func count(idPrefix: String) async throws -> Int
    /// The ids of every customer of a mode, in order.
    func ids(livemode: Bool) async throws -> [String]
    /// A page of the customers of a mode (of one kind, when given) matching `text` (lowercased,
    /// trimmed; empty: all), by name ignoring case (all: the demo's stories first, the generated
    /// history last, by name), and how many match in all (nil past the last page); `capped`: more
    /// match than the total says, and the pages hold only those (see `SQLCustomerRepository`).
    func search(
        _ text: String, kind: CustomerRecord.Kind?, livemode: Bool, page: Int, perPage: Int
    ) async throws -> (customers: [CustomerRecord], total: Int?, capped: Bool)
}

struct SQLCustomerRepository: CustomerRepository {
    let db: any SQLDatabase
    let kind: Store.Kind
    /// The customers this read or transaction has read or written, by id: one change asks for
    /// its customer more than once (settling billing, then the change), and the database is asked
    /// once. Every write to `customers` goes through this repository, which keeps it current.
    let seen = SeenCustomers()

    func find(id: String) async throws -> CustomerRecord? {
        if let known = seen[id] { return known }
        let customer = try await db.select().column("*").from("customers").where("id", .equal, id)
            .first(record: CustomerRecord.self)
        seen[id] = .some(customer)
        return customer
    }

    func findWithSubscriptions(id: String) async throws -> (customer: CustomerRecord, subscriptions: [SubscriptionRecord])? {
        let ledger = SQLLedgerRepository(db: db)
        guard kind == .postgres, seen[id] == nil else {
            guard let customer = try await find(id: id) else { return nil }
            return (customer, try await ledger.subscriptions(customerId: id))
        }
        // The subscriptions as one JSON array beside the customer's columns, their keys the
        // columns' names (`SubscriptionRecord`'s coding keys), in the ledger's order.
        let row = try await db.raw("""
            SELECT c.*, (SELECT coalesce(json_agg(s ORDER BY \(unsafeRaw: SQLLedgerRepository.order("s"))), '[]')::text
                         FROM subscriptions s WHERE s.customer_id = c.id) AS savedesk_subscriptions
            FROM customers c WHERE c.id = \(bind: id)
            """).first()
        let customer = try row.map { try RowRecord.decode(CustomerRecord.self, from: $0) }
        seen[id] = .some(customer)
        guard let row, let customer else { return nil }
        let subscriptions = try JSONDecoder().decode(
            [SubscriptionRecord].self, from: Data(try row.decode(column: "savedesk_subscriptions", as: String.self).utf8)
        )
        return (customer, subscriptions)
    }

    func prefetch(ids: [String]) async throws {
        let unseen = ids.filter { seen[$0] == nil }
        for start in stride(from: 0, to: unseen.count, by: 500) {
            let chunk = Array(unseen[start..<min(start + 500, unseen.count)])
            let found = try await db.select().column("*").from("customers").where("id", .in, chunk)
                .all(records: CustomerRecord.self)
            let byId = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            for id in chunk { seen[id] = .some(byId[id]) }
        }
    }

    func insert(_ customer: CustomerRecord) async throws {
        seen.forget(customer.id)
        try await db.insert(into: "customers").model(customer, with: SQLCoding.rowEncoder).run()
        seen[customer.id] = .some(customer)
    }

    func update(_ customer: CustomerRecord) async throws {
        seen.forget(customer.id)
        try await db.update("customers")
            .set("name", to: customer.name).set("email", to: customer.email).set("country", to: customer.country)
            .set("app_account_token", to: customer.appAccountToken).set("billing_customer_id", to: customer.billingCustomerId)
            .where("id", .equal, customer.id).run()
    }

    func createdCount(by principal: String, since time: Int64) async throws -> Int {
        try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("customers")
            .where("created_by", .equal, principal).where("created_at", .greaterThanOrEqual, time)
            .first()?.decode(column: "n", as: Int.self) ?? 0
    }

    func createdByApps(livemode: Bool, since time: Int64) async throws -> Int {
        try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("customers")
            .where("created_by", .isNot, SQLLiteral.null).where("created_at", .greaterThanOrEqual, time).where("livemode", .equal, livemode)
            .first()?.decode(column: "n", as: Int.self) ?? 0
    }

    func find(appAccountToken token: String, livemode: Bool) async throws -> CustomerRecord? {
        try await db.select().column("*").from("customers").where("app_account_token", .equal, token).where("livemode", .equal, livemode)
            .first(record: CustomerRecord.self)
    }

    func linked(originalTransactionId: String, livemode: Bool) async throws -> String? {
        try await db.select().column("customer_id").from("app_store_links").where("original_transaction_id", .equal, originalTransactionId)
            .where("livemode", .equal, livemode).first()?.decode(column: "customer_id", as: String.self)
    }

    func link(originalTransactionIds: [String], to customerId: String, livemode: Bool) async throws {
        for otid in originalTransactionIds {
            try await db.insert(into: "app_store_links").columns("original_transaction_id", "customer_id", "livemode")
                .values(SQLBindings.of(otid, customerId, livemode))
                .onConflict(with: ["original_transaction_id"]) { $0.set(excludedValueOf: "customer_id").set(excludedValueOf: "livemode") }
                .run()
        }
    }

    func count(idPrefix: String) async throws -> Int {
        let escaped = idPrefix.escapedForLike
        return try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("customers")
            .where(SQLQueryString("id LIKE \(bind: escaped + "%") ESCAPE '\\'")).first()?.decode(column: "n", as: Int.self) ?? 0
    }

    func ids(livemode: Bool) async throws -> [String] {
        try await db.select().column("id").from("customers").where("livemode", .equal, livemode).orderBy("id").all()
            .map { try $0.decode(column: "id", as: String.self) }
    }

    /// Customers whose id is the text, or whose email or name contains it (three characters or
    /// more: the trigram index on PostgreSQL, the FTS5 trigram table on SQLite) or starts with it
    /// (one or two), ignoring case, by name; with no text, every customer by rank and name.
    ///
    /// A typed text reads at most `searchCap` + 1 matches from each index (a name prefix the
    /// first by name, a substring the first its index yields), so no text costs more than that
    /// however many customers match: when more than `searchCap` match, the pages hold the first
    /// `searchCap` of those sorted by name and `capped` says the total is a floor. One query for the
    /// page and its total; every part reads an index (the per-mode count for an empty text). On
    /// SQLite a long text first asks which of its parts is rarest (see `rarePart(of:)`).
    func search(
        _ text: String, kind customerKind: CustomerRecord.Kind?, livemode: Bool, page: Int, perPage: Int
    ) async throws -> (customers: [CustomerRecord], total: Int?, capped: Bool) {
        let offset = (page - 1) * perPage
        if text.isEmpty {
            // The ranked listing index serves the order and the kind; the count per mode is kept.
            let ofKind: SQLQueryString = customerKind.map { " AND list_rank = \(bind: $0.listRank)" } ?? ""
            var count: SQLQueryString = kind == .sqlite && customerKind == nil
                ? "SELECT n FROM customer_counts WHERE livemode = \(bind: livemode)"
                : "SELECT count(*) FROM customers WHERE livemode = \(bind: livemode)"
            if customerKind != nil { count += ofKind }
            var pageQuery: SQLQueryString = "SELECT *, ("
            pageQuery += count
            pageQuery += ") AS total FROM customers WHERE livemode = \(bind: livemode)"
            pageQuery += ofKind
            pageQuery += " ORDER BY list_rank, name, id LIMIT \(bind: perPage) OFFSET \(bind: offset)"
            let (customers, total) = try await pageAndTotal(pageQuery)
            return (customers, total, false)
        }
        let limit = min(perPage, Self.searchCap - offset)
        guard limit > 0 else { return ([], nil, false) }
        let probe = Self.searchCap + 1
        let ofKind: SQLQueryString = customerKind.map { " AND kind = \(bind: $0.rawValue)" } ?? ""
        let mode: SQLQueryString = "livemode = \(bind: livemode)"
        // Each arm yields keys (the rowid on SQLite, the id on PostgreSQL) and, where its index
        // holds them, the page's order too (SQLite's prefixes: `sorted`).
        var arms: [SQLQueryString] = []
        let sorted = kind == .sqlite && text.count < 3
        let key = kind == .sqlite ? "rowid" : "id"
        let yields = sorted ? "rowid AS k, lower(name) AS s, id AS i" : "\(key) AS k"
        arms.append("SELECT \(unsafeRaw: yields) FROM customers WHERE \(mode) AND id = \(bind: text)\(ofKind)")
        // SQLite's substring arm (one index over both columns) leaves out the customer whose id is
        // the text, so its keys and the id arm's are disjoint and join without a union's
        // deduplication (a temporary b-tree of up to a thousand keys: a sixth of "okafor"'s query).
        let notTheId: SQLQueryString = " AND customers.id <> \(bind: text)"
        let disjoint = kind == .sqlite && !sorted
        if kind == .postgres {
            // Trigram indexes serve the substring, pattern indexes (byte order) the prefix.
            let escaped = text.escapedForLike
            for column in ["email", "name"] {
                if text.count >= 3 {
                    arms.append("SELECT id AS k FROM customers WHERE \(mode) AND lower(\(unsafeRaw: column)) LIKE \(bind: "%" + escaped + "%") ESCAPE '\\'\(ofKind) LIMIT \(bind: probe)")
                } else {
                    arms.append("SELECT id AS k FROM customers WHERE \(mode) AND lower(\(unsafeRaw: column)) LIKE \(bind: escaped + "%") ESCAPE '\\'\(ofKind) ORDER BY lower(\(unsafeRaw: column)) USING ~<~ LIMIT \(bind: probe)")
                }
            }
        } else if !sorted, let part = try await rarePart(of: text) {
            // The customers holding the text's rarest part (at most `rarePartBound` of them), the
            // whole text then checked on each; past the bound, the whole text's phrase (the CASE
            // leaves FTS5 an empty phrase, which matches nothing, in the arm not taken).
            let overflow: SQLQueryString = "(SELECT count(*) FROM part) > \(bind: Self.rarePartBound)"
            arms.append("""
                WITH part AS MATERIALIZED (SELECT rowid AS r FROM customer_search WHERE customer_search MATCH \(bind: Self.phrase(part)) \
                LIMIT \(bind: Self.rarePartBound + 1)) \
                SELECT * FROM (SELECT customers.rowid AS k FROM part CROSS JOIN customers ON customers.rowid = part.r \
                WHERE NOT \(overflow) AND (instr(lower(customers.email), \(bind: text)) > 0 OR instr(lower(customers.name), \(bind: text)) > 0) \
                AND customers.\(mode)\(ofKind)\(notTheId) LIMIT \(bind: probe)) \
                UNION ALL SELECT * FROM (SELECT customers.rowid AS k FROM customer_search CROSS JOIN customers ON customers.rowid = customer_search.rowid \
                WHERE customer_search MATCH CASE WHEN \(overflow) THEN \(bind: Self.phrase(text)) ELSE '""' END \
                AND customers.\(mode)\(ofKind)\(notTheId) LIMIT \(bind: probe))
                """)
        } else if !sorted {
            // The match first, then its customer (CROSS JOIN keeps that order).
            arms.append("""
                SELECT customers.rowid AS k FROM customer_search CROSS JOIN customers ON customers.rowid = customer_search.rowid \
                WHERE customer_search MATCH \(bind: Self.phrase(text)) AND customers.\(mode)\(ofKind)\(notTheId) LIMIT \(bind: probe)
                """)
        } else {
            // Each prefix index holds the name and id after its column: no row is read to sort.
            let upper = text + "\u{10FFFF}"
            for (column, order) in [("name", "lower(name), id"), ("email", "lower(email), lower(name), id")] {
                arms.append("""
                    SELECT \(unsafeRaw: yields) FROM customers WHERE \(mode) AND lower(\(unsafeRaw: column)) >= \(bind: text) \
                    AND lower(\(unsafeRaw: column)) < \(bind: upper)\(ofKind) ORDER BY \(unsafeRaw: order) LIMIT \(bind: probe)
                    """)
            }
        }
        var pageQuery: SQLQueryString
        if sorted {
            // Each arm kept apart: the page is the first of each arm's first `offset + limit` by
            // name, and the union (its duplicates removed) is counted only when no arm reached
            // the cap: sorting and deduplicating a thousand keys was half of a prefix's cost.
            pageQuery = "WITH "
            for (index, arm) in arms.enumerated() {
                pageQuery += index > 0 ? ", arm\(unsafeRaw: String(index)) AS MATERIALIZED (" : "arm0 AS MATERIALIZED ("
                pageQuery += arm
                pageQuery += ")"
            }
            let others = 1..<arms.count
            pageQuery += " SELECT c.*, CASE WHEN "
            pageQuery += others.map { "(SELECT count(*) FROM arm\(unsafeRaw: String($0))) > \(bind: Self.searchCap)" as SQLQueryString }
                .joined(separator: " OR ")
            pageQuery += " THEN \(bind: probe) ELSE (SELECT count(*) FROM (SELECT k FROM arm0"
            for index in others { pageQuery += " UNION SELECT k FROM arm\(unsafeRaw: String(index))" }
            pageQuery += ")) END AS total FROM (SELECT k, s, i FROM arm0"
            for index in others {
                pageQuery += " UNION SELECT * FROM (SELECT k, s, i FROM arm\(unsafeRaw: String(index)) ORDER BY s, i LIMIT \(bind: offset + limit))"
            }
            pageQuery += " ORDER BY s, i LIMIT \(bind: limit) OFFSET \(bind: offset)) AS p"
            pageQuery += " CROSS JOIN customers AS c ON c.rowid = p.k ORDER BY p.s, p.i"
        } else {
            pageQuery = "WITH matched AS MATERIALIZED ("
            for (index, arm) in arms.enumerated() {
                if index > 0 { pageQuery += disjoint ? " UNION ALL " : " UNION " }
                pageQuery += "SELECT k FROM ("
                pageQuery += arm
                pageQuery += ") AS arm\(unsafeRaw: String(index))"
            }
            // Byte order of the lowercased name on both engines.
            pageQuery += ") SELECT c.*, (SELECT count(*) FROM matched) AS total FROM "
            pageQuery += kind == .sqlite
                ? "matched CROSS JOIN customers AS c ON c.rowid = matched.k ORDER BY lower(c.name), c.id"
                : "matched JOIN customers AS c ON c.id = matched.k ORDER BY lower(c.name) COLLATE \"C\", c.id"
            pageQuery += " LIMIT \(bind: limit) OFFSET \(bind: offset)"
        }
        let (customers, total) = try await pageAndTotal(pageQuery)
        return (customers, total.map { min($0, Self.searchCap) }, (total ?? 0) > Self.searchCap)
    }

    /// At most this many matches of a typed text are counted and paged.
    static let searchCap = 1_000

    // MARK: The rare part of a long text (SQLite)
    //
    // FTS5 matches a phrase by stepping every one of its trigrams' lists in turn, and a trigram
    // most customers hold ("cus", "@gm") has a list as long as the table: a million-customer
    // search for "customer4242@bench" read ten such lists (0.44 ms), "4242@bench" 11 ms. A long
    // text is found instead through its rarest run of four trigrams (six characters, "r4242@":
    // 0.05 ms), the whole text checked on each customer that part finds. Which run is rarest is
    // estimated from each trigram's first 64 entries (`trigramCounts`); an estimate only chooses
    // the way, never the answer: a part that finds more than `rarePartBound` customers gives way
    // to the whole phrase in the same query.

    /// Trigrams in the part searched first.
    static let rarePartTrigrams = 4
    /// Texts this long or longer (in ASCII characters) look for a rare part; shorter ones are their
    /// own part. Longer than `rarePartLongest`: the whole phrase (no typed search is that long).
    static let rarePartShortest = rarePartTrigrams + 3
    static let rarePartLongest = 64
    /// A part estimated to find more customers than this is not used.
    static let rarePartExpected = 500.0
    /// A part that finds more customers than this gives way to the whole phrase.
    static let rarePartBound = 2_000
    /// Entries read from each trigram's list to estimate its length.
    static let trigramSample = 64

    /// The part of `text` to search first, or nil for the whole phrase: an ASCII text (SQLite's
    /// `lower` and `instr`, which check the whole text, are the FTS5 folding only for ASCII) of
    /// `rarePartShortest` to `rarePartLongest` characters whose rarest part is rare enough.
    private func rarePart(of text: String) async throws -> String? {
        guard kind == .sqlite, (Self.rarePartShortest...Self.rarePartLongest).contains(text.unicodeScalars.count),
              text.unicodeScalars.allSatisfy({ (0x20..<0x7F).contains($0.value) }) else { return nil }
        let (counts, customers) = try await trigramCounts(Set(Self.trigrams(of: text)))
        return Self.rarePart(of: text, counts: counts, customers: customers)
    }

    /// The text's trigrams in order (ASCII text: one character, one byte).
    static func trigrams(of text: String) -> [String] {
        let bytes = Array(text.utf8)
        guard bytes.count >= 3 else { return [] }
        return (0...(bytes.count - 3)).map { String(decoding: bytes[$0..<($0 + 3)], as: UTF8.self) }
    }

    /// Of the runs of `rarePartTrigrams` trigrams of `text`, the one expected to find the fewest
    /// customers (the customers times the product of each trigram's share: as if independent), as
    /// text; nil when even that one is expected to find more than `rarePartExpected`.
    static func rarePart(of text: String, counts: [String: Double], customers: Double) -> String? {
        let trigrams = trigrams(of: text)
        guard trigrams.count >= rarePartTrigrams, customers > 0 else { return nil }
        let logShare = trigrams.map { log(max(counts[$0] ?? customers, 0.5) / customers) }
        var best = (start: 0, score: Double.infinity)
        for start in 0...(trigrams.count - rarePartTrigrams) {
            let score = logShare[start..<(start + rarePartTrigrams)].reduce(0, +)
            if score < best.score { best = (start, score) }
        }
        guard customers * exp(best.score) <= rarePartExpected else { return nil }
        let bytes = Array(text.utf8)
        return String(decoding: bytes[best.start..<(best.start + rarePartTrigrams + 2)], as: UTF8.self)
    }

    /// How many customers (both modes) each trigram's list holds, estimated in one query from its
    /// first `trigramSample` entries (fewer: exactly that many; else the sample's share of the
    /// rowids so far), and the highest rowid.
    private func trigramCounts(_ trigrams: Set<String>) async throws -> (counts: [String: Double], customers: Double) {
        let ordered = trigrams.sorted()
        let sample = Self.trigramSample
        var query: SQLQueryString = "SELECT (SELECT max(rowid) FROM customers) AS n"
        // The sample is written into the statement, not bound: a LIMIT on the search index is
        // handed to it as a value, and SQLite prepared a statement with a bound one again each run.
        for (index, trigram) in ordered.enumerated() {
            query += ", (SELECT CASE WHEN count(*) < \(literal: sample) THEN -count(*) ELSE max(r) END FROM (SELECT rowid AS r FROM customer_search "
            query += "WHERE customer_search MATCH \(bind: Self.phrase(trigram)) LIMIT \(literal: sample))) AS t\(unsafeRaw: String(index))"
        }
        guard let row = try await db.raw(query).first() else { return ([:], 0) }
        let customers = Double(try row.decode(column: "n", as: Int?.self) ?? 0)
        var counts: [String: Double] = [:]
        for (index, trigram) in ordered.enumerated() {
            let probe = try row.decode(column: "t\(index)", as: Int.self)
            counts[trigram] = probe <= 0 ? Double(-probe) : Double(sample) * customers / Double(probe)
        }
        return (counts, customers)
    }

    /// The rows of a page query whose every row carries the total (nil: no row).
    private func pageAndTotal(_ query: SQLQueryString) async throws -> ([CustomerRecord], Int?) {
        let rows = try await db.raw(query).all()
        let customers = try rows.map { try RowRecord.decode(CustomerRecord.self, from: $0) }
        return (customers, try rows.first?.decode(column: "total", as: Int.self))
    }

    /// `text` as one FTS5 phrase, bound as a value: its quotes doubled (every quote scalar, even
    /// one a combining mark or an emoji modifier joins), so operators, column
    /// filters and `*` in it are only text; control characters dropped (FTS5 reads a NUL as the
    /// end of the query, and no name or email holds one).
    static func phrase(_ text: String) -> String {
        let clean = text.removingControlCharacters
        return "\"" + clean.replacingScalars { $0 == "\"" ? "\"\"" : nil } + "\""
    }
}

/// The customers one `Repositories` has seen (see `SQLCustomerRepository.seen`): a customer, or
/// `.some(nil)` for an id known to have none.
final class SeenCustomers: Sendable {
    private let rows = Mutex<[String: CustomerRecord?]>([:])

    subscript(id: String) -> CustomerRecord?? {
        get { rows.withLock { $0[id] } }
        set { rows.withLock { $0[id] = newValue } }
    }

    func forget(_ id: String) { _ = rows.withLock { $0.removeValue(forKey: id) } }
}
