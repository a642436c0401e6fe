import Foundation

/// A catalog price in **micros** (4.99 USD = 4_990_000), as products are priced on the wire.
public struct Price: Codable, Hashable, Sendable {
    public var amountMicros: Int64
    public var currencyCode: String

    public init(amountMicros: Int64, currencyCode: String) {
        self.amountMicros = amountMicros
        self.currencyCode = currencyCode
    }

    enum CodingKeys: String, CodingKey {
        case amountMicros = "amount_micros"
        case currencyCode = "currency_code"
    }
}

/// The kind of product in the catalog.
public enum ProductType: WireEnum {
    case autoRenewableSubscription, nonRenewingSubscription, consumable, nonConsumable
    case unknown(String)

    public static let knownCases: [ProductType] = [
        .autoRenewableSubscription, .nonRenewingSubscription, .consumable, .nonConsumable,
    ]
    public var wireValue: String {
        switch self {
        case .autoRenewableSubscription: "auto_renewable_subscription"
        case .nonRenewingSubscription: "non_renewing_subscription"
        case .consumable: "consumable"
        case .nonConsumable: "non_consumable"
        case .unknown(let raw): raw
        }
    }
    public init(unknown wireValue: String) { self = .unknown(wireValue) }
}

/// How often a subscription renews.
public enum BillingInterval: WireEnum {
    case week, month, year
    case unknown(String)

    public static let knownCases: [BillingInterval] = [.week, .month, .year]
    public var wireValue: String {
        switch self {
        case .week: "week"
        case .month: "month"
        case .year: "year"
        case .unknown(let raw): raw
        }
    }
    public init(unknown wireValue: String) { self = .unknown(wireValue) }
}

/// A product of the catalog, with its web and App Store prices.
public struct Product: Codable, Hashable, Sendable, Identifiable {
    public var id: String
    public var storekitProductId: String?
    public var displayName: String
    public var productDescription: String
    public var type: ProductType
    public var webPrice: Price?
    public var storekitPrice: Price?
    public var syncedToAsc: Bool
    public var billingInterval: BillingInterval
    public var subscriptionGroupId: Int?
    public var freeTrialDuration: String?

    public init(
        id: String, storekitProductId: String? = nil, displayName: String, productDescription: String = "",
        type: ProductType = .autoRenewableSubscription, webPrice: Price? = nil, storekitPrice: Price? = nil,
        syncedToAsc: Bool = false, billingInterval: BillingInterval = .month, subscriptionGroupId: Int? = nil,
        freeTrialDuration: String? = nil
    ) {
        self.id = id
        self.storekitProductId = storekitProductId
        self.displayName = displayName
        self.productDescription = productDescription
        self.type = type
        self.webPrice = webPrice
        self.storekitPrice = storekitPrice
        self.syncedToAsc = syncedToAsc
        self.billingInterval = billingInterval
        self.subscriptionGroupId = subscriptionGroupId
        self.freeTrialDuration = freeTrialDuration
    }

    enum CodingKeys: String, CodingKey {
        case id
        case storekitProductId = "storekit_product_id"
        case displayName = "display_name"
        case productDescription = "product_description"
        case type
        case webPrice = "web_price"
        case storekitPrice = "storekit_price"
        case syncedToAsc = "synced_to_asc"
        case billingInterval = "billing_interval"
        case subscriptionGroupId = "subscription_group_id"
        case freeTrialDuration = "free_trial_duration"
    }
}
