/// Which of a customer's subscriptions to one product an action (pause, cancel, a save offer,
/// its price) applies to. Web first: the newest live web subscription; else, when the App Store
/// bills the product, the App Store's (only the customer can change it, in Settings); else the
/// newest web subscription that has ended.
public enum SubscriptionTarget<Subscription> {
    case web(Subscription)
    case appStore(Subscription)
    case none

    /// `subscriptions` oldest first, all to the same product.
    public static func choose(
        _ subscriptions: [Subscription], isWeb: (Subscription) -> Bool, status: (Subscription) -> Entitlement.Status
    ) -> SubscriptionTarget {
        let web = subscriptions.filter(isWeb)
        if let live = web.last(where: { status($0).isLive }) { return .web(live) }
        if let store = subscriptions.last(where: { !isWeb($0) }) { return .appStore(store) }
        if let ended = web.last { return .web(ended) }
        return .none
    }

    /// The subscription chosen, whoever bills it.
    public var subscription: Subscription? {
        switch self {
        case .web(let subscription), .appStore(let subscription): subscription
        case .none: nil
        }
    }
}

/// One web subscription per product: a customer whose web subscription to a product is live
/// (active, trialing, paused, in grace or past due; a switch's migration trial included) gets no
/// second checkout for it, and a second checkout paid anyway does not make a second subscription.
public enum OneWebSubscription {
    /// Whether `subscriptions` (any products, any source) hold a live web one to `productId`.
    public static func blocks<Subscription>(
        _ productId: String, in subscriptions: [Subscription], product: (Subscription) -> String, isWeb: (Subscription) -> Bool,
        status: (Subscription) -> Entitlement.Status
    ) -> Bool {
        subscriptions.contains { product($0) == productId && isWeb($0) && status($0).isLive }
    }

    /// What the customer is told (`already_subscribed`, 409).
    public static func reason(productName: String, isTrial: Bool) -> String {
        isTrial
            ? "a switch to \(productName) on the web is already under way (its trial runs until Apple's period ends); no second checkout"
            : "the customer already has \(productName) on the web; no second checkout"
    }
}

extension Entitlement.Status {
    /// The subscription still gives access or can get it back without a new purchase (active,
    /// trialing, paused, in a grace period or past due).
    public var isLive: Bool { Self.live.contains(self) }

    public static let live: Set<Entitlement.Status> = [.active, .trialing, .paused, .gracePeriod, .pastDue]
}

extension Sequence<Entitlement> {
    /// The original transaction id of the App Store subscription that is active (the one a switch
    /// moves to the web).
    public var activeAppStoreOriginalTransactionId: String? {
        first { $0.source == .storeKit && $0.storekitOriginalTransactionId != nil && $0.isActive }?.storekitOriginalTransactionId
    }

    /// The original transaction id of any App Store subscription (a lapsed one can still be
    /// refunded or renewed).
    public var appStoreOriginalTransactionId: String? {
        first { $0.source == .storeKit && $0.storekitOriginalTransactionId != nil }?.storekitOriginalTransactionId
    }
}
