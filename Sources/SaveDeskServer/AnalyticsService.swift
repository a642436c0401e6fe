import Foundation
import RetentionDomain
import SQLKit
import SaveDeskAPI

/// Cancel-flow analytics for managers: SQL aggregates over recorded responses and answers,
/// filtered by date range and operator, and broken down by operator.
final class AnalyticsService: Sendable {
    typealias Schemas = Components.Schemas
    let store: Store
    let config: ServerConfig

    init(store: Store, config: ServerConfig) {
        self.store = store
        self.config = config
    }

    /// How many free-text answers to show per question.
    static let samplesPerQuestion = 5

    func cancelFlow(from: Date?, to: Date?, operatorName: String?) async throws -> Schemas.CancelFlowAnalytics {
        if let from, let to, to <= from {
            throw SaveDeskError.badRequest("to must be after from", code: "invalid_range")
        }
        let livemode = RequestScope.current?.livemode ?? false
        func filtered(_ builder: SQLSelectBuilder) -> SQLSelectBuilder {
            var builder = builder.where("livemode", .equal, livemode)
            if let from { builder = builder.where("created_at", .greaterThanOrEqual, from.unixSeconds) }
            if let to { builder = builder.where("created_at", .lessThan, to.unixSeconds) }
            if let operatorName { builder = builder.where("actor", .equal, operatorName) }
            return builder
        }
        let count = SQLFunction("count", args: SQLLiteral.all)
        let dimensions = [
            "actor", "outcome", "last_step_seen", "pause_duration_days", "offer_shown", "offer_accepted", "pause_shown",
            "pause_accepted",
        ]
        return try await store.read { db in
            // One grouped pass over the responses (index-only, see the funnel index); the
            // figures are summed from its few hundred groups.
            var perOperator: [String: [String: Int]] = [:]
            var offerShown = 0, offerAccepted = 0, pauseShown = 0, pauseAccepted = 0
            var durations: [Int: Int] = [:], steps: [Int: Int] = [:]
            var grouped = filtered(db.select().columns(dimensions.map { SQLColumn($0) }).column(count, as: "n").from("cancel_flow_responses"))
            for dimension in dimensions { grouped = grouped.groupBy(dimension) }
            for row in try await grouped.all() {
                let n = try row.decode(column: "n", as: Int.self)
                func flag(_ column: String) throws -> Bool { try row.decode(column: column, as: Bool.self) }
                perOperator[try row.decode(column: "actor", as: String.self), default: [:]][try row.decode(column: "outcome", as: String.self), default: 0] += n
                if try flag("offer_shown") { offerShown += n }
                if try flag("offer_accepted") { offerAccepted += n }
                if try flag("pause_shown") { pauseShown += n }
                if try flag("pause_accepted") {
                    pauseAccepted += n
                    if let days = try row.decode(column: "pause_duration_days", as: Int?.self) { durations[days, default: 0] += n }
                }
                steps[try row.decode(column: "last_step_seen", as: Int.self), default: 0] += n
            }
            let totals = perOperator.values.reduce(into: [String: Int]()) { sum, counts in
                for (outcome, n) in counts { sum[outcome, default: 0] += n }
            }
            // One grouped pass over the answers.
            var optionCounts: [Int: [Int: Int]] = [:]
            var freeTextCounts: [Int: Int] = [:]
            for row in try await filtered(db.select().column("question_id").column("option_id").column("has_text").column(count, as: "n")
                .from("cancel_flow_answers")).groupBy("question_id").groupBy("option_id").groupBy("has_text").all()
            {
                let question = try row.decode(column: "question_id", as: Int.self)
                let n = try row.decode(column: "n", as: Int.self)
                if let option = try row.decode(column: "option_id", as: Int?.self) { optionCounts[question, default: [:]][option, default: 0] += n }
                if try row.decode(column: "has_text", as: Bool.self) { freeTextCounts[question, default: 0] += n }
            }
            var samples: [Int: [String]] = [:]
            for question in config.cancelFlow.config.questions where (freeTextCounts[question.id] ?? 0) > 0 {
                samples[question.id] = try await filtered(db.select().column("free_text").from("cancel_flow_answers")
                    .where("question_id", .equal, question.id).where("has_text", .equal, true))
                    .orderBy("created_at", .descending).limit(Self.samplesPerQuestion).all()
                    .map { try $0.decode(column: "free_text", as: String.self) }
            }

            // App Store cancellations: read out in the range, and confirmed by Apple in the range.
            func cancellations(_ column: String) async throws -> Int {
                var builder = db.select().column(count, as: "n").from("appstore_cancellations").where("livemode", .equal, livemode)
                    .where(SQLColumn(column), .isNot, SQLLiteral.null)
                if let from { builder = builder.where(SQLColumn(column), .greaterThanOrEqual, SQLBind(from.unixSeconds)) }
                if let to { builder = builder.where(SQLColumn(column), .lessThan, SQLBind(to.unixSeconds)) }
                if let operatorName { builder = builder.where("read_out_by", .equal, operatorName) }
                return try await builder.first()?.decode(column: "n", as: Int.self) ?? 0
            }

            return Schemas.CancelFlowAnalytics(
                from: from, to: to, outcomes: Self.outcomes(totals),
                offerShown: offerShown, offerAccepted: offerAccepted, pauseShown: pauseShown, pauseAccepted: pauseAccepted,
                pauseApplied: totals["paused"] ?? 0,
                appStoreCancellations: .init(readOut: try await cancellations("read_out_at"), confirmed: try await cancellations("confirmed_at")),
                pauseDurations: durations.keys.sorted().map { .init(key: String($0), count: durations[$0] ?? 0) },
                lastStepReached: steps.keys.sorted().map { .init(key: String($0), count: steps[$0] ?? 0) },
                questions: config.cancelFlow.config.orderedQuestions.map { question in
                    Schemas.QuestionReport(
                        questionId: question.id, questionText: question.questionText,
                        answers: question.options.map { option in
                            .init(optionId: option.id, label: option.label, count: optionCounts[question.id]?[option.id] ?? 0)
                        },
                        freeTextCount: freeTextCounts[question.id] ?? 0, freeTextSamples: samples[question.id] ?? []
                    )
                },
                operators: perOperator.keys.sorted().map { .init(_operator: $0, outcomes: Self.outcomes(perOperator[$0] ?? [:])) }
            )
        }
    }

