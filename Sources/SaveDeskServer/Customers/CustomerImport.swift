import Foundation
import Logging
import RetentionDomain

/// `savedesk-server import customers FILE`: a company's existing subscribers, from CSV (with a
/// header) or JSON Lines, as customers of the mode each row names. An upsert by id: a new id is a
/// new customer, a known one gets the fields given (empty ones leave it as it is), and a re-run
/// changes nothing.
///
/// The whole file is checked first (every field by `CustomerFields`; ids and tokens unique in the
/// file; no id of the other mode's data, no token another customer holds): any problem is
/// reported (line, field, why) and nothing is written. Then rows are written in batches of
/// `batchSize`, each batch one transaction, each customer written audited as `import`, and the
/// search index is compacted (`Store.compactSearchIndex`). `dryRun` checks and counts what would
/// change without writing.
public enum CustomerImport {
    public struct Problem: Sendable, CustomStringConvertible {
        public var line: Int
        public var field: String?
        public var message: String
        public var description: String { "line \(line): " + (field.map { "\($0): " } ?? "") + message }
    }

    public struct Report: Sendable {
        public var rows = 0
        public var created = 0
        public var updated = 0
        public var unchanged = 0
        public var problems: [Problem] = []
        /// Problems found past the first `maxProblems` (counted, not listed).
        public var moreProblems = 0
        public var dryRun = false
        public var succeeded: Bool { problems.isEmpty }
    }

    /// How far an import is: checking or writing, bytes of the file read, rows done.
    public struct Progress: Sendable {
        public enum Phase: String, Sendable { case checking, writing }
        public var phase: Phase
        public var bytesRead: Int64
        public var totalBytes: Int64
        public var rows: Int
    }

    public static let batchSize = 1_000
    public static let maxProblems = 100

    static let columns = Set(CustomerFields.Field.allCases.map(\.rawValue))

    /// One checked row.
    struct Row {
        var line: Int
        var values: CustomerFields.Values
        var livemode: Bool
    }

    public static func run(
        file path: String, databasePath: String, dryRun: Bool = false, logger: Logger = Logger(label: "savedesk.import"),
        progress: (@Sendable (Progress) -> Void)? = nil
    ) async throws -> Report {
        let file = try CustomerFile(path: path)
        let store = try await Store.open(path: databasePath, logger: logger)
        do {
            let report = try await run(file, store: store, dryRun: dryRun, progress: progress)
            await store.close()
            return report
        } catch {
            await store.close()
            throw error
        }
    }

    static func run(_ file: CustomerFile, store: Store, dryRun: Bool, progress: (@Sendable (Progress) -> Void)?) async throws -> Report {
        var report = Report(dryRun: dryRun)
        let total = file.size
        func problem(_ line: Int, _ field: String?, _ message: String) {
            if report.problems.count < maxProblems {
                report.problems.append(Problem(line: line, field: field, message: message))
            } else {
                report.moreProblems += 1
            }
        }
        // 1. Check everything.
        var ids: [String: Int] = [:], tokens: [String: Int] = [:]
        var pending: [Row] = []
        func checkAgainstStore() async throws {
            guard !pending.isEmpty else { return }
            let rows = pending
            pending = []
            let clashes = try await store.read { data in try await clashesWithStore(rows, data) }
            for clash in clashes { problem(clash.line, clash.field, clash.message) }
        }
        do {
            try await read(file, problem: { line, field, message in
                report.rows += 1
                problem(line, field, message)
            }) { row, bytes in
                report.rows += 1
                if let first = ids[row.values.id] {
                    problem(row.line, "id", "duplicate id \"\(RequestValidator.quote(row.values.id))\" (first on line \(first))")
                } else {
                    ids[row.values.id] = row.line
                }
                if let token = row.values.appAccountToken {
                    if let first = tokens[token] { problem(row.line, "app_account_token", "the same token as line \(first)") } else { tokens[token] = row.line }
                }
                pending.append(row)
                if pending.count == batchSize { try await checkAgainstStore() }
                progress?(Progress(phase: .checking, bytesRead: bytes, totalBytes: total, rows: report.rows))
            }
        } catch let header as HeaderProblem {
            problem(1, nil, header.message)
            return report
        }
        try await checkAgainstStore()
        guard report.problems.isEmpty else { return report }

        // 2. Write (or, for a dry run, write and roll back), batch by batch.
        var written = 0
        func flush() async throws {
            guard !pending.isEmpty else { return }
            let rows = pending
            pending = []
            let outcomes = try await apply(rows, store: store, dryRun: dryRun, file: file.path)
            report.created += outcomes.created
            report.updated += outcomes.updated
            report.unchanged += outcomes.unchanged
            written += rows.count
        }
        try await read(file, problem: { _, _, _ in }) { row, bytes in
            pending.append(row)
            if pending.count == batchSize {
                try await flush()
                progress?(Progress(phase: .writing, bytesRead: bytes, totalBytes: total, rows: written))
            }
        }
        try await flush()
        if !dryRun, report.created + report.updated > 0 { try await store.compactSearchIndex() }
        progress?(Progress(phase: .writing, bytesRead: total, totalBytes: total, rows: written))
        return report
    }

