import RetentionDomain
import Foundation
import SQLKit

/// The recorded ends of cancel flows, their answers, and the rollups kept with them.
///
/// A response is written with its answers and listed in `cancel_flow_unrolled`; a job folds the
/// list, every second, into rollup tables keyed by UTC day and by hour: `cancel_flow_daily` and
/// `cancel_flow_hourly` (per actor and outcome: how many, and how many were shown or accepted an
/// offer or a pause) and `cancel_flow_daily_counts` and `cancel_flow_hourly_counts` (per actor, a
/// count per value of the last step reached, the pause length taken, each option chosen and each
/// free-text answer; actor `*` holds every actor's sum). The funnel then reads whole days from
/// the daily rollups, whole hours of the partial days at its range's ends from the hourly ones
/// (plus, for both, the few responses not folded yet), and rows only for the partial hours at
/// either end, so its cost grows with days and hours, never with a day's responses.
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

    /// A rollup's time bucket: its tables and its key column.
    enum Grain: CaseIterable, Sendable {
        case day, hour

        var seconds: Int64 { self == .day ? Seconds.wholeDay : Seconds.wholeHour }
        var table: String { self == .day ? "cancel_flow_daily" : "cancel_flow_hourly" }
        var countsTable: String { self == .day ? "cancel_flow_daily_counts" : "cancel_flow_hourly_counts" }
        var column: String { self == .day ? "day" : "hour" }
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

    /// `[from, to)` as whole UTC days (read from the daily rollups), the whole hours of the
    /// partial days at its ends (the hourly rollups) and the partial hours (read from the rows).
    static func split(from: Int64?, to: Int64?) -> (days: Span?, hours: [Span], rows: [Span]) {
        let byDay = split((from, to), by: day)
        var hours: [Span] = [], rows: [Span] = []
        for part in byDay.partial {
            let byHour = split(part, by: Grain.hour.seconds)
            if let whole = byHour.whole { hours.append(whole) }
            rows += byHour.partial
        }
        return (byDay.whole, hours, rows)
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

    func figures(livemode: Bool, from: Int64?, to: Int64?, actor: String?) async throws -> Figures {
        var figures = Figures()
        let split = CancelFlowRollups.split(from: from, to: to)
        let buckets = (split.days.map { [(CancelFlowRollups.Grain.day, $0)] } ?? []) + split.hours.map { (.hour, $0) }
        for (grain, span) in buckets {
            try await addRollups(db, to: &figures, livemode: livemode, grain: grain, span: span, actor: actor)
            // The responses of that span the fold has not reached yet.
            try await addRows(db, to: &figures, livemode: livemode, range: span, actor: actor, onlyUnrolled: true)
        }
        for range in split.rows { try await addRows(db, to: &figures, livemode: livemode, range: range, actor: actor) }
        return figures
    }

    private func addRollups(
        _ db: any SQLDatabase, to figures: inout Figures, livemode: Bool, grain: CancelFlowRollups.Grain, span: Span, actor: String?
    ) async throws {
        func within(_ builder: SQLSelectBuilder) -> SQLSelectBuilder {
            var builder = builder.where("livemode", .equal, livemode)
            if let from = span.from { builder = builder.where(SQLIdentifier(grain.column), .greaterThanOrEqual, SQLBind(from)) }
            if let to = span.to { builder = builder.where(SQLIdentifier(grain.column), .lessThan, SQLBind(to)) }
            return builder
        }
        // PostgreSQL sums BIGINTs as NUMERIC; the cast makes them integers on both engines.
        func sum(_ column: String) -> any SQLExpression { SQLQueryString("CAST(sum(\(ident: column)) AS BIGINT)") }
        var outcomes = within(db.select().column("actor").column("outcome").column(sum("n"), as: "n")
            .column(sum("offer_shown"), as: "offer_shown").column(sum("offer_accepted"), as: "offer_accepted")
            .column(sum("pause_shown"), as: "pause_shown").column(sum("pause_accepted"), as: "pause_accepted")
            .from(grain.table))
        if let actor { outcomes = outcomes.where("actor", .equal, actor) }
        for row in try await outcomes.groupBy("actor").groupBy("outcome").all() {
            func int(_ column: String) throws -> Int { try row.decode(column: column, as: Int.self) }
            figures.outcomes[try row.decode(column: "actor", as: String.self), default: [:]][try row.decode(column: "outcome", as: String.self), default: 0] += try int("n")
            figures.offerShown += try int("offer_shown")
            figures.offerAccepted += try int("offer_accepted")
            figures.pauseShown += try int("pause_shown")
            figures.pauseAccepted += try int("pause_accepted")
        }
        let counts = within(db.select().column("dimension").column("question_id").column("value").column(sum("n"), as: "n")
            .from(grain.countsTable).where("actor", .equal, actor ?? CancelFlowRollups.everyActor))
        for row in try await counts.groupBy("dimension").groupBy("question_id").groupBy("value").all() {
            guard let dimension = Dimension(rawValue: try row.decode(column: "dimension", as: String.self)) else { continue }
            figures.add(dimension, question: try row.decode(column: "question_id", as: Int.self),
                        value: try row.decode(column: "value", as: Int.self), count: try row.decode(column: "n", as: Int.self))
        }
    }

    /// `builder` narrowed to rows (responses or answers) of one mode, created in `span`, by `actor`.
    private static func rows(_ builder: SQLSelectBuilder, livemode: Bool, span: Span, actor: String?) -> SQLSelectBuilder {
        var builder = builder.where("livemode", .equal, livemode)
        if let from = span.from { builder = builder.where("created_at", .greaterThanOrEqual, from) }
        if let to = span.to { builder = builder.where("created_at", .lessThan, to) }
        if let actor { builder = builder.where("actor", .equal, actor) }
        return builder
    }

    private func addRows(
        _ db: any SQLDatabase, to figures: inout Figures, livemode: Bool, range: Span, actor: String?, onlyUnrolled: Bool = false
    ) async throws {
        // The rows of the range, or (`onlyUnrolled`) those of the responses listed for the next
        // fold: read from the short list to the rows by key, never by scanning the range.
        func within(_ builder: SQLSelectBuilder, table: String, listed: String) -> SQLSelectBuilder {
            Self.rows(builder.from(SQLQueryString("\(unsafeRaw: onlyUnrolled ? listed : table)")), livemode: livemode, span: range, actor: actor)
        }
        let count = SQLFunction("count", args: SQLLiteral.all)
        let dimensions = [
            "actor", "outcome", "last_step_seen", "pause_duration_days", "offer_shown", "offer_accepted", "pause_shown",
            "pause_accepted",
        ]
        // One grouped pass over the responses of the range (an index range, see the funnel index).
        var grouped = within(db.select().columns(dimensions.map { SQLColumn($0) }).column(count, as: "n"),
                             table: "cancel_flow_responses", listed: Schema.unrolledResponses(livemode: livemode))
        for dimension in dimensions { grouped = grouped.groupBy(dimension) }
        for row in try await grouped.all() {
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
        for row in try await within(db.select().column("question_id").column("option_id").column("has_text").column(count, as: "n"),
                                    table: "cancel_flow_answers", listed: Schema.unrolledAnswers(livemode: livemode)).groupBy("question_id").groupBy("option_id").groupBy("has_text").all()
        {
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
        let builder = Self.rows(db.select().column("free_text").from("cancel_flow_answers"), livemode: livemode, span: (from, to), actor: actor)
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
