import RetentionDomain
import Foundation
import Observation
import SaveDeskClient

/// Both analytics views (how cancel flows end; the switch-and-save funnel) with their filters.
@MainActor @Observable
public final class FunnelReport {
    public enum View: String, Hashable, Sendable, CaseIterable {
        case cancelFlow, switchAndSave, cancelPage
    }

    /// A date range and an operator; nil means no limit.
    public struct Filters: Hashable, Sendable {
        public var from: Date?
        public var to: Date?
        public var operatorName: String?

        public init(from: Date? = nil, to: Date? = nil, operatorName: String? = nil) {
            self.from = from
            self.to = to
            self.operatorName = operatorName
        }

        /// The last `days` days up to `now`.
        public static func last(_ days: Int, until now: Date, operatorName: String? = nil) -> Filters {
            Filters(from: now.addingTimeInterval(-Double(days) * Seconds.day), to: now, operatorName: operatorName)
        }
    }

    /// One bar of a chart.
    public struct Bar: Hashable, Sendable {
        public var label: String
        public var value: Int
    }

    public private(set) var view: View = .cancelFlow
    public private(set) var filters = Filters()
    public private(set) var phase: LoadPhase = .loading
    public private(set) var cancelFlow: Wire.CancelFlowAnalytics?
    public private(set) var switchAndSave: Wire.SwitchAndSaveAnalytics?
    public private(set) var cancelPage: Wire.RetentionMessageAnalytics?

    @ObservationIgnored let calls: any FunnelCalls
    @ObservationIgnored private let reloader = Reloader()

    public init(calls: any FunnelCalls) { self.calls = calls }

    /// How cancel flows ended.
    public var outcomeBars: [Bar] {
        guard let o = cancelFlow?.outcomes else { return [] }
        return [Bar(label: "Retained", value: o.retained), Bar(label: "Paused", value: o.paused),
                Bar(label: "Cancelled", value: o.cancelled), Bar(label: "Dismissed", value: o.dismissed)]
    }

    /// Impressions → conversions → completed.
    public var funnelBars: [Bar] {
        guard let f = switchAndSave?.funnel else { return [] }
        return [Bar(label: "Impressions", value: f.impressions), Bar(label: "Conversions", value: f.conversions),
                Bar(label: "Completed", value: f.completed)]
    }

    /// One line of Apple's cancel page figures: what was shown, how often, how many stayed.
    public struct CancelPageRow: Hashable, Sendable {
        public var label: String
        public var shown: Int
        public var saved: Int
        public var saveRate: Double
    }

    /// Each message Apple's page showed, then everyone answered, then the holdout (no answer).
    public var cancelPageRows: [CancelPageRow] {
        guard let data = cancelPage else { return [] }
        func row(_ label: String, _ figures: Wire.RetentionMessageFigures) -> CancelPageRow {
            CancelPageRow(label: label, shown: figures.shown, saved: figures.saved, saveRate: figures.saveRate)
        }
        let kinds = ["promotional_offer": "offer", "alternate_product": "other plan", "message": "message", "none": "no rule", "fallback": "in time"]
        return data.messages.map { message in
            row("\(kinds[message.kind] ?? message.kind): \(message.messageText ?? message.messageId ?? "Apple's default")", message.figures)
        } + [row("Everyone answered", data.answered), row("Holdout (Apple's default)", data.holdout)]
    }

    /// Points of save rate the answers added over the holdout (nil with no holdout).
    public var cancelPageLift: Double? {
        guard let data = cancelPage, data.holdout.shown > 0, data.answered.shown > 0 else { return nil }
        return (data.answered.saveRate - data.holdout.saveRate) * 100
    }

    public func show(_ view: View) async {
        self.view = view
        await load()
    }

    public func apply(_ filters: Filters) async {
        self.filters = filters
        await load()
    }

    /// Loads again for changes the event stream reported: one more load for all that arrive
    /// meanwhile, not one each.
    public func refresh() async { await reloader.run { await load() } }

    public func load() async {
        phase = .loading
        do {
            switch view {
            case .cancelFlow:
                cancelFlow = try await calls.cancelFlowAnalytics(from: filters.from, to: filters.to, operator: filters.operatorName)
            case .switchAndSave:
                switchAndSave = try await calls.switchAndSaveAnalytics(from: filters.from, to: filters.to)
            case .cancelPage:
                cancelPage = try await calls.retentionMessageAnalytics(from: filters.from, to: filters.to)
            }
            phase = .loaded
        } catch {
            phase = .failed(error.message)
        }
    }
}
