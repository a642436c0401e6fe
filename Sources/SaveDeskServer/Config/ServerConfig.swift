import Foundation
import RetentionDomain

/// The server's configuration, read from TOML by `ConfigReader` and validated as a whole.
public struct ServerConfig: Sendable {
    /// A catalog product with its prices and tier.
    public struct ProductConfig: Hashable, Sendable {
        public var id: String
        public var displayName: String
        public var description: String
        public var interval: BillingInterval
        public var tier: Int
        public var webPrice: Price?
        public var appStorePrice: Price?
        public var storekitProductId: String?
        public var subscriptionGroupId: Int?

        /// The wire `Product`.
        public var product: Product {
            Product(
                id: id, storekitProductId: storekitProductId, displayName: displayName, productDescription: description,
                type: .autoRenewableSubscription, webPrice: webPrice, storekitPrice: appStorePrice,
                syncedToAsc: appStorePrice != nil, billingInterval: interval, subscriptionGroupId: subscriptionGroupId
            )
        }
    }

    /// The cancel flow and the billing terms behind its save offer.
    public struct CancelFlowSettings: Hashable, Sendable {
        public var config: CancelFlow.Config
        /// What accepting the save offer grants (nil when there is no usable offer).
        public var offerTerms: SaveOfferTerms?
        /// The pause option used when a request names neither days nor an option.
        public var defaultPauseOptionId: Int?
        /// The longest pause accepted, in days.
        public var maxPauseDays: Int
        /// The save offer for App Store subscribers who cannot switch and save: one App Store
        /// offer code each (nil when not configured).
        public var appStoreOffer: AppStoreOfferSettings?
    }

    /// App Store offer codes kept for subscribers who stay, with the retention page's copy. Each
    /// code goes to at most one customer.
    public struct AppStoreOfferSettings: Hashable, Sendable {
        public var title: String
        public var body: String
        public var ctaText: String
        public var offerCodes: [String]
    }

    /// Billing rules of the ledger.
    public struct BillingSettings: Hashable, Sendable {
        /// Days a web subscription stays `past_due` before it expires.
        public var retryWindowDays: Int
        public var lifecyclePolicy: Lifecycle.Policy
        /// How long a customer-portal URL stays valid.
        public var portalSessionMinutes: Int
        /// Who keeps web subscriptions: SaveDesk's own ledger (the default), or Stripe.
        public var stripe: StripeSettings? = nil
    }

    /// Win-back for lapsed subscribers: a discount to restart a web subscription, and a pool of
    /// App Store offer codes, each handed out at most once.
    public struct WinBackSettings: Hashable, Sendable {
        public var discountPercent: Int
        public var durationInMonths: Int
        public var offerCodes: [String]

        public var terms: SaveOfferTerms { .discount(percent: discountPercent, duration: .repeating(months: durationInMonths)) }
    }

    /// Which App Store signed data the server accepts.
    public struct AppStoreSettings: Hashable, Sendable {
        public var bundleId: String
        /// "Sandbox", "Production" or "Xcode".
        public var environment: String
        /// Create and trust a local StoreKit CA in the data directory (test and demo servers).
        public var localCA: Bool
        /// PEM files of the roots to trust (Apple's root CA in production).
        public var trustedRoots: [String]
        /// Answers to Apple's real-time retention request (`[app_store.retention_messaging]`).
        public var retentionMessaging: RetentionMessagingSettings? = nil
    }

    /// Apple's cancel page: who may ask (the app's Apple id), how fresh a request must be, how long
    /// the answer may take, the decision's messages and rules, and the In-App Purchase key that
    /// signs promotional offers.
    public struct RetentionMessagingSettings: Hashable, Sendable {
        /// The app's Apple id; a request for another app gets no message.
        public var appAppleId: Int64
        public var decision: RetentionMessaging.Settings
        /// A request signed longer ago than this (or as far ahead) is refused.
        public var maxAgeSeconds: Int
        /// The answer's internal deadline (Apple waits 700 ms): past it, the default message.
        public var deadlineMilliseconds: Int
        /// The In-App Purchase key (a PKCS#8 .p8 file, mode 0600); nil on a test server with a
        /// local CA, which makes its own in the data directory.
        public var signingKeyFile: String?
        /// The key's id in App Store Connect (the signature's `kid`).
        public var signingKeyId: String
        /// The issuer id of App Store Connect's keys page (the signature's `iss`).
        public var issuerId: String
    }

