import RetentionDomain
import Synchronization
import SaveDeskClient

/// The server call the customer directory makes; `SaveDeskClient` is the live one.
public protocol CustomerSearchCalls: Sendable {
    func searchCustomers(query: String?, page: Int, perPage: Int, kind: Wire.CustomerKind?) async throws(SaveDeskClientError) -> Wire.CustomerPage
}

extension SaveDeskClient: CustomerSearchCalls {}

/// The whole listing's first page, asked for as soon as the console starts: the terminal is set
/// up meanwhile, and the home screen's first load takes this answer instead of asking again.
/// Only that load: any other search, and a second load of the first page, asks `calls`.
final class EarlyFirstPage: CustomerSearchCalls {
    let calls: any CustomerSearchCalls
    let perPage: Int
    private let early: Mutex<Task<Result<Wire.CustomerPage, SaveDeskClientError>, Never>?>

    init(calls: any CustomerSearchCalls, perPage: Int) {
        self.calls = calls
        self.perPage = perPage
        // Detached: the caller (the main actor, setting up the terminal) does not wait for it.
        early = Mutex(Task.detached { [calls] in
            do throws(SaveDeskClientError) {
                return .success(try await calls.searchCustomers(query: nil, page: 1, perPage: perPage, kind: nil))
            } catch {
                return .failure(error)
            }
        })
    }

    func searchCustomers(query: String?, page: Int, perPage: Int, kind: Wire.CustomerKind?) async throws(SaveDeskClientError) -> Wire.CustomerPage {
        let whole = (query ?? "").trimmedOfWhitespace.isEmpty && page == 1 && perPage == self.perPage && kind == nil
        if whole, let early = early.withLock({ early in defer { early = nil }; return early }) {
            return try await early.value.get()
        }
        return try await calls.searchCustomers(query: query, page: page, perPage: perPage, kind: kind)
    }
}
