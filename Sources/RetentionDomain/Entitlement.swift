import Foundation

/// Access to a product, from web checkout or from a store. Web and App Store entitlements are
/// merged into one list, each tagged with its `source`.
public struct Entitlement: Codable, Hashable, Sendable, Identifiable {
    /// Where an entitlement was bought.
    public enum Source: WireEnum {
        case webCheckout, storeKit, playStore
        case unknown(String)

        public static let knownCases: [Source] = [.webCheckout, .storeKit, .playStore]
        public var wireValue: String {
            switch self {
            case .webCheckout: "web_checkout"
            case .storeKit: "store_kit"
            case .playStore: "play_store"
            case .unknown(let raw): raw
            }
        }
        public init(unknown wireValue: String) { self = .unknown(wireValue) }

        /// True for purchases made through a platform store (App Store, Play Store).
        public var isStore: Bool { self == .storeKit || self == .playStore }
    }

    /// The billing status. Unknown strings are kept; `canceled` is read as `cancelled`.
    public enum Status: WireEnum {
        case active, trialing, paused, gracePeriod, pastDue, cancelled, expired, revoked
        case unknown(String)

        public static let knownCases: [Status] = [
            .active, .trialing, .paused, .gracePeriod, .pastDue, .cancelled, .expired, .revoked,
        ]
        public static let aliases: [String: Status] = ["canceled": .cancelled]
        public var wireValue: String {
            switch self {
            case .active: "active"
            case .trialing: "trialing"
            case .paused: "paused"
            case .gracePeriod: "grace_period"
            case .pastDue: "past_due"
            case .cancelled: "cancelled"
            case .expired: "expired"
            case .revoked: "revoked"
            case .unknown(let raw): raw
            }
        }
        public init(unknown wireValue: String) { self = .unknown(wireValue) }
    }

    public var id: String
    public var productId: String
    public var productType: ProductType
    public var source: Source
    public var status: Status
    public var isActive: Bool
    public var expiresAt: Date?
    public var purchasedAt: Date
    public var willRenew: Bool
    public var isTrial: Bool
    public var trialEndsAt: Date?
    public var cancelledAt: Date?
    public var pausedAt: Date?
    public var pauseResumesAt: Date?
    public var gracePeriodEndsAt: Date?
    public var storekitOriginalTransactionId: String?

    public init(
        id: String, productId: String, productType: ProductType = .autoRenewableSubscription, source: Source,
        status: Status, isActive: Bool, expiresAt: Date? = nil, purchasedAt: Date, willRenew: Bool,
        isTrial: Bool = false, trialEndsAt: Date? = nil, cancelledAt: Date? = nil, pausedAt: Date? = nil,
        pauseResumesAt: Date? = nil, gracePeriodEndsAt: Date? = nil, storekitOriginalTransactionId: String? = nil
    ) {
        self.id = id
        self.productId = productId
        self.productType = productType
        self.source = source
        self.status = status
        self.isActive = isActive
        self.expiresAt = expiresAt
        self.purchasedAt = purchasedAt
        self.willRenew = willRenew
        self.isTrial = isTrial
        self.trialEndsAt = trialEndsAt
        self.cancelledAt = cancelledAt
        self.pausedAt = pausedAt
        self.pauseResumesAt = pauseResumesAt
        self.gracePeriodEndsAt = gracePeriodEndsAt
        self.storekitOriginalTransactionId = storekitOriginalTransactionId
    }

    enum CodingKeys: String, CodingKey {
        case id
        case productId = "product_id"
        case productType = "product_type"
        case source, status
        case isActive = "is_active"
        case expiresAt = "expires_at"
        case purchasedAt = "purchased_at"
        case willRenew = "will_renew"
        case isTrial = "is_trial"
        case trialEndsAt = "trial_ends_at"
        case cancelledAt = "cancelled_at"
        case pausedAt = "paused_at"
        case pauseResumesAt = "pause_resumes_at"
        case gracePeriodEndsAt = "grace_period_ends_at"
        case storekitOriginalTransactionId = "storekit_original_transaction_id"
    }
}
