import Foundation

/// Facts the App Store reports about a subscription, used by eligibility and lifecycle rules.
public enum AppStore {
    /// `status` of an App Store subscription: 1 active, 2 expired, 3 billing retry, 4 grace
    /// period, 5 revoked. Unknown codes are kept.
    public enum SubscriptionStatus: Codable, Hashable, Sendable {
        case active, expired, billingRetry, gracePeriod, revoked
        case unknown(Int)

        public init(code: Int) {
            switch code {
            case 1: self = .active
            case 2: self = .expired
            case 3: self = .billingRetry
            case 4: self = .gracePeriod
            case 5: self = .revoked
            default: self = .unknown(code)
            }
        }

        public var code: Int {
            switch self {
            case .active: 1
            case .expired: 2
            case .billingRetry: 3
            case .gracePeriod: 4
            case .revoked: 5
            case .unknown(let code): code
            }
        }

        public init(from decoder: any Decoder) throws {
            self.init(code: try decoder.singleValueContainer().decode(Int.self))
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(code)
        }
    }

    /// `expirationIntent`: why an App Store subscription expired. Unknown codes are kept.
    public enum ExpirationIntent: Codable, Hashable, Sendable {
        case customerCancelled, billingError, priceIncreaseDeclined, productUnavailable, other
        case unknown(Int)

        public init(code: Int) {
            switch code {
            case 1: self = .customerCancelled
            case 2: self = .billingError
            case 3: self = .priceIncreaseDeclined
            case 4: self = .productUnavailable
            case 5: self = .other
            default: self = .unknown(code)
            }
        }

        public var code: Int {
            switch self {
            case .customerCancelled: 1
            case .billingError: 2
            case .priceIncreaseDeclined: 3
            case .productUnavailable: 4
            case .other: 5
            case .unknown(let code): code
            }
        }

        /// A few words an agent can read out.
        public var explanation: String {
            switch self {
            case .customerCancelled: "cancelled by the customer"
            case .billingError: "payment failed"
            case .priceIncreaseDeclined: "price increase not accepted"
            case .productUnavailable: "product no longer available"
            case .other: "other reason"
            case .unknown(let code): "reason code \(code)"
            }
        }

        public init(from decoder: any Decoder) throws {
            self.init(code: try decoder.singleValueContainer().decode(Int.self))
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(code)
        }
    }

    /// What a customer does to cancel an App Store subscription themselves: only they can, in
    /// Settings. Read out by agents and shown on the switch-and-save "cancel Apple billing" step.
    public static func cancellationSteps(productName: String) -> [String] {
        [
            "Open the Settings app on the iPhone or iPad.",
            "Tap your name, then Subscriptions.",
            "Choose \(productName).",
            "Tap Cancel Subscription, then confirm.",
        ]
    }

    /// `apple_subscription` in a `user-offer` response.
    public struct SubscriptionSummary: Codable, Hashable, Sendable {
        public var isActive: Bool
        public var expiresAt: Date?
        public var statusCode: SubscriptionStatus?
        public var autoRenewEnabled: Bool

        public init(isActive: Bool, expiresAt: Date?, statusCode: SubscriptionStatus?, autoRenewEnabled: Bool) {
            self.isActive = isActive
            self.expiresAt = expiresAt
            self.statusCode = statusCode
            self.autoRenewEnabled = autoRenewEnabled
        }

        enum CodingKeys: String, CodingKey {
            case isActive = "is_active"
            case expiresAt = "expires_at"
            case statusCode = "status_code"
            case autoRenewEnabled = "auto_renew_enabled"
        }
    }
}
