import Foundation
import Testing

@testable import RetentionDomain

@Suite("Switch-and-save eligibility")
struct SwitchAndSaveEligibilityTests {
    static let now = WireFormat.parseDate("2026-11-22T12:00:00Z")!
    static func daysAgo(_ days: Double) -> Date { now.addingTimeInterval(-days * 86_400) }
    static func daysAhead(_ days: Double) -> Date { now.addingTimeInterval(days * 86_400) }

    static let campaign = MigrationCampaign(
        shouldShow: true, eligibleProductIds: ["premium_monthly"], discountPercent: 20, minSubscriptionDays: 30,
        maxSubscriptionDays: 730, title: "Save {{discount}}%", message: "Switch to web billing and save {{discount}}%.",
        rolloutPercent: 50
    )
    static let catalog = [
        Product(id: "premium_monthly", displayName: "Premium Monthly",
                webPrice: Price(amountMicros: 7_990_000, currencyCode: "USD"),
                storekitPrice: Price(amountMicros: 9_990_000, currencyCode: "USD")),
        Product(id: "premium_yearly", displayName: "Premium Yearly",
                storekitPrice: Price(amountMicros: 79_990_000, currencyCode: "USD"), billingInterval: .year),
    ]

    static func appStore(product: String = "premium_monthly", since: Double = 100, willRenew: Bool = true) -> Entitlement {
        Entitlement(id: "as_\(product)", productId: product, source: .storeKit, status: .active, isActive: true,
                    expiresAt: daysAhead(9.5), purchasedAt: daysAgo(since), willRenew: willRenew)
    }
    static let web = Entitlement(id: "web_1", productId: "premium_monthly", source: .webCheckout, status: .trialing,
                                 isActive: true, expiresAt: daysAhead(9.5), purchasedAt: daysAgo(1), willRenew: true,
                                 isTrial: true)

    /// "user_42" is in bucket 23 (inside a 50 % rollout); "grace" is in bucket 56 (outside).
    func evaluate(
        user: String = "user_42", campaign: MigrationCampaign? = Self.campaign, entitlements: [Entitlement] = [appStore()],
        country: String? = "US", dismissal: SwitchAndSaveEligibility.Dismissal? = nil
    ) -> SwitchAndSaveEligibility.Decision {
        SwitchAndSaveEligibility.evaluate(.init(
            userId: user, campaign: campaign, catalog: Self.catalog, entitlements: entitlements,
            jurisdiction: country, dismissal: dismissal, now: Self.now
        ))
    }

    func codes(_ decision: SwitchAndSaveEligibility.Decision) -> [IneligibleReason.Code] { decision.reasons.map(\.code) }

