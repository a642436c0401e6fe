import Foundation

/// Apple's cancel page (the Retention Messaging API): when an App Store subscriber opens Cancel
/// Subscription, the App Store asks the developer's server which approved message, alternate
/// product or promotional offer to show. The choice is made here, once, from facts the server
/// holds and the configured rules in order; the server only verifies, records and signs.
public enum RetentionMessaging {
    /// An approved message: SaveDesk's name for it, Apple's message identifier (a UUID) per
    /// locale, and its text as the console shows it (Apple shows its own approved copy).
    public struct Message: Hashable, Sendable {
        public var id: String
        public var text: String
        /// Locale ("en-US") → the message identifier Apple approved for it.
        public var identifiers: [String: String]

        public init(id: String, text: String, identifiers: [String: String]) {
            self.id = id
            self.text = text
            self.identifiers = identifiers
        }
    }

    /// What a rule answers with, beside its message.
    public enum Offer: Hashable, Sendable {
        /// The message alone.
        case none
        /// Switch to another product of the same subscription group (App Store product id).
        case alternateProduct(productId: String, billingPlanType: String?)
        /// A promotional offer configured in App Store Connect, signed per request.
        case promotionalOffer(offerIdentifier: String)

        public var kind: String {
            switch self {
            case .none: "message"
            case .alternateProduct: "alternate_product"
            case .promotionalOffer: "promotional_offer"
            }
        }
    }

    /// When a rule applies. Every condition set must hold; an unset one always does.
    public struct Conditions: Hashable, Sendable {
        /// The subscription's catalog product is one of these.
        public var productIds: [String] = []
        public var minTenureDays: Int?
        public var maxTenureDays: Int?
        /// The rule's promotional offer was never shown to nor redeemed by this subscriber.
        public var offerUnused = false
        /// In an earlier cancel flow the customer picked one of these answers (option ids).
        public var reasonOptionIds: [Int] = []
        /// The customer went through at least this many earlier cancel flows.
        public var minCancelFlows: Int?

        public init(
            productIds: [String] = [], minTenureDays: Int? = nil, maxTenureDays: Int? = nil, offerUnused: Bool = false,
            reasonOptionIds: [Int] = [], minCancelFlows: Int? = nil
        ) {
            self.productIds = productIds
            self.minTenureDays = minTenureDays
            self.maxTenureDays = maxTenureDays
            self.offerUnused = offerUnused
            self.reasonOptionIds = reasonOptionIds
            self.minCancelFlows = minCancelFlows
        }
    }

    public struct Rule: Hashable, Sendable {
        public var name: String
        public var messageId: String
        public var offer: Offer
        public var conditions: Conditions

        public init(name: String, messageId: String, offer: Offer = .none, conditions: Conditions = Conditions()) {
            self.name = name
            self.messageId = messageId
            self.offer = offer
            self.conditions = conditions
        }
    }

    public struct Settings: Hashable, Sendable {
        public var messages: [Message]
        /// In order: the first that applies answers.
        public var rules: [Rule]
        /// The message answered when no rule applies (nil: no answer, Apple's default shows).
        public var defaultMessageId: String?
        /// The locale whose identifier is used when the customer's has none.
        public var fallbackLocale: String
        /// Subscribers (by original transaction) who get no real-time answer, 0–50.
        public var holdoutPercent: Int

        public init(messages: [Message], rules: [Rule], defaultMessageId: String?, fallbackLocale: String, holdoutPercent: Int) {
            self.messages = messages
            self.rules = rules
            self.defaultMessageId = defaultMessageId
            self.fallbackLocale = fallbackLocale
            self.holdoutPercent = holdoutPercent
        }

        public func message(_ id: String) -> Message? { messages.first { $0.id == id } }

        /// Message `id` as approved for a customer's locale: the message, Apple's identifier and
        /// the locale it was approved for; nil when it has none for that locale nor the fallback.
        public func approved(_ id: String, for userLocale: String) -> (message: Message, identifier: String, locale: String)? {
            guard let message = message(id),
                let locale = RetentionMessaging.locale(for: userLocale, available: message.identifiers.keys, fallback: fallbackLocale),
                let identifier = message.identifiers[locale]
            else { return nil }
            return (message, identifier, locale)
        }
    }

    /// What the server knows of the subscriber when Apple asks. Nil facts are unknown (a
    /// subscription the server has not seen): a condition on them does not hold.
    public struct Facts: Hashable, Sendable {
        /// The catalog product of the subscription.
        public var productId: String?
        public var tenureDays: Int?
        /// Option ids the customer picked in earlier cancel flows.
        public var answeredOptionIds: Set<Int>
        public var cancelFlows: Int
        /// Promotional offers shown on Apple's page before, or redeemed.
        public var offersUsed: Set<String>

        public init(productId: String? = nil, tenureDays: Int? = nil, answeredOptionIds: Set<Int> = [], cancelFlows: Int = 0,
                    offersUsed: Set<String> = []) {
            self.productId = productId
            self.tenureDays = tenureDays
            self.answeredOptionIds = answeredOptionIds
            self.cancelFlows = cancelFlows
            self.offersUsed = offersUsed
        }
    }

