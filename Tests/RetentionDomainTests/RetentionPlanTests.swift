import Foundation
import Testing

@testable import RetentionDomain

/// The retention rule for every combination of who bills (web, App Store, both, none) ×
/// switch-and-save eligibility × what the config enables × the offer-code pool.
@Suite("Retention plan")
struct RetentionPlanTests {
    typealias Plan = CancelFlow.RetentionPlan
    static let now = WireFormat.parseDate("2026-11-23T12:00:00Z")!

    enum Source: String, CaseIterable, Sendable { case web, appStore, both, none }
    enum Eligibility: String, CaseIterable, Sendable { case eligible, notEligible, unknown }
    enum Pool: String, CaseIterable, Sendable { case codesLeft, empty, notConfigured }
    struct Toggles: Sendable, CustomStringConvertible {
        var offer: Bool
        var pause: Bool
        var description: String { "offer \(offer ? "on" : "off"), pause \(pause ? "on" : "off")" }
        static let all = [Toggles(offer: true, pause: true), Toggles(offer: true, pause: false),
                          Toggles(offer: false, pause: true), Toggles(offer: false, pause: false)]
    }

    static let catalog = [
        Product(id: "premium_monthly", displayName: "Premium Monthly",
                webPrice: Price(amountMicros: 7_990_000, currencyCode: "USD"),
                storekitPrice: Price(amountMicros: 9_990_000, currencyCode: "USD"), billingInterval: .month),
    ]

    static func entitlements(_ source: Source, appleRenews: Bool = true) -> [Entitlement] {
        let web = Entitlement(id: "web", productId: "premium_monthly", source: .webCheckout, status: .active, isActive: true,
                              expiresAt: now.addingTimeInterval(20 * 86_400), purchasedAt: now.addingTimeInterval(-86_400), willRenew: true)
        let store = Entitlement(id: "store", productId: "premium_monthly", source: .storeKit, status: .active, isActive: true,
                                expiresAt: now.addingTimeInterval(18 * 86_400), purchasedAt: now.addingTimeInterval(-95 * 86_400),
                                willRenew: appleRenews, storekitOriginalTransactionId: "2000000810000003")
        switch source {
        case .web: return [web]
        case .appStore: return [store]
        case .both: return [web, store]
        case .none:
            var lapsed = store
            lapsed.status = .expired
            lapsed.isActive = false
            return [lapsed]
        }
    }

    static func decision(_ eligibility: Eligibility) -> SwitchAndSaveEligibility.Decision? {
        let data = MigrationOffer.OfferData(
            prompt: .init(productId: "premium_monthly", discountPercent: 20, title: "Save 20% by paying on the web",
                          message: "Keep everything and pay 20% less.", ctaText: "Switch & save 20%"),
            freeTrialDays: 18, activeStoreKitProductId: "premium_monthly"
        )
        switch eligibility {
        case .eligible: return .offer(data)
        case .notEligible: return .notOffered([.init(.tenureTooShort, "subscribed 12 days; this campaign starts at 30")])
        case .unknown: return nil
        }
    }

    static func pool(_ pool: Pool) -> Plan.OfferCodePool? {
        switch pool {
        case .codesLeft: .init(title: "A month on us", body: "An App Store offer code", ctaText: "Give the code", hasCode: true)
        case .empty: .init(title: "A month on us", body: "An App Store offer code", ctaText: "Give the code", hasCode: false)
        case .notConfigured: nil
        }
    }

    static func plan(_ source: Source, _ eligibility: Eligibility, _ toggles: Toggles, _ pool: Pool) -> Plan {
        Plan.plan(.init(
            productId: "premium_monthly", entitlements: entitlements(source),
            config: CancelFlowNavigatorTests.config(offer: toggles.offer, pause: toggles.pause), switchAndSave: decision(eligibility),
            catalog: catalog, offerCodes: self.pool(pool)
        ))
    }

    static let combinations: [(Source, Eligibility, Toggles, Pool)] = Source.allCases.flatMap { source in
        Eligibility.allCases.flatMap { eligibility in
            Toggles.all.flatMap { toggles in Pool.allCases.map { (source, eligibility, toggles, $0) } }
        }
    }

