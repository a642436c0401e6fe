import Foundation
import SaveDeskClient
import Synchronization

@testable import SaveDeskViewModels

/// An in-memory desk for the directory and the analytics screen: customers searched by name or
/// id as the server does (a page of `perPage`, the total), answers that can be slowed per query
/// (a slow answer overtaken by a newer search), and calls that fail while the desk is "down".
final class FakeDeskCalls: CustomerSearchCalls, FunnelCalls {
    struct State {
        var down = false
        /// How long the answer to a query takes.
        var delays: [String: Duration] = [:]
        var searches: [String] = []
        var analyticsFilters: [(from: Date?, to: Date?, operator: String?)] = []
    }

    let state = Mutex(State())
    let customers: [Wire.CustomerSummary]

    /// `kinds`: the kind of each name (by default, every one a customer).
    init(names: [String], kinds: [Wire.CustomerKind] = []) {
        customers = names.enumerated().map { index, name in
            Wire.CustomerSummary(id: "cus_\(index)", name: name, email: "\(name.lowercased())@example.com",
                                 createdAt: Date(timeIntervalSince1970: 1_700_000_000), summary: "Premium Monthly",
                                 kind: index < kinds.count ? kinds[index] : .customer)
        }
    }

    var searches: [String] { state.withLock { $0.searches } }
    var analyticsFilters: [(from: Date?, to: Date?, operator: String?)] { state.withLock { $0.analyticsFilters } }
    func setDown(_ down: Bool) { state.withLock { $0.down = down } }
    func delay(_ query: String, by duration: Duration) { state.withLock { $0.delays[query] = duration } }

    private func checkUp() throws(SaveDeskClientError) {
        if state.withLock({ $0.down }) { throw .fakeUnreachable }
    }

    func searchCustomers(query: String?, page: Int, perPage: Int, kind: Wire.CustomerKind?) async throws(SaveDeskClientError) -> Wire.CustomerPage {
        let text = (query ?? "").lowercased()
        let delay = state.withLock { state -> Duration? in
            state.searches.append(text)
            return state.delays[text]
        }
        if let delay { try? await Task.sleep(for: delay) }
        try checkUp()
        let matches = (text.isEmpty ? customers : customers.filter { $0.name.lowercased().contains(text) || $0.id == text })
            .filter { kind == nil || $0.kind == kind }
        let start = min(matches.count, (page - 1) * perPage)
        return Wire.CustomerPage(customers: Array(matches[start..<min(matches.count, start + perPage)]), page: page, perPage: perPage,
                                 total: matches.count)
    }

    func cancelFlowAnalytics(from: Date?, to: Date?, operator: String?) async throws(SaveDeskClientError) -> Wire.CancelFlowAnalytics {
        state.withLock { $0.analyticsFilters.append((from, to, `operator`)) }
        try checkUp()
        let json = """
            {"outcomes": {"retained": 3, "paused": 2, "cancelled": 1, "dismissed": 1, "total": 7, "save_rate": 0.714},
             "offer_shown": 5, "offer_accepted": 3, "pause_shown": 3, "pause_accepted": 2, "pause_applied": 2,
             "app_store_cancellations": {"read_out": 1, "confirmed": 0},
             "pause_durations": [], "last_step_reached": [], "questions": [], "operators": []}
            """
        do { return try JSONDecoder().decode(Wire.CancelFlowAnalytics.self, from: Data(json.utf8)) } catch {
            throw SaveDeskClientError(kind: .invalidResponse, message: "fixture: \(error)")
        }
    }

    func switchAndSaveAnalytics(from: Date?, to: Date?) async throws(SaveDeskClientError) -> Wire.SwitchAndSaveAnalytics {
        state.withLock { $0.analyticsFilters.append((from, to, nil)) }
        try checkUp()
        return Wire.SwitchAndSaveAnalytics(funnel: .init(impressions: 5, conversions: 3, completed: 1, conversionRate: 0.6), variants: [])
    }

    func retentionMessageAnalytics(from: Date?, to: Date?) async throws(SaveDeskClientError) -> Wire.RetentionMessageAnalytics {
        state.withLock { $0.analyticsFilters.append((from, to, nil)) }
        try checkUp()
        return Wire.RetentionMessageAnalytics(
            requests: 12, answered: .init(shown: 10, saved: 5, redeemed: 2, saveRate: 0.5), holdout: .init(shown: 2, saved: 0, redeemed: 0, saveRate: 0),
            messages: [.init(kind: "promotional_offer", messageId: "half_off", messageText: "Stay for 50% off.",
                             figures: .init(shown: 6, saved: 4, redeemed: 2, saveRate: 4.0 / 6))]
        )
    }
}
