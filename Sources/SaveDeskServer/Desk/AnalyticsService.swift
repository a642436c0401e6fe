import Foundation
import RetentionDomain
import SaveDeskAPI

/// Cancel-flow analytics for managers: the responses' rollups (and the rows of the partial ends),
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

    func cancelFlow(from: Date?, to: Date?, operatorName: String?, scope: RequestScope) async throws -> Schemas.CancelFlowAnalytics {
        if let from, let to, to <= from {
            throw SaveDeskError.unprocessable("to must be after from", code: "invalid_range")
        }
        let livemode = scope.livemode
        let (fromSeconds, toSeconds) = (from?.unixSeconds, to?.unixSeconds)
        // Two statements, each its own snapshot: the funnel (rollups and rows agree within it; a
        // fold moves responses from the one to the other) and the App Store cancellations. Both
        // are sums over ranges of indexed keys, whose one plan suits any range: a report.
        return try await store.report { data in
            let figures = try await data.cancelFlow.figures(
                livemode: livemode, from: fromSeconds, to: toSeconds, actor: operatorName,
                samplesOf: config.cancelFlow.config.questions.map(\.id), samples: Self.samplesPerQuestion
            )
            let totals = figures.outcomes.values.reduce(into: [String: Int]()) { sum, counts in
                for (outcome, n) in counts { sum[outcome, default: 0] += n }
            }
            // App Store cancellations: read out in the range, and confirmed by Apple in the range.
            let cancellations = try await data.appStore.countCancellations(livemode: livemode, from: fromSeconds, to: toSeconds, readOutBy: operatorName)
            return Schemas.CancelFlowAnalytics(
                from: from, to: to, outcomes: Self.outcomes(totals),
                offerShown: figures.offerShown, offerAccepted: figures.offerAccepted, pauseShown: figures.pauseShown,
                pauseAccepted: figures.pauseAccepted,
                pauseApplied: totals["paused"] ?? 0,
                appStoreCancellations: .init(readOut: cancellations.readOut, confirmed: cancellations.confirmed),
                pauseDurations: figures.pauseDurations.sorted { $0.key < $1.key }.map { .init(key: String($0.key), count: $0.value) },
                lastStepReached: figures.lastSteps.sorted { $0.key < $1.key }.map { .init(key: String($0.key), count: $0.value) },
                questions: config.cancelFlow.config.orderedQuestions.map { question in
                    Schemas.QuestionReport(
                        questionId: question.id, questionText: question.questionText,
                        answers: question.options.map { option in
                            .init(optionId: option.id, label: option.label, count: figures.options[question.id]?[option.id] ?? 0)
                        },
                        freeTextCount: figures.freeTexts[question.id] ?? 0, freeTextSamples: figures.samples[question.id] ?? []
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
    func switchAndSave(from: Date?, to: Date?, scope: RequestScope) async throws -> Schemas.SwitchAndSaveAnalytics {
        if let from, let to, to <= from {
            throw SaveDeskError.unprocessable("to must be after from", code: "invalid_range")
        }
        let livemode = scope.livemode
        return try await store.read { data in
            let (impressions, conversions, completed) = try await data.switchAndSave.funnel(
                livemode: livemode, from: from?.unixSeconds, to: to?.unixSeconds
            )
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

    /// Apple's cancel page: per message shown (and kind), and for the holdout, how many requests
    /// and how many of those subscribers were saved (`RetentionMessaging.saved`, on their state now).
    func retentionMessages(
        from: Date?, to: Date?, settings: ServerConfig.RetentionMessagingSettings?, scope: RequestScope
    ) async throws -> Schemas.RetentionMessageAnalytics {
        if let from, let to, to <= from {
            throw SaveDeskError.unprocessable("to must be after from", code: "invalid_range")
        }
        let counts = try await store.read { data in
            try await data.retentionMessages.outcomes(livemode: scope.livemode, from: from?.unixSeconds, to: to?.unixSeconds)
        }
        struct Tally {
            var shown = 0, saved = 0, redeemed = 0
            mutating func add(_ count: RetentionOutcomeCount) {
                shown += count.count
                if count.redeemed { redeemed += count.count }
                if RetentionMessaging.saved(willRenew: count.willRenew, status: count.status.map(Entitlement.Status.init(wireValue:)),
                                            redeemed: count.redeemed) { saved += count.count }
            }
            var figures: Schemas.RetentionMessageFigures {
                .init(shown: shown, saved: saved, redeemed: redeemed, saveRate: shown == 0 ? 0 : Double(saved) / Double(shown))
            }
        }
        var holdout = Tally(), answered = Tally(), rows: [String: (kind: String, key: String?, tally: Tally)] = [:]
        for count in counts {
            if count.choice == "holdout" {
                holdout.add(count)
                continue
            }
            answered.add(count)
            let id = count.choice + "|" + (count.messageKey ?? "")
            rows[id, default: (count.choice, count.messageKey, Tally())].tally.add(count)
        }
        return Schemas.RetentionMessageAnalytics(
            from: from, to: to, requests: holdout.shown + answered.shown, answered: answered.figures, holdout: holdout.figures,
            messages: rows.values.sorted { ($0.tally.shown, $0.kind) > ($1.tally.shown, $1.kind) }.map { row in
                Schemas.RetentionMessageRow(
                    kind: row.kind, messageId: row.key, messageText: row.key.flatMap { settings?.decision.message($0)?.text }, figures: row.tally.figures
                )
            }
        )
    }
}
