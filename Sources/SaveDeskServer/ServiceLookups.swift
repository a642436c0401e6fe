import Foundation
import RetentionDomain

/// The lookups every service makes the same way, with the errors the API answers.
extension CustomerRepository {
    /// The customer, if it exists in the request's mode: to a test key a live customer does not exist.
    func inScope(_ id: String) async throws -> CustomerRecord {
        guard !id.isEmpty else { throw SaveDeskError.unprocessable("user_id must not be empty", code: "missing_user_id") }
        guard let customer = try await find(id: id), customer.livemode == (RequestScope.current?.livemode ?? customer.livemode) else {
            throw SaveDeskError.notFound("no customer with id \"\(id)\"", code: "unknown_user")
        }
        return customer
    }
}

extension LedgerRepository {
    /// The subscription an action on (customer, product) applies to: the web one when there is
    /// one; an App-Store-only product is the customer's own to change (422 with the steps).
    func target(customer: CustomerRecord, product: ServerConfig.ProductConfig, action: String) async throws -> SubscriptionRecord {
        let subscriptions = try await subscriptions(customerId: customer.id).filter { $0.productId == product.id }
        switch SubscriptionTarget.choose(subscriptions, isWeb: { $0.source == .web }, status: \.entitlementStatus) {
        case .web(let subscription): return subscription
        case .appStore: throw SaveDeskError.managedByAppStore(productName: product.displayName, action: action)
        case .none: throw SaveDeskError.notFound("\(customer.name) has no \(product.displayName) subscription", code: "no_subscription")
        }
    }
}

extension ServerConfig {
    /// A product of the catalog, or 404.
    func requireProduct(_ id: String) throws(SaveDeskError) -> ProductConfig {
        guard let product = product(id: id) else { throw .notFound("no product \"\(id)\" in the catalog", code: "unknown_product") }
        return product
    }
}
