import RetentionDomain
import Foundation
import SQLKit

/// The recorded ends of cancel flows, their answers, and the rollups kept with them.
///
/// A response is written with its answers and listed in `cancel_flow_unrolled`; a job folds the
/// list, every second, into rollup tables keyed by UTC day, by hour and by five minutes:
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
    /// Folds the responses of one mode not yet rolled up into the rollups; returns how many.
    func foldUnrolled(livemode: Bool) async throws -> Int
    /// The responses of the mode waiting for the next fold: how many, and when the oldest was
    /// made (nil: none waits).
    func unrolledBacklog(livemode: Bool) async throws -> (count: Int, oldest: Int64)?
    /// Empties the rollups and fills them again from every stored response (after a bulk load).
    func rebuildRollups() async throws
    /// The funnel's figures over `[from, to)` (nil: no limit), for one actor or all.
    func figures(livemode: Bool, from: Int64?, to: Int64?, actor: String?) async throws -> CancelFlowFigures
    /// The newest free-text answers to `question` in `[from, to)`, newest first.
    func freeTextSamples(question: Int, livemode: Bool, from: Int64?, to: Int64?, actor: String?, limit: Int) async throws -> [String]
    /// The answers (JSON, as the SDK sent them) of the customer's latest response for a product.
    func latestAnswers(customerId: String, productId: String) async throws -> String?
}

/// The rollups' keys and the split of a range into whole days and partial ones.
enum CancelFlowRollups {
    /// The key a fold takes (one fold at a time, across instances). Responses never take it: they
    /// only list themselves in `cancel_flow_unrolled`, so they never queue behind each other.
    static let lockKey = "cancel-flow:rollups"

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

