import Foundation
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("user-offer and dismissals over HTTP")
struct SwitchAndSaveEndpointTests {
    @Test func anEligibleUserGetsTheOfferWithEveryStepsCopy() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let response = try await server.app.getUserOffer(query: .init(userId: "cus_chloe")).ok.body.json
        #expect(response.state == "eligible" && response.isSandbox && response.ineligibleReasons.isEmpty)
        #expect(response.subscription._type == .activeStorekit && response.subscription.productId == "premium_monthly")
        #expect(response.appId == 1)
        let offer = response.offer
        #expect(offer.isEligible && offer.actionType == .migrateStorekitToWeb && offer.source == .storeKit)
        #expect(offer.checkoutProductId == "premium_monthly" && offer.savingsPercent == 20)
        #expect(offer.freeTrialDays == 9, "the App Store period ends in 9 days")
        #expect(offer.requiresAppleCancel)
        #expect(offer.appleSubscription?.statusCode == 1 && offer.appleSubscription?.autoRenewEnabled == true)
        #expect(offer.display?.title == "Save 20% by paying on the web")
        #expect(offer.display?.ctaText == "Switch & save 20%")
        #expect(offer.display?.appleCancelInstructions.contains("Choose Premium Monthly.") == true)
        #expect(response.serverTime == TestServer.start)
    }

    @Test func ineligibleUsersGetReasonsAnAgentCanReadOut() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let nora = try await server.app.getUserOffer(query: .init(userId: "cus_nora")).ok.body.json
        #expect(nora.state == "ineligible" && nora.offer.isEligible == false && nora.offer.checkoutProductId == "premium_monthly")
        #expect(nora.ineligibleReasons.map(\.message) == ["subscribed 12 days; this campaign starts at 30"])
        let ben = try await server.app.getUserOffer(query: .init(userId: "cus_ben")).ok.body.json
        #expect(ben.ineligibleReasons.map(\.message) == ["not in the rollout (bucket 85; this campaign reaches buckets below 70)"])
        let george = try await server.app.getUserOffer(query: .init(userId: "cus_george")).ok.body.json
        #expect(george.ineligibleReasons.map(\.code) == ["already_switched"] && george.subscription._type == .activeWeb)
        let maya = try await server.app.getUserOffer(query: .init(userId: "cus_maya")).ok.body.json
        #expect(maya.ineligibleReasons.map(\.code) == ["jurisdiction_not_allowed"])
        let hana = try await server.app.getUserOffer(query: .init(userId: "cus_hana")).ok.body.json
        #expect(hana.state == "accepted" && hana.subscription._type == .migrationTrial)
        let liam = try await server.app.getUserOffer(query: .init(userId: "cus_liam")).ok.body.json
        #expect(liam.state == "dismissed" && liam.dismissal?.dismissedBy == "Marco (support)")
        // A user id the server has not seen: a customer with nothing, and why nothing is offered.
        let nobody = try await server.app.getUserOffer(query: .init(userId: "cus_nobody")).ok.body.json
        #expect(nobody.subscription._type == .none && nobody.offer.isEligible == false && nobody.userId == "cus_nobody")
        #expect(nobody.ineligibleReasons.map(\.code).contains("no_app_store_subscription"), "\(nobody.ineligibleReasons)")
        #expect(try await server.count("customers", where: "id = 'cus_nobody'") == 0, "a read stores nothing")
    }

    @Test func aDismissalIsSeenByEveryConsoleUntilReset() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let recorded = try await server.app.recordOfferDismissed(body: .json(.init(userId: "cus_chloe", flowType: .switchAndSave)))
        #expect(try recorded.ok.body.json.status == "dismissed")
        // Another console (an operator's key) sees it, with who and when.
        let seen = try await server.client(key: "sk_test_savedesk_demo_priya_0001").getUserOffer(query: .init(userId: "cus_chloe")).ok.body.json
        #expect(seen.state == "dismissed")
        #expect(seen.ineligibleReasons.first?.message == "offer dismissed by app on Nov 22, 2026")
        let reset = try await server.desk.resetOfferDismissal(path: .init(customerId: "cus_chloe")).ok.body.json
        #expect(reset.status == "reset")
        #expect(try await server.app.getUserOffer(query: .init(userId: "cus_chloe")).ok.body.json.state == "eligible")
        #expect(try await server.desk.resetOfferDismissal(path: .init(customerId: "cus_chloe")).ok.body.json.status == "not_dismissed")
        let actions = try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_chloe")).ok.body.json.events.map(\.action)
        // The second reset changed nothing, so it left no audit row.
        #expect(actions.prefix(2) == ["switch_and_save.dismissal_reset", "switch_and_save.dismissed"])
        for flow in ["paywall", ""] {
            let other = try await server.raw(.POST, "/v1/iap/offer-dismissed", body: #"{"user_id":"cus_chloe","flow_type":"\#(flow)"}"#)
            #expect(other.status == 400 && other.body.contains("invalid_value") && other.body.contains("switch_and_save"), "\(other.body)")
        }
        expectFailure(try await server.app.resetOfferDismissal(path: .init(customerId: "cus_chloe")), status: 403, code: "secret_key_required")
    }
}