    static func outcomes(_ counts: [String: Int]) -> Schemas.OutcomeCounts {
        let total = counts.values.reduce(0, +)
        let saved = (counts["retained"] ?? 0) + (counts["paused"] ?? 0)
        return Schemas.OutcomeCounts(
            total: total, cancelled: counts["cancelled"] ?? 0, retained: counts["retained"] ?? 0,
            paused: counts["paused"] ?? 0, dismissed: counts["dismissed"] ?? 0,
            saveRate: total == 0 ? 0 : Double(saved) / Double(total)
        )
    }

    /// The switch-and-save funnel: impressions → conversions → completed (Apple renewal off
    /// after converting), overall and per variant.
    func switchAndSave(from: Date?, to: Date?) async throws -> Schemas.SwitchAndSaveAnalytics {
        if let from, let to, to <= from {
            throw SaveDeskError.badRequest("to must be after from", code: "invalid_range")
        }
        let livemode = RequestScope.current?.livemode ?? false
        func within(_ builder: SQLSelectBuilder, _ column: String) -> SQLSelectBuilder {
            var builder = builder.where("livemode", .equal, livemode)
            if let from { builder = builder.where(SQLColumn(column), .greaterThanOrEqual, SQLBind(from.unixSeconds)) }
            if let to { builder = builder.where(SQLColumn(column), .lessThan, SQLBind(to.unixSeconds)) }
            return builder
        }
        let count = SQLFunction("count", args: SQLLiteral.all)
        return try await store.read { db in
            var impressions: [String: Int] = [:], conversions: [String: Int] = [:], completed: [String: Int] = [:]
            for row in try await within(db.select().column("variant_id").column(count, as: "n").from("offer_impressions"), "created_at")
                .groupBy("variant_id").all()
            {
                impressions[try row.decode(column: "variant_id", as: String.self)] = try row.decode(column: "n", as: Int.self)
            }
            for row in try await within(db.select().column("variant_id").column(count, as: "n").from("migration_conversions"), "created_at")
                .groupBy("variant_id").all()
            {
                conversions[try row.decode(column: "variant_id", as: String.self)] = try row.decode(column: "n", as: Int.self)
            }
            // Completed: converted, and no App Store subscription still renewing.
            let renewing = db.select().column("customer_id").from("subscriptions").where("livemode", .equal, livemode)
                .where("source", .equal, "app_store").where("will_renew", .equal, true)
                .where("status", .in, ["active", "grace_period", "past_due"])
            for row in try await within(db.select().column("variant_id").column(count, as: "n").from("migration_conversions"), "created_at")
                .where("customer_id", .notIn, SQLGroupExpression(renewing.select)).groupBy("variant_id").all()
            {
                completed[try row.decode(column: "variant_id", as: String.self)] = try row.decode(column: "n", as: Int.self)
            }
            func funnel(_ variant: String?) -> Schemas.FunnelCounts {
                func pick(_ counts: [String: Int]) -> Int { variant.map { counts[$0] ?? 0 } ?? counts.values.reduce(0, +) }
                let seen = pick(impressions), converted = pick(conversions)
                return .init(impressions: seen, conversions: converted, completed: pick(completed),
                             conversionRate: seen == 0 ? 0 : Double(converted) / Double(seen))
            }
            let variants = Set(impressions.keys).union(conversions.keys).sorted()
            return Schemas.SwitchAndSaveAnalytics(
                from: from, to: to, funnel: funnel(nil), variants: variants.map { .init(variantId: $0, funnel: funnel($0)) }
            )
        }
    }
}