    @Test("every combination", arguments: combinations)
    func everyCombination(_ source: Source, _ eligibility: Eligibility, _ toggles: Toggles, _ pool: Pool) {
        let plan = Self.plan(source, eligibility, toggles, pool)
        switch source {
        case .web, .both:
            #expect(plan.billing == (source == .web ? .web : .both))
            #expect(plan.saveOffer == (toggles.offer ? .coupon(CancelFlowNavigatorTests.config().offer!) : nil),
                    "web billing keeps the configured coupon whatever the App Store side says")
            #expect(plan.pauseAvailable == toggles.pause)
            #expect(plan.pauseNote == nil && plan.offerNote == nil)
            #expect(plan.cancellation == .web)
            #expect((plan.appleNote != nil) == (source == .both), "mid-switch says what remains on Apple's side")
        case .appStore:
            #expect(plan.billing == .appStore)
            #expect(!plan.pauseAvailable, "Apple has no pause")
            #expect((plan.pauseNote != nil) == toggles.pause, "the note only when the config would have offered a pause")
            #expect(plan.cancellation == .appStore(steps: AppStore.cancellationSteps(productName: "Premium Monthly")))
            switch (toggles.offer, eligibility, pool) {
            case (false, _, _):
                #expect(plan.saveOffer == nil && plan.offerNote == nil)
            case (true, .eligible, _):
                guard case .switchAndSave(let terms)? = plan.saveOffer else {
                    Issue.record("expected switch and save, got \(String(describing: plan.saveOffer))")
                    return
                }
                #expect(terms.priceLine == "$9.99/month on the App Store \u{2192} $6.39/month on the web")
                #expect(terms.bridgedDays == 18)
                #expect(terms.bridgeLine.contains("no double charge"))
                #expect(terms.productName == "Premium Monthly")
            case (true, _, .codesLeft):
                #expect(plan.saveOffer?.kind == "offer_code")
            case (true, _, let pool):
                #expect(plan.saveOffer == nil)
                let note = plan.offerNote ?? ""
                #expect(note.contains(pool == .empty ? "all handed out" : "no App Store offer codes are configured"))
                #expect(note.contains(eligibility == .unknown ? "could not be evaluated" : "subscribed 12 days"))
            }
        case .none:
            #expect(plan.billing == .none)
            #expect(plan.saveOffer == nil && !plan.pauseAvailable)
            #expect(plan.cancellation == .none)
        }
        #expect(plan.availability == .init(offer: plan.saveOffer != nil, pause: plan.pauseAvailable))
    }

    @Test func midSwitchWithAppleOffSaysNoDoubleCharge() {
        let plan = Plan.plan(.init(
            productId: "premium_monthly", entitlements: Self.entitlements(.both, appleRenews: false),
            config: CancelFlowNavigatorTests.config(), switchAndSave: nil, catalog: Self.catalog
        ))
        #expect(plan.appleNote == "App Store billing for Premium Monthly is off; it ends on Dec 11, 2026 with no further charge.")
        #expect(plan.productId == "premium_monthly")
    }

    // MARK: The navigator with what the plan allows

    @Test func pauseTriggerForAnAppStoreSubscriberLeadsToWhatIsAvailable() throws {
        let plan = Self.plan(.appStore, .eligible, .init(offer: true, pause: true), .notConfigured)
        var nav = CancelFlow.Navigator(config: CancelFlowNavigatorTests.config(), productId: "premium_monthly", userId: "u",
                                       availability: plan.availability)
        try nav.select(optionId: 4)  // "Taking a break" triggers the pause
        try nav.proceed()
        #expect(nav.page == .retention(.offer), "the pause cannot be applied: the save offer (switch and save) is shown")
        #expect(nav.unavailableTrigger == .pause)
        #expect(plan.note(for: .pause)?.contains("Apple has no pause") == true)
        try nav.declineOffer()
        #expect(nav.page == .cancelConfirmation, "no pause step follows")
        try nav.confirmCancel()
        let response = nav.response()
        #expect(response.offerShown && !response.offerAccepted)
        #expect(!response.pauseShown && !response.pauseAccepted, "what was shown, as it happened")
    }

    @Test func nothingAvailableKeepsTheQuestionsAndTheNote() throws {
        let plan = Self.plan(.appStore, .notEligible, .init(offer: true, pause: true), .notConfigured)
        var nav = CancelFlow.Navigator(config: CancelFlowNavigatorTests.config(), productId: "premium_monthly", userId: "u",
                                       availability: plan.availability)
        #expect(!nav.hasRetentionPage)
        try nav.select(optionId: 3)  // "Too expensive" triggers the offer
        try nav.proceed()
        #expect(nav.page == .question(index: 1), "no retention page: the questions go on")
        #expect(nav.unavailableTrigger == .offer)
        try nav.proceed()
        #expect(nav.unavailableTrigger == .offer, "the note stays on the pages that follow")
        nav.back()
        nav.back()
        #expect(nav.page == .question(index: 0))
        #expect(nav.unavailableTrigger == nil, "back at the question that asked for it, the note goes")
    }
}