    /// Each readable, valid row of the file, in order; what is not is reported to `problem`.
    static func read(
        _ file: CustomerFile, problem: (Int, String?, String) -> Void, _ body: (Row, Int64) async throws -> Void
    ) async throws {
        try await file.read(header: { names in
            let unknown = names.filter { !columns.contains($0) }
            guard unknown.isEmpty, names.contains("id"), names.contains("mode"), Set(names).count == names.count else {
                let why = !unknown.isEmpty ? "unknown column \"\(unknown[0])\" (columns: \(columns.sorted().joined(separator: ", ")))"
                    : Set(names).count != names.count ? "a column named twice" : "the header needs id and mode"
                throw HeaderProblem(message: why)
            }
        }) { record, bytes in
            switch record.fields {
            case .failure(let failure): problem(record.line, failure.field, failure.message)
            case .success(let fields):
                switch row(fields, line: record.line) {
                case .success(let row): try await body(row, bytes)
                case .failure(let problems): for item in problems.list { problem(record.line, item.field, item.message) }
                }
            }
        }
    }

    struct HeaderProblem: Error, CustomStringConvertible {
        var message: String
        var description: String { "line 1: \(message)" }
    }

    struct RowProblems: Error {
        var list: [(field: String?, message: String)]
    }

    /// A record's fields as a checked row.
    static func row(_ fields: [String: CustomerFile.FieldValue], line: Int) -> Result<Row, RowProblems> {
        if let unknown = fields.keys.first(where: { !columns.contains($0) }) {
            return .failure(RowProblems(list: [(unknown, "not a field (fields: \(columns.sorted().joined(separator: ", ")))")]))
        }
        var problems: [(field: String?, message: String)] = []
        let mode = fields["mode"]?.text?.trimmedOfWhitespace.lowercased() ?? ""
        if mode != "test" && mode != "live" { problems.append(("mode", "must be test or live, got \"\(RequestValidator.quote(mode))\"")) }
        let otids: [String]
        switch fields[CustomerFields.Field.appStoreOriginalTransactionIds.rawValue] {
        case .list(let list)?: otids = list
        case .text(let text)?: otids = text.split(whereSeparator: { $0 == ";" || $0.isWhitespace }).map(String.init)
        case nil: otids = []
        }
        let checked = CustomerFields.Values.check(
            id: fields["id"]?.text ?? "", name: fields["name"]?.text, email: fields["email"]?.text, country: fields["country"]?.text,
            appAccountToken: fields["app_account_token"]?.text, billingCustomerId: fields["billing_customer_id"]?.text,
            originalTransactionIds: otids
        )
        switch checked {
        case .failure(let found): problems += found.list.map { ($0.field.rawValue, $0.message) }
        case .success(let values) where problems.isEmpty: return .success(Row(line: line, values: values, livemode: mode == "live"))
        case .success: break
        }
        return .failure(RowProblems(list: problems))
    }

    /// Rows the store refuses: an id of the other mode's data, a token another customer holds.
    static func clashesWithStore(_ rows: [Row], _ data: Repositories) async throws -> [Problem] {
        var clashes: [Problem] = []
        try await data.customers.prefetch(ids: rows.map(\.values.id))
        for row in rows {
            if let existing = try await data.customers.find(id: row.values.id), existing.livemode != row.livemode {
                clashes.append(Problem(line: row.line, field: "mode", message: "customer \(RequestValidator.quote(row.values.id)) is \(existing.livemode ? "live" : "test") data"))
            }
            if let token = row.values.appAccountToken, let holder = try await data.customers.find(appAccountToken: token, livemode: row.livemode),
                holder.id != row.values.id
            {
                clashes.append(Problem(line: row.line, field: "app_account_token", message: "customer \(RequestValidator.quote(holder.id)) holds it"))
            }
        }
        return clashes
    }

    struct RolledBack: Error { var counts: (created: Int, updated: Int, unchanged: Int) }

    /// One batch in one transaction: each row upserted, each change audited.
    static func apply(_ rows: [Row], store: Store, dryRun: Bool, file: String) async throws -> (created: Int, updated: Int, unchanged: Int) {
        do {
            return try await store.transaction(key: "import") { data in
                var counts = (created: 0, updated: 0, unchanged: 0)
                let now = Int64(Date().timeIntervalSince1970)
                let requestId = "import:" + RequestScope.newRequestId()
                let fileName = URL(fileURLWithPath: file).lastPathComponent
                // The batch's customers in a few queries, not one a row (the upsert finds them).
                try await data.customers.prefetch(ids: rows.map(\.values.id))
                for row in rows {
                    let outcome = try await CustomerService.upsert(row.values, livemode: row.livemode, data, now: now)
                    let before: CustomerRecord?
                    switch outcome {
                    case .unchanged:
                        counts.unchanged += 1
                        continue
                    case .created: counts.created += 1; before = nil
                    case .updated(let old, _): counts.updated += 1; before = old
                    }
                    try await data.audit.append(AuditRecord(
                        id: AuditID.next(), at: now, actor: "import", customerId: row.values.id, action: "customer.imported",
                        parameters: try ChangeTransaction.json(["file": fileName, "line": String(row.line)]),
                        beforeState: try before.map(ChangeTransaction.json), afterState: try ChangeTransaction.json(outcome.record),
                        requestId: requestId
                    ))
                }
                if dryRun { throw RolledBack(counts: counts) }
                return counts
            }
        } catch let rolledBack as RolledBack {
            return rolledBack.counts
        }
    }
}