    @Test func eligibleUserGetsOfferData() throws {
        let decision = evaluate()
        #expect(decision.state == .eligible)
        let data = try #require(decision.offerData)
        #expect(data.prompt == MigrationOffer.Prompt(
            productId: "premium_monthly", discountPercent: 20, title: "Save 20%",
            message: "Switch to web billing and save 20%.", ctaText: "Switch Now"))
        #expect(data.freeTrialDays == 10, "expiry is 9.5 days ahead: 10 calendar days (midnight to midnight)")
        #expect(data.activeStoreKitProductId == "premium_monthly")
    }

    @Test func dismissedComesFirstAndNamesWhoAndWhen() {
        let dismissal = SwitchAndSaveEligibility.Dismissal(dismissedAt: Self.daysAgo(2), dismissedBy: "Dana (support)")
        let decision = evaluate(dismissal: dismissal)
        #expect(decision.state == .dismissed)
        #expect(decision.reasons == [IneligibleReason(.dismissed, "offer dismissed by Dana (support) on Nov 20, 2026")])
        #expect(decision.offerData == nil)
    }

    @Test func noCampaignStopsEvaluation() {
        let decision = evaluate(campaign: nil, entitlements: [], country: "DE")
        #expect(codes(decision) == [.noCampaign])
        #expect(decision.state == .ineligible)
    }

    @Test func campaignSwitchedOff() {
        var campaign = Self.campaign
        campaign.shouldShow = false
        #expect(codes(evaluate(campaign: campaign)) == [.campaignOff])
    }

    @Test func outsideTheRegion() {
        let decision = evaluate(country: "DE")
        #expect(decision.reasons == [IneligibleReason(.jurisdictionNotAllowed, "customer is in DE; this campaign runs in US only")])
        #expect(codes(evaluate(country: nil)) == [.jurisdictionNotAllowed])
        var campaign = Self.campaign
        campaign.allowedJurisdictions = ["us", "CA"]
        #expect(evaluate(campaign: campaign, country: "ca").state == .eligible)
    }

    @Test func noAppStoreSubscription() {
        let lapsed = Entitlement(id: "x", productId: "premium_monthly", source: .storeKit, status: .expired,
                                 isActive: false, purchasedAt: Self.daysAgo(400), willRenew: false)
        #expect(evaluate(entitlements: []).reasons == [IneligibleReason(.noAppStoreSubscription, "no active App Store subscription")])
        #expect(codes(evaluate(entitlements: [lapsed])) == [.noAppStoreSubscription])
    }

    @Test func alreadySwitched() {
        #expect(codes(evaluate(entitlements: [Self.web])) == [.alreadySwitched])
    }

    @Test func midSwitchWhileAppleStillRenews() {
        let decision = evaluate(entitlements: [Self.appStore(willRenew: true), Self.web])
        #expect(decision.state == .accepted)
        #expect(decision.offerData?.prompt.discountPercent == 20)
    }

    @Test func midSwitchAfterAppleRenewalIsOff() {
        let decision = evaluate(entitlements: [Self.appStore(willRenew: false), Self.web])
        #expect(decision.state == .completed)
    }

    @Test func midSwitchDoesNotOverrideEarlierRules() {
        let dismissal = SwitchAndSaveEligibility.Dismissal(dismissedAt: Self.now, dismissedBy: "app")
        #expect(evaluate(entitlements: [Self.appStore(), Self.web], dismissal: dismissal).state == .dismissed)
        #expect(codes(evaluate(entitlements: [Self.appStore(), Self.web], country: "FR")) == [.jurisdictionNotAllowed])
    }

    @Test func productNotInCampaign() {
        let decision = evaluate(entitlements: [Self.appStore(product: "premium_yearly")])
        // premium_yearly has no web price either: both reasons, in rule order.
        #expect(codes(decision) == [.productNotInCampaign, .webProductMissing])
        #expect(decision.reasons[0].message == "App Store product premium_yearly is not part of this campaign")
    }

    @Test func webProductMissing() {
        var campaign = Self.campaign
        campaign.eligibleProductIds.append("premium_yearly")
        let decision = evaluate(campaign: campaign, entitlements: [Self.appStore(product: "premium_yearly")])
        #expect(decision.reasons == [IneligibleReason(.webProductMissing, "no web price for premium_yearly in the catalog")])
    }

    @Test func tooNew() {
        let decision = evaluate(entitlements: [Self.appStore(since: 12)])
        #expect(decision.reasons == [IneligibleReason(.tenureTooShort, "subscribed 12 days; this campaign starts at 30")])
    }

    @Test func tooOld() {
        let decision = evaluate(entitlements: [Self.appStore(since: 800)])
        #expect(decision.reasons == [IneligibleReason(.tenureTooLong, "subscribed 800 days; this campaign ends at 730")])
    }

    @Test func notInRollout() {
        let decision = evaluate(user: "grace")
        #expect(decision.reasons == [IneligibleReason(.notInRollout, "not in the rollout (bucket 56; this campaign reaches buckets below 50)")])
    }

    @Test func everyFailingRuleIsReportedInOrder() {
        var campaign = Self.campaign
        campaign.shouldShow = false
        let dismissal = SwitchAndSaveEligibility.Dismissal(dismissedAt: Self.now, dismissedBy: "app")
        let decision = evaluate(
            user: "grace", campaign: campaign, entitlements: [Self.appStore(product: "premium_yearly", since: 3)],
            country: "DE", dismissal: dismissal
        )
        #expect(codes(decision) == [
            .dismissed, .campaignOff, .jurisdictionNotAllowed, .productNotInCampaign, .webProductMissing,
            .tenureTooShort, .notInRollout,
        ])
        #expect(codes(decision) == IneligibleReason.Code.knownCases.filter(codes(decision).contains),
                "reasons follow the documented rule order")
        #expect(decision.state == .dismissed)
    }

    @Test func perProductPromptOverridesCopyAndDiscount() throws {
        var campaign = Self.campaign
        campaign.eligibleProductIds = ["premium_monthly"]
        campaign.perProductPrompts = ["premium_monthly": .init(discountPercent: 30, title: "Keep {{discount}}%",
                                                               message: "Only {{ discount }}% less.", ctaText: "Go")]
        let data = try #require(evaluate(campaign: campaign).offerData)
        #expect(data.prompt.discountPercent == 30)
        #expect(data.prompt.title == "Keep 30%")
        #expect(data.prompt.message == "Only 30% less.")
        #expect(data.prompt.ctaText == "Go")
    }
}

@Suite("Switch-and-save copy")
struct MigrationDisplayCopyTests {
    @Test func everyStepHasCopy() {
        let prompt = MigrationOffer.Prompt(productId: "premium_monthly", discountPercent: 20, title: "Save 20%",
                                           message: "Pay on the web.", ctaText: "Switch Now")
        let copy = MigrationOffer.DisplayCopy(prompt: prompt, productName: "Premium Monthly")
        #expect(copy.title == "Save 20%" && copy.body == "Pay on the web." && copy.ctaText == "Switch Now")
        #expect(copy.completedBody == "Saving 20% forever.")
        #expect(copy.appleCancelInstructions.contains("Choose Premium Monthly."))
        #expect(AppStore.cancellationSteps(productName: "Premium Monthly").count == 4)
    }
}
