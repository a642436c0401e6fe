import RetentionDomain
import Foundation
import SQLKit

/// The recorded ends of cancel flows, their answers, and the rollups kept with them.
///
/// A response is written with its answers and listed in `cancel_flow_unrolled`; a job folds the
/// list, four times a second (at most `foldChunk` responses a transaction), into rollup tables
/// keyed by UTC day, by hour and by five minutes:
/// `cancel_flow_daily`, `cancel_flow_hourly` and `cancel_flow_5min` (per actor and outcome: how
/// many, and how many were shown or accepted an offer or a pause) and the `_counts` table of each
/// (per actor, a count per value of the last step reached, the pause length taken, each option
/// chosen and each free-text answer; actor `*` holds every actor's sum). The funnel then reads
/// whole days from the daily rollups, whole hours of the partial days at its range's ends from the
/// hourly ones, whole five minutes of the partial hours from the five-minute ones (plus, for all,
/// the few responses not folded yet), and rows only for the partial five minutes at either end, so
/// its cost grows with days, hours and five minutes, never with a day's or an hour's responses.
protocol CancelFlowResponseRepository: Sendable {
    /// Writes a response and its answers, listed for the next fold into the rollups.
    func insert(_ row: CancelFlowResponseRow) async throws
    /// The inserts `insert` runs, for a change to carry with its audit row.
    func inserts(_ row: CancelFlowResponseRow) -> Inserts
    /// Folds the responses of one mode not yet rolled up into the rollups, at most `first` of
    /// them (the earliest listed); returns how many.
    func foldUnrolled(livemode: Bool, first: Int) async throws -> Int
    /// The responses of the mode waiting for the next fold: how many, and when the oldest was
    /// made (nil: none waits).
    func unrolledBacklog(livemode: Bool) async throws -> (count: Int, oldest: Int64)?
    /// Empties the rollups and fills them again from every stored response (after a bulk load).
    func rebuildRollups() async throws
    /// The funnel's figures over `[from, to)` (nil: no limit), for one actor or all, with the
    /// newest free-text answers (up to `samples`) to each of `questions`; one statement.
    func figures(livemode: Bool, from: Int64?, to: Int64?, actor: String?, samplesOf questions: [Int], samples: Int) async throws -> CancelFlowFigures
    /// The answers (JSON, as the SDK sent them) of the customer's latest response for a product.
    func latestAnswers(customerId: String, productId: String) async throws -> String?
}

/// The rollups' keys and the split of a range into whole days and partial ones.
enum CancelFlowRollups {
    /// The key a fold takes (one fold at a time, across instances). Responses never take it: they
    /// only list themselves in `cancel_flow_unrolled`, so they never queue behind each other.
    static let lockKey = "cancel-flow:rollups"
    /// The most responses one fold's transaction takes: a fold holds the writer (SQLite) or the
    /// rollups' rows (PostgreSQL) while it runs, and a quarter second's listed under load (500
    /// responses, 10 ms on 2 cores) held every change waiting behind it that long, every quarter
    /// second: the writes' p99. A longer list is folded in turns, the changes waiting between them.
    static let foldChunk = 128

    /// The actor of the rollup rows that sum every actor's.
    static let everyActor = "*"

    static let day = Seconds.wholeDay

    /// A rollup's time bucket: its tables and its key column. Coarsest first: a range is split
    /// in that order.
    enum Grain: CaseIterable, Sendable {
        case day, hour, fiveMinutes

        var seconds: Int64 {
            switch self {
            case .day: Seconds.wholeDay
            case .hour: Seconds.wholeHour
            case .fiveMinutes: 5 * 60
            }
        }
        var table: String {
            switch self {
            case .day: "cancel_flow_daily"
            case .hour: "cancel_flow_hourly"
            case .fiveMinutes: "cancel_flow_5min"
            }
        }
        var countsTable: String { table + "_counts" }
        /// The bucket's start (Unix seconds).
        var column: String {
            switch self {
            case .day: "day"
            case .hour: "hour"
            case .fiveMinutes: "minute"
            }
        }
    }