    /// How the server presents itself and what it accepts from the network.
    public struct ServerSettings: Hashable, Sendable {
        /// The public address portal and checkout links start with (https://billing.example.com);
        /// nil: the address the server is bound to.
        public var publicBaseURL: String?
        /// Seconds a request may take to arrive whole (its head; its body gets three times as long).
        public var readTimeoutSeconds: Int
        /// App schemes a portal `return_url` may use besides https (e.g. "savedeskreader").
        public var returnURLSchemes: [String]
        /// After SIGTERM, seconds the server goes on answering while `/readyz` says it is not
        /// ready, so a load balancer stops sending it requests before it stops taking them.
        public var drainDelaySeconds: Int
        /// Then, seconds the requests in flight have to finish before they are cut off.
        public var shutdownTimeoutSeconds: Int

        public init(
            publicBaseURL: String? = nil, readTimeoutSeconds: Int = 10, returnURLSchemes: [String] = [], drainDelaySeconds: Int = 0,
            shutdownTimeoutSeconds: Int = 30
        ) {
            self.publicBaseURL = publicBaseURL
            self.readTimeoutSeconds = readTimeoutSeconds
            self.returnURLSchemes = returnURLSchemes
            self.drainDelaySeconds = drainDelaySeconds
            self.shutdownTimeoutSeconds = shutdownTimeoutSeconds
        }
    }

    /// The desk's event stream (`[events]`).
    public struct EventSettings: Hashable, Sendable {
        /// How long the event log keeps events: a client resumes with Last-Event-ID within it.
        public var retentionHours: Int
        /// A heartbeat this often on a quiet stream.
        public var heartbeatSeconds: Int
        /// Streams one instance serves at most (503 too_many_subscribers past it).
        public var maxSubscribers: Int
        /// Items one subscriber may have waiting before it is disconnected.
        public var subscriberQueue: Int

        public init(retentionHours: Int = 72, heartbeatSeconds: Int = 15, maxSubscribers: Int = 2_000, subscriberQueue: Int = 1_024) {
            self.retentionHours = retentionHours
            self.heartbeatSeconds = heartbeatSeconds
            self.maxSubscribers = maxSubscribers
            self.subscriberQueue = subscriberQueue
        }

        var hubSettings: EventHub.Settings {
            EventHub.Settings(heartbeat: .seconds(heartbeatSeconds), queueLimit: subscriberQueue, maxSubscribers: maxSubscribers)
        }
    }

    /// Where the Prometheus metrics are served (`[metrics]`): a listener of their own, never the
    /// public port. Off unless `listen` is set.
    public struct MetricsSettings: Hashable, Sendable {
        /// The host the metrics listener binds (loopback unless an operator says otherwise).
        public var host: String
        /// Its port (0: one the system picks, logged at start).
        public var port: Int