    /// The choice for one request.
    public enum Choice: Hashable, Sendable {
        /// In the holdout: no real-time answer, Apple's default message shows.
        case holdout
        /// No rule applies and no default message is configured: no answer either.
        case noAnswer
        /// Answer with `message` (its identifier for the request's locale) and `offer`; `rule` is
        /// the rule's name, or nil for the default message.
        case answer(rule: String?, message: Message, messageIdentifier: String, locale: String, offer: Offer)

        /// "holdout", "none", "message", "alternate_product" or "promotional_offer".
        public var kind: String {
            switch self {
            case .holdout: "holdout"
            case .noAnswer: "none"
            case .answer(_, _, _, _, let offer): offer.kind
            }
        }
    }

    /// Whether a subscriber (their original transaction id) is in a holdout of `percent`: the
    /// same subscriber is always on the same side, and independent of rollout buckets.
    public static func inHoldout(originalTransactionId: String, percent: Int) -> Bool {
        percent > 0 && Rollout.bucket(forUserId: "retention-holdout:" + originalTransactionId) < percent
    }

    /// The locale of `available` for a customer's `userLocale`: itself, else one of the same
    /// language ("fr-CA" takes "fr-FR"), else `fallback` when available.
    public static func locale(for userLocale: String, available: some Collection<String>, fallback: String) -> String? {
        let wanted = userLocale.replacingOccurrences(of: "_", with: "-")
        if let exact = available.first(where: { $0.caseInsensitiveCompare(wanted) == .orderedSame }) { return exact }
        let language = wanted.split(separator: "-").first.map { $0.lowercased() } ?? ""
        if let same = available.sorted().first(where: { $0.split(separator: "-").first?.lowercased() == language }) { return same }
        return available.contains(fallback) ? fallback : nil
    }

    /// Whether `conditions` hold for `facts` (and the rule's `offer`, for `offerUnused`).
    public static func holds(_ conditions: Conditions, offer: Offer, facts: Facts) -> Bool {
        if !conditions.productIds.isEmpty {
            guard let product = facts.productId, conditions.productIds.contains(product) else { return false }
        }
        if let least = conditions.minTenureDays {
            guard let tenure = facts.tenureDays, tenure >= least else { return false }
        }
        if let most = conditions.maxTenureDays {
            guard let tenure = facts.tenureDays, tenure <= most else { return false }
        }
        if conditions.offerUnused, case .promotionalOffer(let id) = offer, facts.offersUsed.contains(id) { return false }
        if !conditions.reasonOptionIds.isEmpty, facts.answeredOptionIds.isDisjoint(with: conditions.reasonOptionIds) { return false }
        if let least = conditions.minCancelFlows, facts.cancelFlows < least { return false }
        return true
    }

    /// The choice for a subscriber: the holdout first, then the first rule that applies and has
    /// an approved message for the customer's locale, then the default message.
    public static func decide(
        _ settings: Settings, facts: Facts, originalTransactionId: String, userLocale: String
    ) -> Choice {
        if inHoldout(originalTransactionId: originalTransactionId, percent: settings.holdoutPercent) { return .holdout }
        func answer(_ messageId: String, rule: String?, offer: Offer) -> Choice? {
            settings.approved(messageId, for: userLocale).map {
                .answer(rule: rule, message: $0.message, messageIdentifier: $0.identifier, locale: $0.locale, offer: offer)
            }
        }
        for rule in settings.rules where holds(rule.conditions, offer: rule.offer, facts: facts) {
            if let chosen = answer(rule.messageId, rule: rule.name, offer: rule.offer) { return chosen }
        }
        return settings.defaultMessageId.flatMap { answer($0, rule: nil, offer: .none) } ?? .noAnswer
    }

    /// What a customer's timeline says of one request: "Apple's cancel page showed “…” with the
    /// promotional offer stay_50", or that it showed Apple's default.
    public static func shownSentence(kind: String, messageText: String?, offer: String?) -> String {
        switch kind {
        case "holdout": return "Apple's cancel page showed its default message (holdout)"
        case "none": return "Apple's cancel page showed its default message (no rule applied)"
        case "fallback": return "Apple's cancel page showed its default message (no answer in time)"
        default:
            let quoted = "\u{201C}\(messageText ?? "")\u{201D}"
            switch kind {
            case "promotional_offer": return "Apple's cancel page showed \(quoted) with the promotional offer \(offer ?? "")"
            case "alternate_product": return "Apple's cancel page showed \(quoted) offering \(offer ?? "another plan")"
            default: return "Apple's cancel page showed \(quoted)"
            }
        }
    }

    /// Whether a subscriber counts as saved after Apple's page: the offer shown was redeemed, or
    /// renewal is still on (never turned off, or turned back on) and the subscription has not
    /// lapsed. A subscription the server does not know (`status` nil) is not counted saved.
    public static func saved(willRenew: Bool?, status: Entitlement.Status?, redeemed: Bool) -> Bool {
        if redeemed { return true }
        guard let status, willRenew == true else { return false }
        switch status {
        case .expired, .revoked, .cancelled: return false
        default: return true
        }
    }
}