    /// What `cancel_flow_daily_counts` counts.
    enum Dimension: String, Sendable {
        /// The last step reached (`value`).
        case step
        /// The pause length taken, in days (`value`).
        case pauseDays = "pause_days"
        /// An option (`value`) chosen for a question.
        case option
        /// A free-text answer to a question.
        case freeText = "free_text"
    }

    /// What one response adds to the rollups: the rule the fold (`Schema.addToRollups`) and the
    /// funnel's rows (the partial ends, the responses not folded yet) share. To its actor's and
    /// outcome's row: one to `n`, and one to each of `flags` it has set.
    static let flags = ["offer_shown", "offer_accepted", "pause_shown", "pause_accepted"]
    /// One if `flag` is set, else zero (SQL, on either engine's flags).
    static func oneIf(_ flag: String) -> String { "CASE WHEN \(flag) THEN 1 ELSE 0 END" }

    /// And one to each count whose rows (its answers or the response itself, `filter`) it has:
    /// the count of `dimension` keyed by the `question` and `value` columns (SQL).
    struct Counted: Sendable {
        var dimension: Dimension, question: String, value: String, fromAnswers: Bool, filter: String
    }
    static let counted = [
        Counted(dimension: .step, question: "0", value: "last_step_seen", fromAnswers: false, filter: "1 = 1"),
        Counted(dimension: .pauseDays, question: "0", value: "pause_duration_days", fromAnswers: false,
                filter: "pause_accepted AND pause_duration_days IS NOT NULL"),
        Counted(dimension: .option, question: "question_id", value: "option_id", fromAnswers: true, filter: "option_id IS NOT NULL"),
        Counted(dimension: .freeText, question: "question_id", value: "0", fromAnswers: true, filter: "has_text"),
    ]

    /// A time range, either end open (nil).
    typealias Span = (from: Int64?, to: Int64?)

    /// `[from, to)` as whole buckets of each grain, coarsest first: whole UTC days (read from the
    /// daily rollups), the whole hours of the partial days at its ends (the hourly ones), the
    /// whole five minutes of the partial hours (the five-minute ones), and the partial five
    /// minutes at its ends (read from the rows). The buckets tile one span, `[rows' first end,
    /// rows' second start)`.
    static func split(from: Int64?, to: Int64?) -> (buckets: [(grain: Grain, span: Span)], rows: [Span]) {
        var buckets: [(grain: Grain, span: Span)] = [], pending: [Span] = [(from, to)]
        for grain in Grain.allCases {
            var finer: [Span] = []
            for part in pending {
                let byGrain = split(part, by: grain.seconds)
                if let whole = byGrain.whole { buckets.append((grain, whole)) }
                finer += byGrain.partial
            }
            pending = finer
        }
        return (buckets, pending)
    }

    /// `span` as whole buckets of `length` seconds and the partial ones at its ends. A span within
    /// one bucket is all partial.
    static func split(_ span: Span, by length: Int64) -> (whole: Span?, partial: [Span]) {
        let first = span.from.map { start($0, length) == $0 ? $0 : start($0, length) + length }
        let end = span.to.map { start($0, length) }
        if let first, let end, first >= end { return (nil, [span]) }
        var partial: [Span] = []
        if let from = span.from, let first, first != from { partial.append((from, first)) }
        if let to = span.to, let end, end != to { partial.append((end, to)) }
        return ((first, end), partial)
    }

    /// The start of the UTC day that holds `seconds`.
    static func dayStart(_ seconds: Int64) -> Int64 { start(seconds, day) }

    /// The start of the bucket of `length` seconds that holds `seconds`.
    static func start(_ seconds: Int64, _ length: Int64) -> Int64 {
        seconds - ((seconds % length) + length) % length
    }
}

/// One response as it is stored.
struct CancelFlowResponseRow: Sendable {
    struct Answer: Sendable {
        var questionId: Int
        var optionId: Int?
        var freeText: String?
    }

