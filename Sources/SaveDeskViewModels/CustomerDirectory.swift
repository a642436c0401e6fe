import Foundation
import Observation
import RetentionDomain
import SaveDeskClient

/// Customer search as you type: each change of the query waits `debounce` before asking the
/// server, and only the newest answer is shown. Paged, with empty and error states. The whole
/// listing shows the demo's walk-through stories first and its generated history last; a filter
/// shows one kind alone.
@MainActor @Observable
public final class CustomerDirectory {
    public private(set) var query = ""
    public private(set) var phase: LoadPhase = .loading
    /// Loaded, and nothing matched (or there are no customers yet): the sentence that says which.
    public private(set) var emptyMessage: String?
    public private(set) var customers: [Wire.CustomerSummary] = []
    public private(set) var page = 1
    public private(set) var total = 0
    /// More customers match the query than `total` (the server pages the first 1,000 found).
    public private(set) var totalCapped = false
    public private(set) var selectedIndex = 0
    /// Only customers of this kind (nil: all).
    public private(set) var filter: Wire.CustomerKind?
    public let perPage: Int

    @ObservationIgnored let calls: any CustomerSearchCalls
    @ObservationIgnored let debounce: Duration
    @ObservationIgnored private var pending: Task<Void, Never>?
    @ObservationIgnored private var generation = 0

    /// A page's customers unless told otherwise.
    public static let defaultPerPage = 20

    public init(calls: any CustomerSearchCalls, debounce: Duration, perPage: Int = defaultPerPage) {
        self.calls = calls
        self.debounce = debounce
        self.perPage = perPage
    }

    public var pageCount: Int { max(1, (total + perPage - 1) / perPage) }
    /// How many match, as the footer says it: "16", or "1000+" when the server stopped counting.
    public var totalText: String { totalCapped ? "\(total)+" : "\(total)" }
    public var selectedCustomer: Wire.CustomerSummary? { customers.indices.contains(selectedIndex) ? customers[selectedIndex] : nil }

    /// The query changed (a key typed): search again after the debounce.
    public func setQuery(_ text: String) {
        guard text != query else { return }
        query = text
        pending?.cancel()
        generation += 1
        let ticket = generation
        pending = Task { [weak self, debounce] in
            try? await Task.sleep(for: debounce)
            guard !Task.isCancelled else { return }
            await self?.load(page: 1, ticket: ticket)
        }
    }

    /// Loads the first page now (on open, or retry after an error).
    public func reload() async {
        pending?.cancel()
        generation += 1
        await load(page: page, ticket: generation)
    }

    /// Waits for a debounced search to finish (tests, and scripted use).
    public func settle() async { await pending?.value }

    public func nextPage() async {
        guard page < pageCount else { return }
        generation += 1
        await load(page: page + 1, ticket: generation)
    }

    public func previousPage() async {
        guard page > 1 else { return }
        generation += 1
        await load(page: page - 1, ticket: generation)
    }

    /// The next filter: all → the demo's stories → the generated history → all.
    public func cycleFilter() async {
        filter = switch filter {
        case nil: .story
        case .story?: .generated
        default: nil
        }
        generation += 1
        await load(page: 1, ticket: generation)
    }

    /// The listing as the agent first sees it: no text searched, every kind.
    public var isWholeListing: Bool { query.trimmedOfWhitespace.isEmpty && filter == nil }

    public func moveSelection(by delta: Int) {
        guard !customers.isEmpty else { return }
        selectedIndex = min(max(0, selectedIndex + delta), customers.count - 1)
    }

    public func select(index: Int) {
        if customers.indices.contains(index) { selectedIndex = index }
    }

    private func load(page: Int, ticket: Int) async {
        if phase != .loading { phase = .loading }
        let query = self.query
        do {
            let result = try await calls.searchCustomers(query: query, page: page, perPage: perPage, kind: filter)
            guard ticket == generation else { return }  // a newer search is on its way
            customers = result.customers
            self.page = result.page
            total = result.total
            totalCapped = result.totalCapped ?? false
            selectedIndex = 0
            let trimmed = query.trimmedOfWhitespace
            let ofKind = filter.map { " among the \(Self.name($0))" } ?? ""
            emptyMessage = result.customers.isEmpty
                ? (trimmed.isEmpty ? (filter == nil ? "There are no customers yet." : "There are none\(ofKind).")
                    : "No customer matches \u{201C}\(trimmed)\u{201D}\(ofKind).")
                : nil
            phase = .loaded
        } catch {
            guard ticket == generation else { return }
            phase = .failed(error.message)
        }
    }

    /// What a filter shows, in words: "demo stories", "generated customers", "other customers".
    public static func name(_ kind: Wire.CustomerKind) -> String {
        switch kind {
        case .story: "demo stories"
        case .generated: "generated customers"
        case .customer: "other customers"
        }
    }
}
