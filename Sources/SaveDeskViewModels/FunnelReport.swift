import RetentionDomain
import Foundation
import Observation
import SaveDeskClient

/// Both analytics views (how cancel flows end; the switch-and-save funnel) with their filters.
@MainActor @Observable
public final class FunnelReport {
    public enum View: String, Hashable, Sendable, CaseIterable {
        case cancelFlow, switchAndSave
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
            }
            phase = .loaded
        } catch {
            phase = .failed(error.message)
        }
    }
}