    var id: String
    var customerId: String
    var productId: String
    var outcome: String
    var offerShown: Bool
    var offerAccepted: Bool
    var pauseShown: Bool
    var pauseAccepted: Bool
    var pauseDurationDays: Int?
    var lastStepSeen: Int
    var answers: [Answer]
    /// The answers as the SDK sent them (JSON), kept for the customer's history.
    var answersJSON: String
    var variantId: String?
    var actor: String
    var livemode: Bool
    var createdAt: Int64
}

/// The funnel's figures over `[from, to)` (nil: no limit), for one actor or all.
struct CancelFlowFigures: Sendable, Equatable {
    typealias Dimension = CancelFlowRollups.Dimension

    /// Responses per actor and outcome.
    var outcomes: [String: [String: Int]] = [:]
    var offerShown = 0, offerAccepted = 0, pauseShown = 0, pauseAccepted = 0
    /// Pauses taken per length in days.
    var pauseDurations: [Int: Int] = [:]
    /// Responses per last step reached.
    var lastSteps: [Int: Int] = [:]
    /// Per question: how often each option was chosen.
    var options: [Int: [Int: Int]] = [:]
    /// Per question: how many free-text answers.
    var freeTexts: [Int: Int] = [:]
    /// Per question asked for: its newest free-text answers, newest first.
    var samples: [Int: [String]] = [:]

    mutating func add(_ dimension: Dimension, question: Int, value: Int, count n: Int) {
        switch dimension {
        case .step: lastSteps[value, default: 0] += n
        case .pauseDays: pauseDurations[value, default: 0] += n
        case .option: options[question, default: [:]][value, default: 0] += n
        case .freeText: freeTexts[question, default: 0] += n
        }
    }
}

struct SQLCancelFlowResponseRepository: CancelFlowResponseRepository {
    typealias Row = CancelFlowResponseRow
    typealias Figures = CancelFlowFigures
    typealias Dimension = CancelFlowRollups.Dimension
    typealias Span = CancelFlowRollups.Span
    let db: any SQLDatabase
    let kind: Store.Kind

    /// Writes `row` and its answers, and lists it for the next fold (`inserts`).
    func insert(_ row: Row) async throws {
        try await inserts(row).run(on: db, kind: kind)
    }

    /// The inserts of `row`, its answers and its listing for the next fold: on PostgreSQL one
    /// statement, and a change carries them in its audit row's (`ChangeTransaction.Change.writing`).
    /// The answers are only ever written here, with their response (PostgreSQL does not check
    /// their reference to it: see migration 19).
    func inserts(_ row: Row) -> Inserts {
        let response = db.insert(into: "cancel_flow_responses")
            .columns(
                "id", "customer_id", "product_id", "outcome", "offer_shown", "offer_accepted", "pause_shown",
                "pause_accepted", "pause_duration_days", "last_step_seen", "answers", "variant_id", "actor", "created_at",
                "livemode"
            )
            .values(SQLBindings.of(
                row.id, row.customerId, row.productId, row.outcome, row.offerShown, row.offerAccepted, row.pauseShown,
                row.pauseAccepted, row.pauseDurationDays, row.lastStepSeen, row.answersJSON, row.variantId, row.actor,
                row.createdAt, row.livemode
            ))
        let answers = row.answers.isEmpty ? nil : db.insert(into: "cancel_flow_answers")
            .columns("response_id", "question_id", "option_id", "free_text", "has_text", "actor", "created_at", "livemode")
        for answer in row.answers {
            answers?.values(SQLBindings.of(row.id, answer.questionId, answer.optionId, answer.freeText, answer.freeText != nil,
                                           row.actor, row.createdAt, row.livemode))
        }
        let listed = db.insert(into: "cancel_flow_unrolled").columns("response_id", "livemode", "created_at")
            .values(SQLBindings.of(row.id, row.livemode, row.createdAt))
        return Inserts([response.insert] + (answers.map { [$0.insert] } ?? []) + [listed.insert])
    }