    /// Writes `row` and its answers, and lists it for the next fold. On PostgreSQL in one
    /// statement (the response and its answers as data-modifying CTEs of the listing's insert:
    /// one round trip instead of three; the answers' reference to the response is checked at the
    /// statement's end); SQLite, in the process, runs the three.
    func insert(_ row: Row) async throws {
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
        guard kind == .postgres else {
            try await response.run()
            try await answers?.run()
            return try await listed.run()
        }
        listed.with("response", as: response.insert)
        if let answers { listed.with("answers", as: answers.insert) }
        try await listed.run()
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

    func foldUnrolled(livemode: Bool) async throws -> Int {
        let pending = try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("cancel_flow_unrolled")
            .where("livemode", .equal, livemode).first()?.decode(column: "n", as: Int.self) ?? 0
        guard pending > 0 else { return 0 }
        for grain in CancelFlowRollups.Grain.allCases {
            let statements = Schema.addToRollups(
                grain, responses: Schema.unrolledResponses(livemode: livemode), answers: Schema.unrolledAnswers(livemode: livemode), upsert: true
            )
            for statement in statements { try await db.raw(SQLQueryString(statement)).run() }
        }
        try await db.delete(from: "cancel_flow_unrolled").where("livemode", .equal, livemode).run()
        return pending
    }

    func rebuildRollups() async throws {
        let rollups = CancelFlowRollups.Grain.allCases.flatMap { [$0.table, $0.countsTable] }
        for table in rollups + ["cancel_flow_unrolled"] { try await db.delete(from: table).run() }
        for statement in Schema.fillRollups { try await db.raw(SQLQueryString(statement)).run() }
    }

    // MARK: Reading

    /// Four statements whatever the range: the rollups of every whole bucket (one for the
    /// outcomes, one for the counts), and the rows of the partial five minutes at its ends with
    /// those of the whole buckets' responses the fold has not reached yet (one for the responses,
    /// one for the answers).
    func figures(livemode: Bool, from: Int64?, to: Int64?, actor: String?) async throws -> Figures {
        var figures = Figures()
        let split = CancelFlowRollups.split(from: from, to: to)
        try await addRollups(to: &figures, livemode: livemode, buckets: split.buckets, actor: actor)
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
        try await addRows(to: &figures, livemode: livemode, sources: sources, actor: actor)
        return figures
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

    /// Sums the rollups of `buckets` (every grain's in one statement per kind of table).
    private func addRollups(to figures: inout Figures, livemode: Bool, buckets: [(grain: CancelFlowRollups.Grain, span: Span)], actor: String?) async throws {
        guard !buckets.isEmpty else { return }
        let sums = ["n", "offer_shown", "offer_accepted", "pause_shown", "pause_accepted"]
        // PostgreSQL sums BIGINTs as NUMERIC; the cast makes them integers on both engines.
        let summed = sums.map { "CAST(sum(\(ident: $0)) AS BIGINT) AS \(ident: $0)" as SQLQueryString }.joined(separator: ", ")
        let outcomes = buckets.map { bucket -> SQLQueryString in
            "SELECT actor, outcome, \(idents: sums, joinedBy: ", ") FROM \(ident: bucket.grain.table) WHERE "
                + Self.filter(livemode: livemode, column: bucket.grain.column, span: bucket.span, actor: actor)
        }.joined(separator: " UNION ALL ")
        let outcomeQuery: SQLQueryString = "SELECT actor, outcome, \(summed) FROM (\(outcomes)) AS buckets GROUP BY actor, outcome"
        for row in try await db.raw(outcomeQuery).all() {
            func int(_ column: String) throws -> Int { try row.decode(column: column, as: Int.self) }
            figures.outcomes[try row.decode(column: "actor", as: String.self), default: [:]][try row.decode(column: "outcome", as: String.self), default: 0] += try int("n")
            figures.offerShown += try int("offer_shown")
            figures.offerAccepted += try int("offer_accepted")
            figures.pauseShown += try int("pause_shown")
            figures.pauseAccepted += try int("pause_accepted")
        }
        // The counts rows of one actor, or those summing every actor's.
        let counts = buckets.map { bucket -> SQLQueryString in
            "SELECT dimension, question_id, value, n FROM \(ident: bucket.grain.countsTable) WHERE "
                + Self.filter(livemode: livemode, column: bucket.grain.column, span: bucket.span, actor: actor ?? CancelFlowRollups.everyActor)
        }.joined(separator: " UNION ALL ")
        let countQuery: SQLQueryString = """
            SELECT dimension, question_id, value, CAST(sum(n) AS BIGINT) AS n FROM (\(counts)) AS buckets GROUP BY dimension, question_id, value
            """
        for row in try await db.raw(countQuery).all() {
            guard let dimension = Dimension(rawValue: try row.decode(column: "dimension", as: String.self)) else { continue }
            figures.add(dimension, question: try row.decode(column: "question_id", as: Int.self),
                        value: try row.decode(column: "value", as: Int.self), count: try row.decode(column: "n", as: Int.self))
        }
    }

    /// Counts the rows of `sources`: each a span of the tables, or (`listedOnly`) of the
    /// responses listed for the next fold.
    private func addRows(to figures: inout Figures, livemode: Bool, sources: [(span: Span, listedOnly: Bool)], actor: String?) async throws {
        guard !sources.isEmpty else { return }
        func picked(_ columns: [String], table: String, listed: String) -> SQLQueryString {
            sources.map { source -> SQLQueryString in
                "SELECT \(idents: columns, joinedBy: ", ") FROM \(unsafeRaw: source.listedOnly ? listed : table) WHERE "
                    + Self.filter(livemode: livemode, column: "created_at", span: source.span, actor: actor)
            }.joined(separator: " UNION ALL ")
        }
        let dimensions = [
            "actor", "outcome", "last_step_seen", "pause_duration_days", "offer_shown", "offer_accepted", "pause_shown",
            "pause_accepted",
        ]
        // One grouped pass over the responses (index ranges, see the funnel index).
        let responses = picked(dimensions, table: "cancel_flow_responses", listed: Schema.unrolledResponses(livemode: livemode))
        let grouped: SQLQueryString = """
            SELECT \(idents: dimensions, joinedBy: ", "), count(*) AS n FROM (\(responses)) AS picked GROUP BY \(idents: dimensions, joinedBy: ", ")
            """
        for row in try await db.raw(grouped).all() {
            let n = try row.decode(column: "n", as: Int.self)
            func flag(_ column: String) throws -> Bool { try row.decode(column: column, as: Bool.self) }
            figures.outcomes[try row.decode(column: "actor", as: String.self), default: [:]][try row.decode(column: "outcome", as: String.self), default: 0] += n
            if try flag("offer_shown") { figures.offerShown += n }
            if try flag("offer_accepted") { figures.offerAccepted += n }
            if try flag("pause_shown") { figures.pauseShown += n }
            if try flag("pause_accepted") {
                figures.pauseAccepted += n
                if let days = try row.decode(column: "pause_duration_days", as: Int?.self) { figures.add(.pauseDays, question: 0, value: days, count: n) }
            }
            figures.add(.step, question: 0, value: try row.decode(column: "last_step_seen", as: Int.self), count: n)
        }
        // One grouped pass over the answers.
        let answerColumns = ["question_id", "option_id", "has_text"]
        let answers = picked(answerColumns, table: "cancel_flow_answers", listed: Schema.unrolledAnswers(livemode: livemode))
        let answerQuery: SQLQueryString = """
            SELECT \(idents: answerColumns, joinedBy: ", "), count(*) AS n FROM (\(answers)) AS picked GROUP BY \(idents: answerColumns, joinedBy: ", ")
            """
        for row in try await db.raw(answerQuery).all() {
            let question = try row.decode(column: "question_id", as: Int.self)
            let n = try row.decode(column: "n", as: Int.self)
            if let option = try row.decode(column: "option_id", as: Int?.self) { figures.add(.option, question: question, value: option, count: n) }
            if try row.decode(column: "has_text", as: Bool.self) { figures.add(.freeText, question: question, value: 0, count: n) }
        }
    }

    /// The newest free-text answers to `question` in `[from, to)`, newest first.
    func freeTextSamples(
        question: Int, livemode: Bool, from: Int64?, to: Int64?, actor: String?, limit: Int
    ) async throws -> [String] {
        let builder = db.select().column("free_text").from("cancel_flow_answers")
            .where(Self.filter(livemode: livemode, column: "created_at", span: (from, to), actor: actor))
            .where("question_id", .equal, question).where("has_text", .equal, true)
        return try await builder.orderBy("created_at", .descending).limit(limit).all()
            .map { try $0.decode(column: "free_text", as: String.self) }
    }

    func latestAnswers(customerId: String, productId: String) async throws -> String? {
        try await db.select().column("answers").from("cancel_flow_responses")
            .where("customer_id", .equal, customerId).where("product_id", .equal, productId)
            .orderBy("created_at", .descending).limit(1).first()?.decode(column: "answers", as: String.self)
    }
}
