import Foundation
import SQLKit
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

/// The App Store half of the cancel flow on the server: a cancellation read out waits for Apple
/// and is confirmed by the App Store's own word; offer codes for subscribers who stay; the desk
/// analytics count both, and a pause chosen but not applied apart from one applied.
@Suite("App Store cancel flow")
struct AppStoreCancelFlowTests {
    typealias Schemas = Components.Schemas

    @Test func aCancellationReadOutWaitsForAppleThenAppleConfirmsIt() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let request = Schemas.AppStoreCancellationRequest(productId: "premium_monthly")
        let first = try await server.desk.recordAppStoreCancellation(
            path: .init(customerId: "cus_diego"), headers: .init(idempotencyKey: "read-1"), body: .json(request)).ok.body.json
        #expect(first.state == .waitingForApple && first.confirmedAt == nil && first.readOutBy == "Marco (support)")
        #expect(first.steps.count == 4 && first.steps[2] == "Choose Premium Monthly.")
        #expect(first.accessUntil != nil)
        // A repeat while waiting answers with the same record; nothing new is written.
        let again = try await server.desk.recordAppStoreCancellation(path: .init(customerId: "cus_diego"), body: .json(request)).ok.body.json
        #expect(again.id == first.id)
        #expect(try await server.count("appstore_cancellations") == 1)
        var detail = try await server.desk.getCustomer(path: .init(customerId: "cus_diego")).ok.body.json
        #expect(detail.retention.appStoreCancellations.map(\.state) == [.waitingForApple])

        // The App Store reports auto-renew off (a signed notification through the webhook path).
        server.clock.advance(by: 3_600)
        _ = try await server.desk.simulateAppStoreEvent(body: .json(.init(originalTransactionId: "2000000810000003", event: .autoRenewOff))).ok
        detail = try await server.desk.getCustomer(path: .init(customerId: "cus_diego")).ok.body.json
        let confirmed = try #require(detail.retention.appStoreCancellations.first)
        #expect(confirmed.state == .confirmed && confirmed.confirmedAt == TestServer.start.addingTimeInterval(3_600))
        #expect(try await server.count("audit_events", where: "customer_id = 'cus_diego' AND action = 'app_store.cancellation_read_out'") == 1)

        let analytics = try await server.desk.getCancelFlowAnalytics(query: .init()).ok.body.json
        #expect(analytics.appStoreCancellations.readOut == 1 && analytics.appStoreCancellations.confirmed == 1)
        let marcoOnly = try await server.desk.getCancelFlowAnalytics(query: .init(_operator: "Priya (support lead)")).ok.body.json
        #expect(marcoOnly.appStoreCancellations.readOut == 0, "filtered by the operator who read it out")
    }

    @Test func alreadyOffAtAppleIsConfirmedAtOnceAndWrongTargetsAreRefused() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        _ = try await server.desk.simulateAppStoreEvent(body: .json(.init(originalTransactionId: "2000000810000001", event: .autoRenewOff))).ok
        let chloe = try await server.desk.recordAppStoreCancellation(
            path: .init(customerId: "cus_chloe"), body: .json(.init(productId: "premium_monthly"))).ok.body.json
        #expect(chloe.state == .confirmed, "the customer had already turned renewal off")
        // Billed on the web (Ava), both (Hana: the flow acts on the web one), nothing (Ivan).
        expectFailure(try await server.desk.recordAppStoreCancellation(path: .init(customerId: "cus_ava"), body: .json(.init(productId: "premium_monthly"))),
                      status: 409, code: "billed_on_the_web")
        expectFailure(try await server.desk.recordAppStoreCancellation(path: .init(customerId: "cus_hana"), body: .json(.init(productId: "premium_monthly"))),
                      status: 409, code: "billed_on_the_web")
        expectFailure(try await server.desk.recordAppStoreCancellation(path: .init(customerId: "cus_ivan"), body: .json(.init(productId: "premium_monthly"))),
                      status: 404, code: "no_app_store_subscription")
        expectFailure(try await server.app.recordAppStoreCancellation(path: .init(customerId: "cus_diego"), body: .json(.init(productId: "premium_monthly"))),
                      status: 403, code: "secret_key_required")
        expectFailure(try await server.desk.recordAppStoreCancellation(path: .init(customerId: "cus_diego"), body: .json(.init(productId: "gold"))),
                      status: 404, code: "unknown_product")
    }

    @Test func offerCodesForSubscribersWhoStayGoOncePerCustomer() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        var detail = try await server.desk.getCustomer(path: .init(customerId: "cus_nora")).ok.body.json
        #expect(detail.retention.appStoreOffer?.title == "Stay for a month on us" && detail.retention.appStoreOffer?.hasCode == true)
        let request = Schemas.AppStoreCancellationRequest(productId: "premium_monthly")
        let nora = try await server.desk.issueRetentionOfferCode(path: .init(customerId: "cus_nora"), body: .json(request)).ok.body.json
        #expect(nora.offerCode == "READERSTAY01" && nora.message.contains("Redeem Gift Card or Code"))
        let again = try await server.desk.issueRetentionOfferCode(path: .init(customerId: "cus_nora"), body: .json(request)).ok.body.json
        #expect(again.offerCode == "READERSTAY01", "a customer keeps the one code")
        // The win-back pool is separate: a lapsed subscriber's code comes from it.
        let ivan = try await server.desk.winBackCustomer(path: .init(customerId: "cus_ivan"), body: .json(.init(productId: "premium_monthly"))).ok.body.json
        #expect(ivan.offerCode == "READERBACK01")
        // Four more App Store subscribers empty the pool; the next is told so.
        for customer in ["cus_ben", "cus_chloe", "cus_diego", "cus_maya"] {
            _ = try await server.desk.issueRetentionOfferCode(path: .init(customerId: customer), body: .json(request)).ok
        }
        detail = try await server.desk.getCustomer(path: .init(customerId: "cus_olivia")).ok.body.json
        #expect(detail.retention.appStoreOffer?.hasCode == false)
        expectFailure(try await server.desk.issueRetentionOfferCode(path: .init(customerId: "cus_olivia"), body: .json(request)),
                      status: 409, code: "no_offer_codes")
        expectFailure(try await server.desk.issueRetentionOfferCode(path: .init(customerId: "cus_ava"), body: .json(request)),
                      status: 409, code: "billed_on_the_web")
    }

    @Test func aPauseChosenButNotAppliedIsNotASave() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        func submit(_ user: String, outcome: Schemas.CancelFlowResponse.OutcomePayload) async throws {
            _ = try await server.app.submitCancelFlowResponse(body: .json(.init(
                userId: user, productId: "premium_monthly", outcome: outcome, offerShown: false, offerAccepted: false, pauseShown: true,
                pauseAccepted: true, pauseDurationDays: 30, lastStepSeen: 3, answers: [.init(questionId: 1, selectedOptionId: 12)]
            ))).ok
        }
        try await submit("cus_ava", outcome: .paused)
        try await submit("cus_chloe", outcome: .dismissed)  // chosen, but Apple has no pause
        let analytics = try await server.desk.getCancelFlowAnalytics(query: .init()).ok.body.json
        #expect(analytics.pauseAccepted == 2 && analytics.pauseApplied == 1)
        #expect(analytics.outcomes.saveRate == 0.5, "only the applied pause saved a customer")
    }
}
