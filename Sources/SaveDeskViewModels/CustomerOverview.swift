import Foundation
import Observation
import RetentionDomain
import SaveDeskClient

/// One customer: profile, entitlements with their source and lifecycle, the switch-and-save
/// decision with its reasons, the timeline, and which actions the agent can take (and why not).
@MainActor @Observable
public final class CustomerOverview {
    /// One entitlement as the agent sees it.
    public struct EntitlementRow: Hashable, Sendable, Identifiable {
        public var id: String
        public var productId: String
        /// "Premium Monthly" (the id when the catalog does not know it).
        public var productName: String
        /// Who bills it: the App Store or the web.
        public var source: Entitlement.Source
        public var state: Lifecycle.StateName
        /// One line to read out: "Grace period · 5 days left to fix payment".
        public var summary: String
        public var hasAccess: Bool
        public var daysLeft: Int?
        /// How urgently the agent should read it out (none < notice < warning < critical).
        public var warning: LifecycleWarning
        public var winBackEligible: Bool
    }

    public let customerId: String
    public private(set) var phase: LoadPhase = .loading
    public private(set) var profile: Wire.CustomerProfile?
    public private(set) var subscriptions: [Wire.Subscription] = []
    public private(set) var entitlements: [EntitlementRow] = []
    /// The customer's overall state, for the first banner line ("Active on the web · …").
    public private(set) var standing: CustomerStanding.Standing?
    /// Other lifecycle states that need a banner (warnings first), not already said by `standing`.
    public private(set) var banners: [EntitlementRow] = []
    /// The latest App Store cancellation read out per subscription (waiting for Apple, or confirmed).
    public private(set) var appStoreCancellations: [Wire.AppStoreCancellation] = []
    public private(set) var switchAndSave: SwitchAndSaveDecision?
    public private(set) var timeline: [Wire.AuditEvent] = []
    public private(set) var actions: [CustomerActions.Action] = []
    /// The last action's result or failure, as a sentence.
    public private(set) var lastMessage: String?
    public private(set) var isWorking = false
    /// The customer's version this view was built on; the actions send it (`If-Match`), so one
    /// built on a view someone else changed since is refused and shown again.
    public private(set) var version: Int64?
    @ObservationIgnored private let reloader = Reloader()

    @ObservationIgnored let calls: any CustomerOverviewCalls
    @ObservationIgnored private var productNames: [String: String] = [:]

    public init(customerId: String, calls: any CustomerOverviewCalls) {
        self.customerId = customerId
        self.calls = calls
    }

    public var availableActions: [CustomerActions.Action] { actions.filter(\.isAvailable) }