        public init(host: String = "127.0.0.1", port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// The web checkout as the SDK sees it.
    public struct CheckoutSettings: Hashable, Sendable {
        /// The app's numeric id on the wire (`app_id` in user-offer).
        public var appId: Int
        /// The payment provider's publishable key, handed to the SDK for native Apple Pay.
        public var publishableKey: String
        /// ISO 3166 alpha-2 country of the merchant (Apple Pay).
        public var merchantCountry: String
        /// How the SDK presents the checkout: webview, safari_vc, safari or native_pay.
        public var sheetType: String

        public init(appId: Int = 1, publishableKey: String = "pk_test_savedesk_local_payments", merchantCountry: String = "US",
                    sheetType: String = "webview") {
            self.appId = appId
            self.publishableKey = publishableKey
            self.merchantCountry = merchantCountry
            self.sheetType = sheetType
        }
    }

    /// How much one client address and one publishable key may ask of the server (token buckets:
    /// a rate and a burst, for requests and for body bytes). Secret operator keys are not limited;
    /// requests with no key or an unknown one count against their address.
    public struct RateLimitSettings: Hashable, Sendable {
        public struct Budget: Hashable, Sendable {
            public var requestsPerSecond: Double
            public var burstRequests: Double
            public var bytesPerSecond: Double
            public var burstBytes: Double

            public init(requestsPerSecond: Double, burstRequests: Double, bytesPerSecond: Double, burstBytes: Double) {
                self.requestsPerSecond = requestsPerSecond
                self.burstRequests = burstRequests
                self.bytesPerSecond = bytesPerSecond
                self.burstBytes = burstBytes
            }
        }

        /// Customers made by app calls (a user id the server had not seen): per publishable key and
        /// per client address, a rate with a burst; per key, a hard cap in any 24 hours.
        public struct NewCustomers: Hashable, Sendable {
            public var perKeyPerSecond: Double
            public var perKeyBurst: Double
            public var perAddressPerSecond: Double
            public var perAddressBurst: Double
            public var perKeyPerDay: Int

            public init(
                perKeyPerSecond: Double = 20, perKeyBurst: Double = 200, perAddressPerSecond: Double = 1, perAddressBurst: Double = 30,
                perKeyPerDay: Int = 500_000
            ) {
                self.perKeyPerSecond = perKeyPerSecond
                self.perKeyBurst = perKeyBurst
                self.perAddressPerSecond = perAddressPerSecond
                self.perAddressBurst = perAddressBurst
                self.perKeyPerDay = perKeyPerDay
            }
        }

        public var enabled: Bool
        /// Each client address (every request but those with a secret key).
        public var perAddress: Budget
        /// Each publishable key: all of an app's users together.
        public var perKey: Budget
        /// A header that carries the client's address when the server sits behind a proxy (its
        /// last entry is taken: the one the proxy added). Nil: the connection's peer.
        public var clientAddressHeader: String?
        public var newCustomers = NewCustomers()

        public init(
            enabled: Bool = true,
            perAddress: Budget = .init(requestsPerSecond: 50, burstRequests: 200, bytesPerSecond: 1_048_576, burstBytes: 16_777_216),
            perKey: Budget = .init(requestsPerSecond: 2_000, burstRequests: 4_000, bytesPerSecond: 33_554_432, burstBytes: 134_217_728),
            clientAddressHeader: String? = nil
        ) {
            self.enabled = enabled
            self.perAddress = perAddress
            self.perKey = perKey
            self.clientAddressHeader = clientAddressHeader
        }
    }

    public var products: [ProductConfig]
    public var cancelFlow: CancelFlowSettings
    public var campaign: MigrationCampaign?
    public var apiKeys: [APIKey]
    public var billing: BillingSettings
    public var winBack: WinBackSettings?
    public var appStore: AppStoreSettings?
    public var server = ServerSettings()
    public var checkout = CheckoutSettings()
    public var rateLimits = RateLimitSettings()
    public var metrics: MetricsSettings?
    public var events = EventSettings()

    /// Whether any key acts on live data.
    public var hasLiveKeys: Bool { apiKeys.contains { $0.mode == .live } }

    /// Problems with running this config as asked: a local StoreKit CA or a movable test clock
    /// next to live keys would let test tooling near live data.
    public func deploymentIssues(testClock: Bool) -> [ConfigIssue] {
        guard hasLiveKeys else { return [] }
        var issues: [ConfigIssue] = []
        if appStore?.localCA == true {
            issues.append(ConfigIssue(path: "app_store.local_ca", message: "a local StoreKit CA is for test servers; this config has live keys"))
        }
        if testClock {
            issues.append(ConfigIssue(path: "--test-clock", message: "the test clock is for test servers; this config has live keys"))
        }
        return issues
    }

    /// The catalog product an App Store product id names (its storekit_product_id, or its own id).
    public func product(appStoreProductId id: String) -> ProductConfig? {
        products.first { $0.storekitProductId == id } ?? product(id: id)
    }

    public func product(id: String) -> ProductConfig? { products.first { $0.id == id } }

    /// Tier access levels of the catalog.
    public var tiers: TierLadder { TierLadder(levels: Dictionary(uniqueKeysWithValues: products.map { ($0.id, $0.tier) })) }
}

extension ServerConfig {
    /// A product of the catalog, or 404.
    func requireProduct(_ id: String) throws(SaveDeskError) -> ProductConfig {
        guard let product = product(id: id) else { throw .notFound("no product \"\(id)\" in the catalog", code: "unknown_product") }
        return product
    }
}
