import Foundation
import SQLKit
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("Simulated App Store on the test clock")
struct SwitchAndSaveRunTests {
    func lifecycle(
        _ server: TestServer, _ customer: String, source: Components.Schemas.Entitlement.SourcePayload = .storeKit
    ) async throws -> Components.Schemas.Lifecycle {
        let detail = try await server.desk.getCustomer(path: .init(customerId: customer)).ok.body.json
        return try #require(detail.entitlements.first { $0.entitlement.source == source }).lifecycle
    }

    @Test func aLapsedSubscriberWalksGraceThenBillingRetryThenExpiry() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        #expect(try await lifecycle(server, "cus_olivia").state.rawValue == "grace_period")
        _ = try await server.desk.advanceClock(body: .json(.init(days: 6))).ok
        let retry = try await lifecycle(server, "cus_olivia")
        #expect(retry.state.rawValue == "billing_retry" && retry.hasAccess && retry.warning.rawValue == "critical")
        _ = try await server.desk.advanceClock(body: .json(.init(days: 30))).ok
        #expect(try await lifecycle(server, "cus_olivia").state.rawValue == "billing_retry", "Apple retries for 60 days")
        let last = try await server.desk.advanceClock(body: .json(.init(days: 31))).ok.body.json
        #expect(last.transitions.first { $0.customerId == "cus_olivia" }?.steps == ["billing retry ended; expired"])
        let expired = try await lifecycle(server, "cus_olivia")
        #expect(expired.state.rawValue == "expired" && expired.summary == "Expired (payment failed)" && expired.winBackEligible)
    }

    @Test func simulatorsGoThroughTheWebhook() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        func simulate(_ event: Components.Schemas.SimulateAppStoreRequest.EventPayload, _ otid: String = "2000000810000001", grace: Int? = nil) async throws -> String {
            try await server.desk.simulateAppStoreEvent(body: .json(.init(originalTransactionId: otid, event: event, graceDays: grace))).ok.body.json.status
        }
        #expect(try await simulate(.renewalFailedGrace, grace: 3) == "applied")
        let grace = try await lifecycle(server, "cus_chloe")
        #expect(grace.state.rawValue == "grace_period" && grace.daysLeft == 3 && grace.warning.rawValue == "critical")
        #expect(try await simulate(.renew) == "applied")
        #expect(try await lifecycle(server, "cus_chloe").state.rawValue == "active")
        #expect(try await simulate(.renewalFailed) == "applied")
        #expect(try await lifecycle(server, "cus_chloe").state.rawValue == "billing_retry")
        #expect(try await simulate(.autoRenewOff, "2000000810000002") == "applied")
        #expect(try await lifecycle(server, "cus_ben").state.rawValue == "cancels_on")
        #expect(try await simulate(.autoRenewOn, "2000000810000002") == "applied")
        #expect(try await lifecycle(server, "cus_ben").state.rawValue == "active")
        #expect(try await simulate(.refund, "2000000810000002") == "applied")
        #expect(try await lifecycle(server, "cus_ben").state.rawValue == "revoked")
        let timeline = try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_ben")).ok.body.json.events
        #expect(timeline.prefix(3).map(\.action) == ["app_store.refund", "app_store.did_change_renewal_status", "app_store.did_change_renewal_status"])
        #expect(timeline.prefix(3).allSatisfy { $0.actor == "app_store" })
        expectFailure(try await server.desk.simulateAppStoreEvent(body: .json(.init(originalTransactionId: "nope", event: .refund))),
                      status: 404, code: "unknown_transaction")
        expectFailure(try await server.desk.simulateAppStoreEvent(body: .json(.init(originalTransactionId: "2000000810000001", event: .renewalFailedGrace, graceDays: 10))),
                      status: 422, code: "invalid_grace_days")
    }

    /// eligible → checkout → paid → accepted → Apple auto-renew off → completed → App Store expiry
    /// → trial ends → first discounted charge; never two charges for one period.
    @Test func aFullSwitchAndSaveRunOnTheClock() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let offer = try await server.app.getUserOffer(query: .init(userId: "cus_chloe")).ok.body.json
        #expect(offer.state == "eligible")
        let appleEnd = try #require(offer.offer.appleSubscription?.expiresAt)
        let checkout = try await server.app.createCheckout(body: .json(.init(
            productId: "premium_monthly", userId: "cus_chloe", storekitSubscriptionEnd: appleEnd, storekitOriginalTransactionId: "2000000810000001"
        ))).ok.body.json
        #expect(checkout.trialType == "migration" && checkout.amount == 0)
        _ = try await server.desk.simulateCheckout(body: .json(.init(transactionId: checkout.transactionId, outcome: .paid))).ok
        _ = try await server.app.recordMigrationConverted(body: .json(.init(userId: "cus_chloe", source: "web_checkout"))).ok
        #expect(try await server.app.getUserOffer(query: .init(userId: "cus_chloe")).ok.body.json.state == "accepted")
        _ = try await server.desk.simulateAppStoreEvent(body: .json(.init(originalTransactionId: "2000000810000001", event: .autoRenewOff))).ok
        #expect(try await server.app.getUserOffer(query: .init(userId: "cus_chloe")).ok.body.json.state == "completed")
        #expect(try await server.desk.getSwitchAndSaveAnalytics().ok.body.json.funnel.completed == 1)

        let passed = try await server.desk.advanceClock(body: .json(.init(days: 10))).ok.body.json
        let steps = passed.transitions.filter { $0.customerId == "cus_chloe" }.flatMap(\.steps)
        #expect(steps.contains("Apple period ended; expired") && steps.contains("trial ended; first charge paid"))
        #expect(!steps.contains("renewed by Apple"))
        #expect(try await lifecycle(server, "cus_chloe").state.rawValue == "expired")
        let web = try await lifecycle(server, "cus_chloe", source: .webCheckout)
        #expect(web.state.rawValue == "active" && web.hasAccess)
        // Charges: none before Apple's period ended, then one discounted charge from that moment.
        let charges = try await server.withStore { store in
            try await store.exclusive { db in
                try await db.select().columns("amount_micros", "period_start").from("charges").orderBy("at").all()
                    .filter { (try? $0.decode(column: "period_start", as: Int64.self)) ?? 0 >= Int64(appleEnd.timeIntervalSince1970) - 1 }
                    .map { try $0.decode(column: "amount_micros", as: Int64.self) }
            }
        }
        #expect(charges.filter { $0 == 6_390_000 }.count == 1, "one discounted charge for the first web period")
        let chloeCharges = try await server.withStore { store in
            try await store.exclusive { db in
                try await db.select().column("period_start").from("charges").where("subscription_id", .like, "sub_web_%").all()
                    .map { try $0.decode(column: "period_start", as: Int64.self) }
            }
        }
        #expect(chloeCharges == [Int64(appleEnd.timeIntervalSince1970)], "billing starts exactly when Apple's paid period ends")
    }
}