@Suite("Customer standing")
struct CustomerStandingTests {
    typealias Item = CustomerStanding.Item
    static let now = RetentionPlanTests.now

    static func item(_ entitlement: Entitlement, _ summary: String, _ warning: Lifecycle.WarningLevel = .none) -> Item {
        Item(entitlement: entitlement, productName: "Premium Monthly", summary: summary, warning: warning)
    }

    @Test func afterASwitchTheCustomerIsActiveOnTheWeb() {
        var web = RetentionPlanTests.entitlements(.web)[0]
        web.status = .trialing
        let store = RetentionPlanTests.entitlements(.appStore, appleRenews: false)[0]
        let standing = CustomerStanding.resolve([
            Self.item(store, "Cancels on Dec 11, 2026 \u{00B7} access until then", .notice),
            Self.item(web, "Migration trial \u{00B7} ends Dec 11, 2026"),
        ])
        #expect(standing.headline == "Active on the web \u{00B7} Premium Monthly \u{00B7} Migration trial \u{00B7} ends Dec 11, 2026")
        #expect(standing.detail == "App Store billing for Premium Monthly ends on Dec 11, 2026: no double charge.")
        #expect(standing.covered == ["web", "store"], "the App Store's 'cancels on' is not a cancellation of the customer")
        #expect(standing.level == .none)
    }

    @Test func midSwitchWithAppleStillRenewingWarns() {
        let standing = CustomerStanding.resolve([
            Self.item(RetentionPlanTests.entitlements(.appStore)[0], "Active \u{00B7} renews Dec 11, 2026"),
            Self.item(RetentionPlanTests.entitlements(.web)[0], "Active \u{00B7} renews Dec 13, 2026"),
        ])
        #expect(standing.headline == "Active on the web \u{00B7} Premium Monthly \u{00B7} renews Dec 13, 2026")
        #expect(standing.detail == "The App Store still renews Premium Monthly: the customer turns it off in Settings.")
        #expect(standing.level == .warning)
    }

    @Test func singleSubscriptionsAndNone() {
        let store = CustomerStanding.resolve([Self.item(RetentionPlanTests.entitlements(.appStore)[0], "Active \u{00B7} renews Dec 11, 2026")])
        #expect(store.headline == "Active on the App Store \u{00B7} Premium Monthly \u{00B7} renews Dec 11, 2026")
        #expect(store.detail == nil)
        var paused = RetentionPlanTests.entitlements(.web)[0]
        paused.status = .paused
        #expect(CustomerStanding.resolve([Self.item(paused, "Paused \u{00B7} resumes Dec 17, 2026", .notice)]).headline
            == "Paused on the web \u{00B7} Premium Monthly \u{00B7} resumes Dec 17, 2026")
        var cancelling = RetentionPlanTests.entitlements(.web)[0]
        cancelling.willRenew = false
        #expect(CustomerStanding.resolve([Self.item(cancelling, "Cancels on Dec 13, 2026 \u{00B7} access until then", .notice)]).headline
            == "Cancelling on the web \u{00B7} Premium Monthly \u{00B7} Cancels on Dec 13, 2026 \u{00B7} access until then")
        let lapsed = CustomerStanding.resolve([Self.item(RetentionPlanTests.entitlements(.none)[0], "Expired (cancelled)", .notice)])
        #expect(lapsed.headline == "No live subscription \u{00B7} Premium Monthly \u{00B7} Expired (cancelled)")
        #expect(CustomerStanding.resolve([]).headline == "No live subscription")
    }
}
