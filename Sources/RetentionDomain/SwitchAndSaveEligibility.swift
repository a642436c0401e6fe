import Foundation

/// The switch-and-save eligibility evaluator. It returns the offer, the mid-switch state, or the
/// reasons the offer is not shown, in the order of the rules in flows.md:
///
/// 1. not dismissed by this user; 2. a campaign is configured and `should_show`; 3. the customer's
/// jurisdiction is allowed; 4. an active App Store subscription exists; 5. App Store and web both
/// active → mid-switch (`accepted` while Apple still renews, `completed` once renewal is off);
/// 6. web only → already switched; 7. the App Store product is in the campaign; 8. the web product
/// exists in the catalog; 9. tenure within `min … max` days; 10. inside the rollout.
///
/// Every failing rule adds its reason; a rule whose inputs depend on an earlier failure is not
/// evaluated (no campaign → nothing else can be judged; no App Store subscription → no product or
/// tenure to judge). Mid-switch is reported only when rules 1–3 pass.
public enum SwitchAndSaveEligibility {
    /// When and by whom the offer was dismissed for this user.
    public struct Dismissal: Codable, Hashable, Sendable {
        public var dismissedAt: Date
        public var dismissedBy: String

        public init(dismissedAt: Date, dismissedBy: String) {
            self.dismissedAt = dismissedAt
            self.dismissedBy = dismissedBy
        }

        enum CodingKeys: String, CodingKey {
            case dismissedAt = "dismissed_at"
            case dismissedBy = "dismissed_by"
        }
    }

    /// Everything the rules look at. Nothing is read from a clock or a store.
    public struct Input: Sendable {
        public var userId: String
        public var campaign: MigrationCampaign?
        public var catalog: [Product]
        /// The user's merged entitlements (web and App Store, each with its `source`).
        public var entitlements: [Entitlement]
        /// The customer's ISO 3166 country code, nil when unknown.
        public var jurisdiction: String?
        public var dismissal: Dismissal?
        public var now: Date
        public var timeZone: TimeZone

        public init(
            userId: String, campaign: MigrationCampaign?, catalog: [Product], entitlements: [Entitlement],
            jurisdiction: String?, dismissal: Dismissal? = nil, now: Date, timeZone: TimeZone = .gmt
        ) {
            self.userId = userId
            self.campaign = campaign
            self.catalog = catalog
            self.entitlements = entitlements
            self.jurisdiction = jurisdiction
            self.dismissal = dismissal
            self.now = now
            self.timeZone = timeZone
        }
    }

    /// The result of evaluation.
    public enum Decision: Hashable, Sendable {
        /// The user qualifies: show the offer.
        case offer(MigrationOffer.OfferData)
        /// The user already paid on the web and still has an App Store subscription:
        /// `accepted` while Apple renews, `completed` when Apple renewal is off.
        case midSwitch(MigrationOffer.State, MigrationOffer.OfferData)
        /// The offer is not shown, with every reason, in rule order.
        case notOffered([IneligibleReason])

        /// The `MigrationOffer.State` this decision resolves to.
        public var state: MigrationOffer.State {
            switch self {
            case .offer: .eligible
            case .midSwitch(let state, _): state
            case .notOffered(let reasons): reasons.first?.code == .dismissed ? .dismissed : .ineligible
            }
        }

        public var offerData: MigrationOffer.OfferData? {
            switch self {
            case .offer(let data), .midSwitch(_, let data): data
            case .notOffered: nil
            }
        }

        public var reasons: [IneligibleReason] {
            if case .notOffered(let reasons) = self { return reasons }
            return []
        }
    }