@Suite("Cancel-flow analytics")
struct CancelFlowAnalyticsTests {
    typealias Response = Components.Schemas.CancelFlowResponse

    static func response(
        _ user: String, _ outcome: Response.OutcomePayload, option: Int, freeText: String? = nil, pauseDays: Int? = nil,
        offerShown: Bool = true, lastStep: Int = 3
    ) -> Response {
        Response(
            userId: user, productId: "premium_monthly", outcome: outcome, offerShown: offerShown,
            offerAccepted: outcome == .retained, pauseShown: pauseDays != nil || outcome == .paused,
            pauseAccepted: pauseDays != nil, pauseDurationDays: pauseDays, lastStepSeen: lastStep,
            answers: [.init(questionId: 1, selectedOptionId: option)] + (freeText.map { [.init(questionId: 3, freeText: $0)] } ?? [])
        )
    }

    @Test func figuresEqualHandCountedOnes() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let app = server.app, marco = server.desk, priya = server.client(key: "sk_test_savedesk_demo_priya_0001")
        // Day 0: app 3 (retained, paused 30, cancelled), Marco 2 (retained, dismissed).
        for (client, response) in [
            (app, Self.response("cus_ava", .retained, option: 11)),
            (app, Self.response("cus_george", .paused, option: 12, pauseDays: 30, offerShown: false)),
            (app, Self.response("cus_quinn", .cancelled, option: 13, freeText: "Not reading much lately")),
            (marco, Self.response("cus_farah", .retained, option: 11)),
            (marco, Self.response("cus_emma", .dismissed, option: 14, offerShown: false, lastStep: 1)),
        ] {
            _ = try await client.submitCancelFlowResponse(body: .json(response)).ok
        }
        server.clock.advance(by: 2 * 86_400)
        // Day 2: Priya 2 (paused 60, cancelled with text).
        _ = try await priya.submitCancelFlowResponse(body: .json(Self.response("cus_sam", .paused, option: 12, pauseDays: 60, offerShown: false))).ok
        _ = try await priya.submitCancelFlowResponse(body: .json(Self.response("cus_ava", .cancelled, option: 14, freeText: "Offline mode is missing"))).ok

        let all = try await marco.getCancelFlowAnalytics().ok.body.json
        #expect(all.outcomes == .init(total: 7, cancelled: 2, retained: 2, paused: 2, dismissed: 1, saveRate: 4.0 / 7.0))
        #expect(all.offerShown == 4 && all.offerAccepted == 2)
        #expect(all.pauseShown == 2 && all.pauseAccepted == 2)
        #expect(all.pauseDurations.map { "\($0.key):\($0.count)" } == ["30:1", "60:1"])
        #expect(all.lastStepReached.map { "\($0.key):\($0.count)" } == ["1:1", "3:6"])
        let why = try #require(all.questions.first { $0.questionId == 1 })
        #expect(why.answers.map(\.count) == [2, 2, 1, 2], "options 11, 12, 13, 14 in order")
        #expect(why.answers.first?.label == "It's too expensive")
        let better = try #require(all.questions.first { $0.questionId == 3 })
        #expect(better.freeTextCount == 2)
        #expect(better.freeTextSamples == ["Offline mode is missing", "Not reading much lately"], "newest first")
        #expect(all.operators.map(\._operator) == ["Marco (support)", "Priya (support lead)", "app"])
        #expect(all.operators.map(\.outcomes.total) == [2, 2, 3])
        #expect(all.operators[0].outcomes.saveRate == 0.5)