    public func load() async {
        do {
            let detail = try await calls.customer(id: customerId)
            async let decision = try? calls.userOffer(userId: customerId)
            async let events = try? calls.timeline(customerId: customerId, limit: 50)
            if productNames.isEmpty, let catalog = try? await calls.products() {
                productNames = Dictionary(catalog.map { ($0.id, $0.displayName) }, uniquingKeysWith: { first, _ in first })
            }
            profile = detail.profile
            version = detail.version
            subscriptions = detail.subscriptions
            entitlements = detail.entitlements.map { desk in
                EntitlementRow(
                    id: desk.entitlement.id, productId: desk.entitlement.productId,
                    productName: productNames[desk.entitlement.productId] ?? desk.entitlement.productId,
                    source: desk.entitlement.source == .webCheckout ? .webCheckout : .storeKit,
                    state: Lifecycle.StateName(rawValue: desk.lifecycle.state.rawValue) ?? .unknown, summary: desk.lifecycle.summary,
                    hasAccess: desk.lifecycle.hasAccess, daysLeft: desk.lifecycle.daysLeft,
                    warning: LifecycleWarning(wireName: desk.lifecycle.warning.rawValue), winBackEligible: desk.lifecycle.winBackEligible
                )
            }
            let domain = detail.domainEntitlements
            let standing = CustomerStanding.resolve(zip(detail.entitlements, entitlements).compactMap { desk, row in
                desk.domain.map {
                    CustomerStanding.Item(entitlement: $0, productName: row.productName, summary: row.summary,
                                          warning: row.warning)
                }
            })
            self.standing = standing
            banners = entitlements.filter {
                !standing.covered.contains($0.id) && $0.state.needsAttention
            }.sorted { $0.warning > $1.warning }
            appStoreCancellations = detail.retention.appStoreCancellations
            switchAndSave = await decision
            timeline = await events ?? []
            var upgrades: [String: String?] = [:]
            for entitlement in domain where entitlement.isActive {
                if let offer = try? await calls.upgradeOffer(userId: customerId, productId: entitlement.productId) {
                    upgrades[entitlement.productId] = offer.available ? nil : (offer.reasonMessage ?? offer.reason ?? "no upgrade")
                }
            }
            actions = CustomerActions.evaluate(.init(
                entitlements: domain,
                winBackProductIds: Set(entitlements.filter(\.winBackEligible).map(\.productId)),
                switchAndSave: switchAndSave?.state,
                switchAndSaveNote: switchAndSave?.reasons.first?.message,
                upgrades: upgrades
            ))
            phase = .loaded
        } catch {
            // A refresh that fails keeps what is on screen and says why.
            if phase == .loaded { lastMessage = error.message } else { phase = .failed(error.message) }
        }
    }

    /// Loads again for a change the event stream reported; changes that arrive meanwhile make one
    /// more load, not one each.
    public func refresh() async { await reloader.run { await load() } }

    public func resume(productId: String) async {
        await perform { [calls, customerId] () throws(SaveDeskClientError) in
            try await calls.resumeSubscription(productId: productId, userId: customerId, idempotencyKey: SaveDeskClient.newIdempotencyKey())
            return "Resumed"
        }
    }

    public func reactivate(productId: String) async {
        await perform { [calls, customerId] () throws(SaveDeskClientError) in
            let renews = try await calls.reactivateSubscription(productId: productId, userId: customerId, idempotencyKey: SaveDeskClient.newIdempotencyKey())
            return renews.map { "Renews again on \(CalendarDays.display($0, in: .gmt))" } ?? "Renews again"
        }
    }

    public func winBack(productId: String) async {
        await perform { [calls, customerId] () throws(SaveDeskClientError) in
            try await calls.winBack(customerId: customerId, productId: productId, idempotencyKey: SaveDeskClient.newIdempotencyKey()).message
        }
    }

    /// Upgrades web to web at once, or starts the App Store → web checkout (the URL is in the message).
    public func upgrade(productId: String) async {
        await perform { [calls, customerId] () throws(SaveDeskClientError) in
            let offer = try await calls.upgradeOffer(userId: customerId, productId: productId)
            guard offer.available, let target = offer.targetProduct?.referenceId else {
                return offer.reasonMessage ?? offer.reason ?? "No upgrade is available"
            }
            let result = try await calls.executeUpgrade(userId: customerId, from: productId, to: target, idempotencyKey: SaveDeskClient.newIdempotencyKey())
            try? await calls.respondToUpgradeOffer(userId: customerId, from: productId, to: target, outcome: .upgraded, idempotencyKey: SaveDeskClient.newIdempotencyKey())
            return result.checkoutUrl.map { "Checkout for the customer: \($0)" } ?? "Upgraded to \(offer.targetProduct?.name ?? target)"
        }
    }

    private func perform(_ action: () async throws(SaveDeskClientError) -> String) async {
        isWorking = true
        defer { isWorking = false }
        do {
            lastMessage = try await SaveDeskClient.expecting(version: version, action)
            await load()
        } catch {
            lastMessage = error.message
            // Built on a view someone else changed: show what is there now, and let the agent
            // choose again (the message says what changed).
            if error.code == "customer_changed" { await load() }
        }
    }

}
