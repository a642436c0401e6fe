import Foundation

/// The switch-and-save campaign (`config.migration` on the wire).
public struct MigrationCampaign: Codable, Hashable, Sendable {
    /// Copy and discount that replace the campaign's own for one App Store product.
    public struct ProductPrompt: Codable, Hashable, Sendable {
        public var discountPercent: Int
        public var title: String
        public var message: String
        public var ctaText: String?

        public init(discountPercent: Int, title: String, message: String, ctaText: String? = nil) {
            self.discountPercent = discountPercent
            self.title = title
            self.message = message
            self.ctaText = ctaText
        }

        enum CodingKeys: String, CodingKey {
            case discountPercent = "discount_percent"
            case title, message
            case ctaText = "cta_text"
        }
    }

    /// The CTA used when neither the campaign nor a per-product prompt sets one.
    public static let defaultCTAText = "Switch Now"
    /// Where the offer may be shown when the campaign does not say (the SDK offers it in the US only).
    public static let defaultAllowedJurisdictions = ["US"]

    public var shouldShow: Bool
    public var eligibleProductIds: [String]
    public var discountPercent: Int
    public var minSubscriptionDays: Int
    public var maxSubscriptionDays: Int?
    public var freeTrialDays: Int
    public var title: String
    public var message: String
    public var ctaText: String?
    public var rolloutPercent: Int?
    public var perProductPrompts: [String: ProductPrompt]?
    /// SaveDesk extension: ISO 3166 country codes where the offer may be shown. Nil = US only.
    public var allowedJurisdictions: [String]?

    public init(
        shouldShow: Bool, eligibleProductIds: [String], discountPercent: Int, minSubscriptionDays: Int,
        maxSubscriptionDays: Int? = nil, freeTrialDays: Int = 0, title: String, message: String,
        ctaText: String? = nil, rolloutPercent: Int? = nil, perProductPrompts: [String: ProductPrompt]? = nil,
        allowedJurisdictions: [String]? = nil
    ) {
        self.shouldShow = shouldShow
        self.eligibleProductIds = eligibleProductIds
        self.discountPercent = discountPercent
        self.minSubscriptionDays = minSubscriptionDays
        self.maxSubscriptionDays = maxSubscriptionDays
        self.freeTrialDays = freeTrialDays
        self.title = title
        self.message = message
        self.ctaText = ctaText
        self.rolloutPercent = rolloutPercent
        self.perProductPrompts = perProductPrompts
        self.allowedJurisdictions = allowedJurisdictions
    }

    /// The jurisdictions in force (upper-cased), defaulting to the US.
    public var effectiveJurisdictions: Set<String> {
        Set((allowedJurisdictions ?? Self.defaultAllowedJurisdictions).map { $0.uppercased() })
    }

    /// The share of users, 0–100, who see the offer (100 when unset).
    public var effectiveRolloutPercent: Int { min(max(rolloutPercent ?? 100, 0), 100) }

    /// The prompt for a web product: the per-product prompt when there is one, otherwise the
    /// campaign's copy, with `{{discount}}` filled in.
    public func prompt(forProductId productId: String) -> MigrationOffer.Prompt {
        let override = perProductPrompts?[productId]
        let discount = override?.discountPercent ?? discountPercent
        let cta = override?.ctaText ?? ctaText ?? Self.defaultCTAText
        return MigrationOffer.Prompt(
            productId: productId,
            discountPercent: discount,
            title: OfferCopy.render(override?.title ?? title, discountPercent: discount),
            message: OfferCopy.render(override?.message ?? message, discountPercent: discount),
            ctaText: OfferCopy.render(cta, discountPercent: discount)
        )
    }

    enum CodingKeys: String, CodingKey {
        case shouldShow = "should_show"
        case eligibleProductIds = "eligible_product_ids"
        case discountPercent = "discount_percent"
        case minSubscriptionDays = "min_subscription_days"
        case maxSubscriptionDays = "max_subscription_days"
        case freeTrialDays = "free_trial_days"
        case title, message
        case ctaText = "cta_text"
        case rolloutPercent = "rollout_percent"
        case perProductPrompts = "per_product_prompts"
        case allowedJurisdictions = "allowed_jurisdictions"
    }
}