    /// Folds every response not yet rolled up into the rollups, then empties the list. Runs in a
    /// write transaction holding `CancelFlowRollups.lockKey`; on PostgreSQL its snapshot fixes
    /// the list, so a response committed meanwhile waits for the next fold. Returns how many.
    func unrolledBacklog(livemode: Bool) async throws -> (count: Int, oldest: Int64)? {
        let row = try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n")
            .column(SQLFunction("min", args: SQLIdentifier("created_at")), as: "oldest")
            .from("cancel_flow_unrolled").where("livemode", .equal, livemode).first()
        guard let row, let count = try? row.decode(column: "n", as: Int.self), count > 0 else { return nil }
        return (count, try row.decode(column: "oldest", as: Int64.self))
    }

    func foldUnrolled(livemode: Bool, first: Int) async throws -> Int {
        // Planned on each run: the list's and the responses' sizes change all the time, and a
        // fold's cost must follow what it folds, not the plan of a smaller table.
        let db = db.plannedEachRun
        let chunk = Schema.unrolledIds(livemode: livemode, first: first)
        let pending = try await db.raw("SELECT count(*) AS n FROM \(unsafeRaw: chunk) AS chunk").first()?.decode(column: "n", as: Int.self) ?? 0
        guard pending > 0 else { return 0 }
        for grain in CancelFlowRollups.Grain.allCases {
            let statements = Schema.addToRollups(
                grain, responses: Schema.unrolledResponses(kind, livemode: livemode, first: first),
                answers: Schema.unrolledAnswers(kind, livemode: livemode, first: first), upsert: true
            )
            for statement in statements { try await db.raw(SQLQueryString(statement)).run() }
        }
        try await db.raw("DELETE FROM cancel_flow_unrolled WHERE response_id IN \(unsafeRaw: chunk)").run()
        return pending
    }

    func rebuildRollups() async throws {
        let rollups = CancelFlowRollups.Grain.allCases.flatMap { [$0.table, $0.countsTable] }
        for table in rollups + ["cancel_flow_unrolled"] { try await db.delete(from: table).run() }
        for statement in Schema.fillRollups { try await db.raw(SQLQueryString(statement)).run() }
    }

    // MARK: Reading

    /// One statement whatever the range (`SQLQueriesAsJSON`): the outcomes and the counts, each
    /// summed over the rollups of every whole bucket and the rows of the partial five minutes at
    /// the range's ends and of the whole buckets' responses the fold has not reached yet (each row
    /// adding what the fold would add); and the newest free-text answers to each of `questions`.
    func figures(livemode: Bool, from: Int64?, to: Int64?, actor: String?, samplesOf questions: [Int], samples: Int) async throws -> Figures {
        var figures = Figures(), read = SQLQueriesAsJSON(kind: kind)
        let split = CancelFlowRollups.split(from: from, to: to)
        // The rows: the partial ends from the tables, and, over the span the buckets tile, the
        // responses listed for the next fold (from the short list to the rows by key, never by
        // scanning the range).
        var sources = split.rows.map { (span: $0, listedOnly: false) }
        if let first = split.buckets.first {
            let tiled = split.buckets.dropFirst().reduce(first.span) { span, bucket in
                (span.from.flatMap { a in bucket.span.from.map { min(a, $0) } }, span.to.flatMap { a in bucket.span.to.map { max(a, $0) } })
            }
            sources.append((tiled, true))
        }
        let outcomes = read.add(Self.outcomeQuery(kind, livemode: livemode, buckets: split.buckets, sources: sources, actor: actor), columns: OutcomeSum.columns)
        let counts = read.add(Self.countQuery(kind, livemode: livemode, buckets: split.buckets, sources: sources, actor: actor), columns: CountSum.columns)
        let sampled = questions.isEmpty ? nil
            : read.add(Self.sampleQuery(questions: questions, livemode: livemode, span: (from, to), actor: actor, limit: samples), columns: Sample.columns)
        guard let row = try await read.run(on: db) else { return figures }

        for sum in try SQLQueriesAsJSON.rows(row, outcomes, as: OutcomeSum.self) {
            figures.outcomes[sum.actor, default: [:]][sum.outcome, default: 0] += sum.n
            figures.offerShown += sum.offerShown
            figures.offerAccepted += sum.offerAccepted
            figures.pauseShown += sum.pauseShown
            figures.pauseAccepted += sum.pauseAccepted
        }
        for count in try SQLQueriesAsJSON.rows(row, counts, as: CountSum.self) {
            guard let dimension = Dimension(rawValue: count.dimension) else { continue }
            figures.add(dimension, question: count.questionId, value: count.value, count: count.n)
        }
        if let sampled {
            // Newest first (a union's rows come in no promised order; ties keep the order read).
            let newest = try SQLQueriesAsJSON.rows(row, sampled, as: Sample.self).enumerated()
                .sorted { ($0.element.createdAt, -$0.offset) > ($1.element.createdAt, -$1.offset) }
            for sample in newest.map(\.element) { figures.samples[sample.questionId, default: []].append(sample.freeText) }
        }
        return figures
    }

