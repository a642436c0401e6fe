import Foundation

/// `[billing] provider = "stripe"`: Stripe keeps the web subscriptions. One Stripe account per
/// mode the server serves (`[billing.stripe.test]`, `[billing.stripe.live]`), each with its own
/// secret key (`sk_test_…` or `sk_live_…`, checked against the mode), webhook signing secrets and
/// the Stripe price of each product: a test request can only ever reach the test account.
public struct StripeSettings: Hashable, Sendable {
    /// The API version SaveDesk is written against, sent with every request (`Stripe-Version`).
    public static let apiVersion = "2026-04-22.dahlia"

    public struct Account: Hashable, Sendable {
        public var secretKey: StripeSecret
        /// The endpoint's signing secrets (`whsec_…`): the current one, and the previous one while
        /// it is rotated.
        public var webhookSecrets: [StripeSecret]
        /// The Stripe price (`price_…`) of each product with a web price, by product id.
        public var prices: [String: String]

        public init(secretKey: StripeSecret, webhookSecrets: [StripeSecret], prices: [String: String]) {
            self.secretKey = secretKey
            self.webhookSecrets = webhookSecrets
            self.prices = prices
        }
    }

    /// Where Stripe's API is (https://api.stripe.com; a local double or localstripe in tests).
    public var apiBase: String
    /// One attempt's limit.
    public var timeoutSeconds: Int
    /// Attempts after the first for a 429, a 5xx, a timeout or a lost connection.
    public var maxRetries: Int
    /// How old (or how far ahead) a webhook's signed timestamp may be.
    public var webhookToleranceSeconds: Int
    /// The first retry's wait; it doubles after each (Stripe's Retry-After wins when it says more).
    public var retryBaseDelay: Duration
    /// What Stripe does with invoices while a subscription is paused (`pause_collection[behavior]`):
    /// void (the default: nothing is owed for the pause), keep_as_draft or mark_uncollectible.
    public var pauseBehavior: String = "void"
    public var test: Account?
    public var live: Account?

    public init(
        apiBase: String = "https://api.stripe.com", timeoutSeconds: Int = 20, maxRetries: Int = 2, webhookToleranceSeconds: Int = 300,
        retryBaseDelay: Duration = .milliseconds(250), test: Account? = nil, live: Account? = nil
    ) {
        self.apiBase = apiBase
        self.timeoutSeconds = timeoutSeconds
        self.maxRetries = maxRetries
        self.webhookToleranceSeconds = webhookToleranceSeconds
        self.retryBaseDelay = retryBaseDelay
        self.test = test
        self.live = live
    }

    public func account(livemode: Bool) -> Account? { livemode ? live : test }
}

/// A secret (an API key, a webhook signing secret) that never prints: its description is its
/// kind and mode only, so a config or an error dumped in a log shows no key material.
public struct StripeSecret: Hashable, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    let value: String

    public init(_ value: String) { self.value = value }

    public var description: String {
        let kind = value.prefix { $0 != "_" }
        let mode = value.contains("_live_") ? "live" : value.contains("_test_") ? "test" : nil
        return [String(kind), mode, "…(redacted)"].compactMap { $0 }.joined(separator: "_")
    }

    public var debugDescription: String { description }
}
