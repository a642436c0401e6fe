import SaveDeskClient

/// The server call the customer directory makes; `SaveDeskClient` is the live one.
public protocol CustomerSearchCalls: Sendable {
    func searchCustomers(query: String?, page: Int, perPage: Int, kind: Wire.CustomerKind?) async throws(SaveDeskClientError) -> Wire.CustomerPage
}

extension SaveDeskClient: CustomerSearchCalls {}