        let marcoOnly = try await marco.getCancelFlowAnalytics(query: .init(_operator: "Marco (support)")).ok.body.json
        #expect(marcoOnly.outcomes.total == 2 && marcoOnly.operators.count == 1)
        let dayTwo = try await marco.getCancelFlowAnalytics(query: .init(from: TestServer.start.addingTimeInterval(86_400))).ok.body.json
        #expect(dayTwo.outcomes.total == 2 && dayTwo.outcomes.paused == 1 && dayTwo.outcomes.cancelled == 1)
        let dayZero = try await marco.getCancelFlowAnalytics(query: .init(to: TestServer.start.addingTimeInterval(86_400))).ok.body.json
        #expect(dayZero.outcomes.total == 5)
        let empty = try await marco.getCancelFlowAnalytics(query: .init(_operator: "Nobody")).ok.body.json
        #expect(empty.outcomes.total == 0 && empty.outcomes.saveRate == 0)
        expectFailure(try await marco.getCancelFlowAnalytics(query: .init(from: TestServer.start, to: TestServer.start)),
                      status: 422, code: "invalid_range")
        expectFailure(try await app.getCancelFlowAnalytics(), status: 403, code: "secret_key_required")
    }
}

@Suite("Switch-and-save funnel")
struct SwitchAndSaveFunnelTests {
    @Test func impressionsConversionsAndCompletedPerVariant() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let app = server.app
        func view(_ user: String, _ session: String, _ variant: String) async throws -> String {
            try await app.recordOfferViewed(body: .json(.init(
                userId: user, productId: "premium_monthly", sessionId: session, flowType: "switch_and_save",
                variantId: ["A": 1, "B": 2][variant]
            ))).ok.body.json.status
        }
        #expect(try await view("cus_chloe", "s1", "A") == "recorded")
        #expect(try await view("cus_chloe", "s1", "A") == "duplicate", "once per user, session and variant")
        #expect(try await view("cus_ben", "s1", "A") == "recorded")
        #expect(try await view("cus_ben", "s2", "A") == "recorded")
        #expect(try await view("cus_hana", "s1", "B") == "recorded")
        #expect(try await view("cus_george", "s1", "B") == "recorded")
        for user in ["cus_chloe", "cus_hana", "cus_george", "cus_chloe"] {
            let converted = try await app.recordMigrationConverted(body: .json(.init(userId: user, source: "web_checkout"))).ok.body.json
            #expect(converted.conversions == 1)
        }
        let report = try await server.desk.getSwitchAndSaveAnalytics().ok.body.json
        // George's App Store subscription no longer renews: his switch is complete.
        #expect(report.funnel == .init(impressions: 5, conversions: 3, completed: 1, conversionRate: 0.6))
        #expect(report.variants.map(\.variantId) == ["1", "2"])
        #expect(report.variants[0].funnel == .init(impressions: 3, conversions: 1, completed: 0, conversionRate: 1.0 / 3.0))
        #expect(report.variants[1].funnel == .init(impressions: 2, conversions: 2, completed: 1, conversionRate: 1.0))
        let later = try await server.desk.getSwitchAndSaveAnalytics(query: .init(from: TestServer.start.addingTimeInterval(60))).ok.body.json
        #expect(later.funnel.impressions == 0 && later.funnel.conversionRate == 0)
        expectFailure(try await app.recordOfferViewed(body: .json(.init(userId: "cus_chloe", productId: "premium_monthly", sessionId: "", flowType: "switch_and_save"))),
                      status: 400, code: "invalid_request")
        // The SDK's placeholder for no user is nobody: its impression is not counted, no customer made.
        #expect(try await app.recordOfferViewed(body: .json(.init(userId: "anonymous", productId: "premium_monthly", sessionId: "s-anon", flowType: "switch_and_save"))).ok.body.json.status == "anonymous")
        #expect(try await server.count("customers", where: "id = 'anonymous'") == 0)
    }
}
