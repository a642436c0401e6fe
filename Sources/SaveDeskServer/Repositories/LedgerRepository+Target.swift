import Foundation
import RetentionDomain

/// Which subscription an action on (customer, product) applies to, with the errors the API answers.
extension LedgerRepository {
    /// The subscription an action on (customer, product) applies to: the web one when there is
    /// one; an App-Store-only product is the customer's own to change (422 with the steps).
    func target(customer: CustomerRecord, product: ServerConfig.ProductConfig, action: String) async throws -> SubscriptionRecord {
        let subscriptions = try await subscriptions(customerId: customer.id).filter { $0.productId == product.id }
        switch SubscriptionTarget.choose(subscriptions, isWeb: { $0.source == .web }, status: \.entitlementStatus) {
        case .web(let subscription): return subscription
        case .appStore: throw SaveDeskError.managedByAppStore(productName: product.displayName, action: action)
        case .none: throw SaveDeskError.notFound("\(customer.displayName) has no \(product.displayName) subscription", code: "no_subscription")
        }
    }
}
