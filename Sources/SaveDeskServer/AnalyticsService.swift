import Foundation
import RetentionDomain
import SQLKit
import SaveDeskAPI

/// Cancel-flow analytics for managers: the responses' daily rollups (and the rows of partial
/// days), filtered by date range and operator, and broken down by operator.
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
        let count = SQLFunction("count", args: SQLLiteral.all)
        let responses = CancelFlowResponseRepository()
        let (fromSeconds, toSeconds) = (from?.unixSeconds, to?.unixSeconds)
        return try await store.read { db in
            let figures = try await responses.figures(db, livemode: livemode, from: fromSeconds, to: toSeconds, actor: operatorName)
            let totals = figures.outcomes.values.reduce(into: [String: Int]()) { sum, counts in
                for (outcome, n) in counts { sum[outcome, default: 0] += n }
            }
            var samples: [Int: [String]] = [:]
            for question in config.cancelFlow.config.questions where (figures.freeTexts[question.id] ?? 0) > 0 {
                samples[question.id] = try await responses.freeTextSamples(
                    db, question: question.id, livemode: livemode, from: fromSeconds, to: toSeconds, actor: operatorName,
                    limit: Self.samplesPerQuestion
                )
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
                offerShown: figures.offerShown, offerAccepted: figures.offerAccepted, pauseShown: figures.pauseShown,
                pauseAccepted: figures.pauseAccepted,
                pauseApplied: totals["paused"] ?? 0,
                appStoreCancellations: .init(readOut: try await cancellations("read_out_at"), confirmed: try await cancellations("confirmed_at")),
                pauseDurations: figures.pauseDurations.sorted { $0.key < $1.key }.map { .init(key: String($0.key), count: $0.value) },
                lastStepReached: figures.lastSteps.sorted { $0.key < $1.key }.map { .init(key: String($0.key), count: $0.value) },
                questions: config.cancelFlow.config.orderedQuestions.map { question in
                    Schemas.QuestionReport(
                        questionId: question.id, questionText: question.questionText,
                        answers: question.options.map { option in
                            .init(optionId: option.id, label: option.label, count: figures.options[question.id]?[option.id] ?? 0)
                        },
                        freeTextCount: figures.freeTexts[question.id] ?? 0, freeTextSamples: samples[question.id] ?? []
                    )
                },
                operators: figures.outcomes.keys.sorted().map { .init(_operator: $0, outcomes: Self.outcomes(figures.outcomes[$0] ?? [:])) }
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