    /// What the funnel's queries return, a row each (`SQLQueriesAsJSON`'s keys are the columns,
    /// spelled out: JSONDecoder's snake_case conversion was a third of a request's time); each
    /// query's columns are its row's CodingKeys.
    private struct OutcomeSum: Decodable {
        static let columns = CodingKeys.allCases.map(\.rawValue)
        var actor: String, outcome: String
        var n: Int, offerShown: Int, offerAccepted: Int, pauseShown: Int, pauseAccepted: Int
        enum CodingKeys: String, CodingKey, CaseIterable {
            case actor, outcome, n, offerShown = "offer_shown", offerAccepted = "offer_accepted", pauseShown = "pause_shown"
            case pauseAccepted = "pause_accepted"
        }
    }
    private struct CountSum: Decodable {
        static let columns = CodingKeys.allCases.map(\.rawValue)
        var dimension: String, questionId: Int, value: Int, n: Int
        enum CodingKeys: String, CodingKey, CaseIterable { case dimension, questionId = "question_id", value, n }
    }
    private struct Sample: Decodable {
        static let columns = CodingKeys.allCases.map(\.rawValue)
        var questionId: Int, freeText: String, createdAt: Int64
        enum CodingKeys: String, CodingKey, CaseIterable { case questionId = "question_id", freeText = "free_text", createdAt = "created_at" }
    }

    /// The condition on rows (responses, answers or rollups) of one mode with `column` in `span`,
    /// by `actor` (when given).
    private static func filter(livemode: Bool, column: String, span: Span, actor: String?) -> SQLQueryString {
        var filter: SQLQueryString = "livemode = \(bind: livemode)"
        if let from = span.from { filter += " AND \(ident: column) >= \(bind: from)" }
        if let to = span.to { filter += " AND \(ident: column) < \(bind: to)" }
        if let actor { filter += " AND actor = \(bind: actor)" }
        return filter
    }

    /// The outcomes per actor: the rollups of `buckets` and the rows of `sources`, summed.
    private static func outcomeQuery(
        _ kind: Store.Kind, livemode: Bool, buckets: [(grain: CancelFlowRollups.Grain, span: Span)], sources: [(span: Span, listedOnly: Bool)], actor: String?
    ) -> SQLQueryString {
        let sums = ["n"] + CancelFlowRollups.flags
        let rollups = buckets.map { bucket -> SQLQueryString in
            "SELECT actor, outcome, \(idents: sums, joinedBy: ", ") FROM \(ident: bucket.grain.table) WHERE "
                + filter(livemode: livemode, column: bucket.grain.column, span: bucket.span, actor: actor)
        }
        let perRow = (["1 AS n"] + CancelFlowRollups.flags.map { CancelFlowRollups.oneIf($0) + " AS " + $0 }).joined(separator: ", ")
        let rows = sources.map { source -> SQLQueryString in
            "SELECT actor, outcome, \(unsafeRaw: perRow) FROM " + Self.source(source, answers: false, kind, livemode: livemode)
                + " WHERE " + filter(livemode: livemode, column: "created_at", span: source.span, actor: actor)
        }
        // PostgreSQL sums BIGINTs as NUMERIC; the cast makes them integers on both engines.
        let summed = sums.map { "CAST(sum(\(ident: $0)) AS BIGINT) AS \(ident: $0)" as SQLQueryString }.joined(separator: ", ")
        return "SELECT actor, outcome, \(summed) FROM (\((rollups + rows).joined(separator: " UNION ALL "))) AS parts GROUP BY actor, outcome"
    }