    public static func evaluate(_ input: Input) -> Decision {
        var reasons: [IneligibleReason] = []
        let tz = input.timeZone

        // 1. Dismissal.
        if let dismissal = input.dismissal {
            reasons.append(.init(
                .dismissed,
                "offer dismissed by \(dismissal.dismissedBy) on \(CalendarDays.display(dismissal.dismissedAt, in: tz))"
            ))
        }
        // 2. Campaign.
        guard let campaign = input.campaign else {
            reasons.append(.init(.noCampaign, "no switch-and-save campaign is configured"))
            return .notOffered(reasons)
        }
        if !campaign.shouldShow {
            reasons.append(.init(.campaignOff, "the switch-and-save campaign is switched off"))
        }
        // 3. Jurisdiction.
        let allowed = campaign.effectiveJurisdictions
        let allowedList = allowed.sorted().joined(separator: ", ")
        if let country = input.jurisdiction?.uppercased(), !country.isEmpty {
            if !allowed.contains(country) {
                reasons.append(.init(.jurisdictionNotAllowed, "customer is in \(country); this campaign runs in \(allowedList) only"))
            }
        } else {
            reasons.append(.init(.jurisdictionNotAllowed, "customer's country is unknown; this campaign runs in \(allowedList) only"))
        }
        // 4–6. App Store and web subscriptions.
        let appStore = input.entitlements.first { $0.source == .storeKit && $0.isActive }
        let web = input.entitlements.first { $0.source == .webCheckout && $0.isActive }
        guard let appStore else {
            if let web {
                reasons.append(.init(.alreadySwitched, "already billed on the web (\(web.productId)); no App Store subscription to move"))
            } else {
                reasons.append(.init(.noAppStoreSubscription, "no active App Store subscription"))
            }
            return .notOffered(reasons)
        }
        let offerData = MigrationOffer.OfferData(
            prompt: campaign.prompt(forProductId: appStore.productId),
            freeTrialDays: MigrationBridge.days(now: input.now, paidThrough: appStore.expiresAt, in: tz),
            activeStoreKitProductId: appStore.productId
        )
        if web != nil {
            if reasons.isEmpty { return .midSwitch(appStore.willRenew ? .accepted : .completed, offerData) }
            return .notOffered(reasons)
        }
        // 7. Product in the campaign.
        if !campaign.eligibleProductIds.contains(appStore.productId) {
            reasons.append(.init(.productNotInCampaign, "App Store product \(appStore.productId) is not part of this campaign"))
        }
        // 8. Target web product.
        let webProduct = input.catalog.first { $0.id == appStore.productId && $0.webPrice != nil }
        if webProduct == nil {
            reasons.append(.init(.webProductMissing, "no web price for \(appStore.productId) in the catalog"))
        }
        // 9. Tenure.
        let tenure = max(0, CalendarDays.between(appStore.purchasedAt, input.now, in: tz))
        if tenure < campaign.minSubscriptionDays {
            reasons.append(.init(
                .tenureTooShort,
                "subscribed \(CalendarDays.phrase(tenure)); this campaign starts at \(campaign.minSubscriptionDays)"
            ))
        } else if let maxDays = campaign.maxSubscriptionDays, tenure > maxDays {
            reasons.append(.init(
                .tenureTooLong, "subscribed \(CalendarDays.phrase(tenure)); this campaign ends at \(maxDays)"
            ))
        }
        // 10. Rollout.
        let bucket = Rollout.bucket(forUserId: input.userId)
        let percent = campaign.effectiveRolloutPercent
        if bucket >= percent {
            reasons.append(.init(
                .notInRollout, "not in the rollout (bucket \(bucket); this campaign reaches buckets below \(percent))"
            ))
        }
        return reasons.isEmpty ? .offer(offerData) : .notOffered(reasons)
    }
}

/// Why the switch-and-save offer is not shown: a machine code and a sentence an agent can read out.
public struct IneligibleReason: Codable, Hashable, Sendable {
    public enum Code: WireEnum {
        case dismissed, noCampaign, campaignOff, jurisdictionNotAllowed, noAppStoreSubscription, alreadySwitched
        case productNotInCampaign, webProductMissing, tenureTooShort, tenureTooLong, notInRollout
        case unknown(String)

        /// In rule order.
        public static let knownCases: [Code] = [
            .dismissed, .noCampaign, .campaignOff, .jurisdictionNotAllowed, .noAppStoreSubscription,
            .alreadySwitched, .productNotInCampaign, .webProductMissing, .tenureTooShort, .tenureTooLong,
            .notInRollout,
        ]
        public var wireValue: String {
            switch self {
            case .dismissed: "dismissed"
            case .noCampaign: "no_campaign"
            case .campaignOff: "campaign_off"
            case .jurisdictionNotAllowed: "jurisdiction_not_allowed"
            case .noAppStoreSubscription: "no_app_store_subscription"
            case .alreadySwitched: "already_switched"
            case .productNotInCampaign: "product_not_in_campaign"
            case .webProductMissing: "web_product_missing"
            case .tenureTooShort: "tenure_too_short"
            case .tenureTooLong: "tenure_too_long"
            case .notInRollout: "not_in_rollout"
            case .unknown(let raw): raw
            }
        }
        public init(unknown wireValue: String) { self = .unknown(wireValue) }
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
