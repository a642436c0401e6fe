import Foundation
import RetentionDomain
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("IAP endpoints over HTTP")
struct IAPEndpointTests {
    typealias Schemas = Components.Schemas

    @Test func productsAndCancelFlowConfig() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let products = try await server.app.getProducts().ok.body.json
        #expect(products.products.map(\.id) == ["premium_monthly", "premium_yearly", "basic_monthly"])
        #expect(products.products[0].webPrice == .init(amountMicros: 7_990_000, currencyCode: "USD"))
        #expect(products.config.migration?.discountPercent == 20)
        #expect(products.config.offer?.flowType == .migration && products.config.offer?.savingsPercent == 20,
                "config.offer is the switch-and-save tip, not the cancel-flow offer")
        #expect(products.products[0].subscriptionGroupId == 21482973)

        let config = try await server.app.getCancelFlowConfig(query: .init(userId: "cus_ava")).ok.body.json
        #expect(config.enabled)
        #expect(config.questions.map(\.id) == [1, 2, 3])
        #expect(config.questions[0].options.first { $0.id == 11 }?.triggersOffer == true)
        #expect(config.pause?.options.map(\.durationDays) == [30, 60, 90])
        // The domain model reads the same JSON: wire compatibility both ways.
        let raw = try await server.raw(.GET, "/v1/iap/cancel-flow/")
        let domain = try WireFormat.decoder().decode(CancelFlow.Config.self, from: Data(raw.body.utf8))
        #expect(domain.variantId == 202611)
        #expect(domain.questions.allSatisfy { !$0.options.isEmpty || $0.questionType == .freeText })
    }

    @Test func trailingSlashOrNot() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        for path in ["/v1/iap/cancel-flow", "/v1/iap/cancel-flow/", "/v1/iap/entitlements/?user_id=cus_ava"] {
            #expect(try await server.raw(.GET, path).status == 200, "\(path)")
        }
        let posted = try await server.raw(.POST, "/v1/iap/subscriptions/cancel/", body: #"{"user_id":"cus_ava","product_id":"premium_monthly"}"#)
        #expect(posted.status == 200)
    }

    @Test func entitlementsMergeSources() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let hana = try await server.app.getEntitlements(query: .init(userId: "cus_hana")).ok.body.json
        #expect(Set(hana.entitlements.map(\.source.rawValue)) == ["store_kit", "web_checkout"])
        #expect(hana.pendingClaims.isEmpty)
        let web = try #require(hana.entitlements.first { $0.source.rawValue == "web_checkout" })
        #expect(web.status == .active && web.isTrial && web.isActive)
        // A user id the server has not seen has nothing yet, and the read stores nothing.
        #expect(try await server.app.getEntitlements(query: .init(userId: "cus_nobody")).ok.body.json.entitlements.isEmpty)
        #expect(try await server.count("customers", where: "id = 'cus_nobody'") == 0)
    }

    @Test func acceptOfferDiscountsTheWebSubscription() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let result = try await server.app.acceptSaveOffer(body: .json(.init(userId: "cus_ava", productId: "premium_monthly")))
            .ok.body.json
        #expect(result == Schemas.SaveOfferResult(message: "40% off for 3 months", discountPercent: 40, durationMonths: 3))
        let detail = try await server.desk.getCustomer(path: .init(customerId: "cus_ava")).ok.body.json
        let discount = try #require(detail.subscriptions.first?.discount)
        #expect(discount.percentOff == 40 && discount.durationInMonths == 3)
        #expect(discount.endsAt == Calendar.utc.date(byAdding: .month, value: 3, to: TestServer.start))
        // Accepting again does not stack.
        let again = try await server.app.acceptSaveOffer(body: .json(.init(userId: "cus_ava", productId: "premium_monthly")))
        #expect(try again.ok.body.json == result)
        let count = try await server.withStore { store in
            try await store.read { data in try await data.ledger.discounts(subscriptionId: "sub_ava_1").count }
        }
        #expect(count == 1)
    }

    @Test func pauseResumeCancelReactivate() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let app = server.app
        let ava = Schemas.UserProductRequest(userId: "cus_ava", productId: "premium_monthly")

        let paused = try await app.pauseSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly", pauseDurationDays: 14))).ok.body.json
        #expect(paused.resumesAt == TestServer.start.addingTimeInterval(14 * 86_400))
        // The SDK sends no Idempotency-Key: a second pause answers as the first did.
        let again = try await app.pauseSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly", pauseDurationDays: 14)))
        #expect(try again.ok.body.json.resumesAt == paused.resumesAt)

        server.clock.advance(by: 3 * 86_400)
        let resumed = try await app.resumeSubscription(body: .json(ava)).ok.body.json
        #expect(resumed.status == "active")
        #expect(resumed.resumedAt == TestServer.start.addingTimeInterval(3 * 86_400))
        expectFailure(try await app.resumeSubscription(body: .json(ava)), status: 409, code: "not_paused")

        let detail = try await server.desk.getCustomer(path: .init(customerId: "cus_ava")).ok.body.json
        // Seeded renewal was 12 days after start; three paused days move it by three.
        #expect(detail.subscriptions[0].currentPeriodEnd == TestServer.start.addingTimeInterval(15 * 86_400))

        let cancelled = try await app.cancelSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly"))).ok.body.json
        #expect(cancelled.accessUntil == TestServer.start.addingTimeInterval(15 * 86_400))
        let entitlement = try await app.getEntitlements(query: .init(userId: "cus_ava")).ok.body.json.entitlements[0]
        #expect(entitlement.isActive && !entitlement.willRenew, "access until the period ends")

        let reactivated = try await app.reactivateSubscription(body: .json(ava)).ok.body.json
        #expect(reactivated.status == "active" && reactivated.renewsAt == cancelled.accessUntil)
        expectFailure(try await app.reactivateSubscription(body: .json(ava)), status: 409, code: "not_cancelled")

        let now = try await app.cancelSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly", immediate: true))).ok.body.json
        #expect(now.status == "cancelled" && now.accessUntil == server.clock.now())
        let gone = try await app.getEntitlements(query: .init(userId: "cus_ava")).ok.body.json.entitlements[0]
        #expect(!gone.isActive)
        expectFailure(try await app.pauseSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly"))), status: 409, code: "subscription_ended")
    }

    @Test func pauseByOptionAndDefaultAndAutomaticResume() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let byOption = try await server.app.pauseSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly", pauseOptionId: 2)))
        #expect(try byOption.ok.body.json.resumesAt == TestServer.start.addingTimeInterval(60 * 86_400))
        let byDefault = try await server.app.pauseSubscription(body: .json(.init(userId: "cus_george", productId: "premium_monthly")))
        #expect(try byDefault.ok.body.json.resumesAt == TestServer.start.addingTimeInterval(30 * 86_400))
        // The clock passes the resume date: the next read finds George active again.
        server.clock.advance(by: 31 * 86_400)
        let george = try await server.app.getEntitlements(query: .init(userId: "cus_george")).ok.body.json
        let web = try #require(george.entitlements.first { $0.source == .webCheckout })
        #expect(web.status == .active && web.isActive)
        let timeline = try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_george")).ok.body.json
        #expect(timeline.events.contains { $0.action == "billing.settle" && $0.actor == "billing" })
    }

    @Test func pauseUntilAFixedDate() async throws {
        var config = try TestServer.demoConfig()
        let newYear = try #require(WireFormat.parseDate("2027-01-01T00:00:00Z"))
        config.cancelFlow.config.pause?.options.append(
            .init(id: 9, order: 9, label: "Until the new year", durationType: .fixedDate, resumeDate: newYear)
        )
        let server = try await TestServer.start(config: config)
        defer { Task { await server.stop() } }
        let paused = try await server.app.pauseSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly", pauseOptionId: 9)))
        // Nov 22 12:00 → Jan 1 00:00 is 39.5 days: the pause lasts 40 whole days.
        #expect(try paused.ok.body.json.resumesAt == TestServer.start.addingTimeInterval(40 * 86_400))
        let published = try await server.app.getCancelFlowConfig().ok.body.json
        #expect(published.pause?.options.last?.resumeDate == newYear)
        server.clock.set(newYear.addingTimeInterval(86_400))
        let past = try await server.app.pauseSubscription(body: .json(.init(userId: "cus_george", productId: "premium_monthly", pauseOptionId: 9)))
        expectFailure(past, status: 422, code: "pause_option_expired")
    }

    @Test func appStoreOnlySubscriptionsAreTheCustomers() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let body = try #require(expectFailure(
            try await server.app.cancelSubscription(body: .json(.init(userId: "cus_chloe", productId: "premium_monthly"))),
            status: 422, code: "managed_by_app_store"
        ))
        #expect(body.error.contains("App Store"))
        #expect(body.steps?.count == 4)
        expectFailure(try await server.app.pauseSubscription(body: .json(.init(userId: "cus_chloe", productId: "premium_monthly"))),
                      status: 422, code: "managed_by_app_store")
        expectFailure(try await server.app.acceptSaveOffer(body: .json(.init(userId: "cus_chloe", productId: "premium_monthly"))),
                      status: 422, code: "managed_by_app_store")
        // Both web and App Store (mid-switch): the web one is acted on.
        let hana = try await server.app.cancelSubscription(body: .json(.init(userId: "cus_hana", productId: "premium_monthly")))
        #expect(try hana.ok.body.json.status == "trialing")
    }

    @Test func unknownThingsAre404() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        // A user id the server has not seen is a customer with nothing: nothing to cancel.
        expectFailure(try await server.app.cancelSubscription(body: .json(.init(userId: "cus_nobody", productId: "premium_monthly"))),
                      status: 404, code: "no_subscription")
        expectFailure(try await server.app.cancelSubscription(body: .json(.init(userId: "cus_ava", productId: "gold_plan"))),
                      status: 404, code: "unknown_product")
        expectFailure(try await server.app.cancelSubscription(body: .json(.init(userId: "cus_ava", productId: "basic_monthly"))),
                      status: 404, code: "no_subscription")
        expectFailure(try await server.app.pauseSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly", pauseOptionId: 9))),
                      status: 404, code: "unknown_pause_option")
    }

    @Test(arguments: [
        (#"{"user_id":"cus_ava","product_id":"premium_monthly","pause_duration_days":-3}"#, 400, "out_of_range"),
        (#"{"user_id":"cus_ava","product_id":"premium_monthly","pause_duration_days":100000}"#, 400, "out_of_range"),
        (#"{"user_id":"cus_ava","product_id":"premium_monthly","pause_duration_days":200}"#, 422, "invalid_pause_duration"),
        (#"{"user_id":"cus_ava","product_id":"premium_monthly","pause_duration_days":"ten"}"#, 400, "invalid_request"),
        (#"{"user_id":"cus_ava"}"#, 400, "invalid_request"),
        (#"{"user_id":"cus_ava","product_id":"#, 400, "invalid_json"),
        ("", 400, "invalid_json"),
        (#"[1,2,3]"#, 400, "invalid_request"),
    ])
    func malformedRequestsAre400AndChangeNothing(body: String, status: Int, code: String) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let response = try await server.raw(.POST, "/v1/iap/subscriptions/pause", body: body)
        #expect(response.status == status)
        let error = try JSONDecoder().decode(Schemas.ErrorBody.self, from: Data(response.body.utf8))
        #expect(error.code == code, "\(error.error)")
        let status = try await server.app.getEntitlements(query: .init(userId: "cus_ava")).ok.body.json.entitlements[0].status
        #expect(status == .active, "nothing was written")
    }

    @Test func queryAndContentTypeMistakesAre400() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let badPage = try await server.raw(.GET, "/v1/desk/customers?per_page=lots", key: TestServer.operatorKey)
        #expect(badPage.status == 400 && badPage.body.contains("invalid_request"))
        let missingUser = try await server.raw(.GET, "/v1/iap/entitlements")
        #expect(missingUser.status == 400)
        let text = try await server.raw(.POST, "/v1/iap/subscriptions/resume", body: nil, headers: ["Content-Type": "text/plain"])
        #expect(text.status == 400)
        let tooMany = try await server.raw(.GET, "/v1/desk/customers?per_page=1000", key: TestServer.operatorKey)
        #expect(tooMany.status == 400 && tooMany.body.contains("per_page must be between 1 and 100"))
    }

    @Test func errorMessagesNameTheField() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let wrongType = try await server.raw(.POST, "/v1/iap/subscriptions/cancel", body: #"{"user_id":"cus_ava","product_id":"premium_monthly","immediate":"yes"}"#)
        #expect(wrongType.body.contains(#"field \"immediate\" should be true or false"#))
        let missing = try await server.raw(.POST, "/v1/iap/cancel-flow/accept-offer", body: #"{"user_id":"cus_ava"}"#)
        #expect(missing.body.contains(#"missing field \"product_id\""#))
    }

    @Test func cancelFlowResponsesAreRecordedAndValidated() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let response = Schemas.CancelFlowResponse(
            userId: "cus_ava", productId: "premium_monthly", outcome: .paused, offerShown: true, offerAccepted: false,
            pauseShown: true, pauseAccepted: true, pauseDurationDays: 30, lastStepSeen: 3,
            answers: [.init(questionId: 1, selectedOptionId: 11), .init(questionId: 3, freeText: "Too pricey this month")],
            variantId: 202611
        )
        #expect(try await server.app.submitCancelFlowResponse(body: .json(response)).ok.body.json.status == "recorded")
        var badOption = response
        badOption.answers = [.init(questionId: 1, selectedOptionId: 99)]
        expectFailure(try await server.app.submitCancelFlowResponse(body: .json(badOption)), status: 422, code: "unknown_option")
        var badQuestion = response
        badQuestion.answers = [.init(questionId: 42, freeText: "x")]
        expectFailure(try await server.app.submitCancelFlowResponse(body: .json(badQuestion)), status: 422, code: "unknown_question")
        var badStep = response
        badStep.lastStepSeen = 12
        expectFailure(try await server.app.submitCancelFlowResponse(body: .json(badStep)), status: 422, code: "invalid_last_step")
        let rows = try await server.withStore { store in
            try await store.exclusive { db in try await db.raw("SELECT outcome, answers FROM cancel_flow_responses").all() }
        }
        #expect(rows.count == 1, "only the valid response was stored")
        #expect(try rows[0].decode(column: "outcome", as: String.self) == "paused")
        // A later cancellation records the reason the customer gave.
        _ = try await server.app.cancelSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly"))).ok
        let detail = try await server.desk.getCustomer(path: .init(customerId: "cus_ava")).ok.body.json
        #expect(detail.subscriptions[0].cancelReason == "It's too expensive")
    }
}

extension Calendar {
    static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        return calendar
    }
}