    /// The counts: the rollups of `buckets` (one actor's, or those summing every actor's) and the
    /// rows of `sources`, summed.
    private static func countQuery(
        _ kind: Store.Kind, livemode: Bool, buckets: [(grain: CancelFlowRollups.Grain, span: Span)], sources: [(span: Span, listedOnly: Bool)], actor: String?
    ) -> SQLQueryString {
        let rollups = buckets.map { bucket -> SQLQueryString in
            "SELECT dimension, question_id, value, n FROM \(ident: bucket.grain.countsTable) WHERE "
                + filter(livemode: livemode, column: bucket.grain.column, span: bucket.span, actor: actor ?? CancelFlowRollups.everyActor)
        }
        let rows = sources.flatMap { source in
            CancelFlowRollups.counted.map { count -> SQLQueryString in
                "SELECT \(literal: count.dimension.rawValue) AS dimension, \(unsafeRaw: count.question) AS question_id, \(unsafeRaw: count.value) AS value, 1 AS n FROM "
                    + Self.source(source, answers: count.fromAnswers, kind, livemode: livemode)
                    + " WHERE " + filter(livemode: livemode, column: "created_at", span: source.span, actor: actor) + " AND \(unsafeRaw: count.filter)"
            }
        }
        return """
            SELECT dimension, question_id, value, CAST(sum(n) AS BIGINT) AS n FROM (\((rollups + rows).joined(separator: " UNION ALL "))) AS parts \
            GROUP BY dimension, question_id, value
            """
    }

    /// The rows (responses, or their `answers`) of a source: a span of the table, or the rows of
    /// the responses listed for the next fold.
    private static func source(_ source: (span: Span, listedOnly: Bool), answers: Bool, _ kind: Store.Kind, livemode: Bool) -> SQLQueryString {
        switch (source.listedOnly, answers) {
        case (false, false): "cancel_flow_responses"
        case (false, true): "cancel_flow_answers"
        case (true, false): "\(unsafeRaw: Schema.unrolledResponses(kind, livemode: livemode))"
        case (true, true): "\(unsafeRaw: Schema.unrolledAnswers(kind, livemode: livemode))"
        }
    }

    /// The newest `limit` free-text answers to each of `questions` in `span` (`has_text` as the
    /// index of text answers says it, so both engines see that the index holds them).
    static func sampleQuery(questions: [Int], livemode: Bool, span: Span, actor: String?, limit: Int) -> SQLQueryString {
        questions.map { question -> SQLQueryString in
            let newest: SQLQueryString = "SELECT \(idents: Sample.columns, joinedBy: ", ") FROM cancel_flow_answers WHERE "
                + filter(livemode: livemode, column: "created_at", span: span, actor: actor)
                + " AND question_id = \(bind: question) AND has_text ORDER BY created_at DESC LIMIT \(unsafeRaw: String(limit))"
            return "SELECT * FROM (\(newest)) AS newest"
        }.joined(separator: " UNION ALL ")
    }

    func latestAnswers(customerId: String, productId: String) async throws -> String? {
        try await db.select().column("answers").from("cancel_flow_responses")
            .where("customer_id", .equal, customerId).where("product_id", .equal, productId)
            .orderBy("created_at", .descending).limit(1).first()?.decode(column: "answers", as: String.self)
    }
}
