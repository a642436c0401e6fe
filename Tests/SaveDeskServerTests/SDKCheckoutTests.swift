import Foundation
import SQLKit
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

/// Checkout as the SDK drives it: the server bridges from its own verified App Store record, never
/// from a client's claim, and discounts only an eligible customer.
@Suite("SDK checkout on the server's facts")
struct SDKCheckoutTests {
    /// Chloé's App Store period ends in 9 days (the demo seed).
    static let appleEnd = TestServer.start.addingTimeInterval(9 * 86_400)

    func charges(_ server: TestServer, _ subscriptionId: String) async throws -> [(amount: Int64, at: Int64)] {
        try await server.withStore { store in
            try await store.exclusive { db in
                try await db.select().columns("amount_micros", "at").from("charges").where("subscription_id", .equal, subscriptionId)
                    .orderBy("at").all().map { (try $0.decode(column: "amount_micros", as: Int64.self), try $0.decode(column: "at", as: Int64.self)) }
            }
        }
    }

    @Test func theSDKsOrdinaryCheckoutBridgesExactlyTheAppStorePeriodAndChargesOnce() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        // As the SDK sends it: the original transaction id and no end date.
        let checkout = try await server.app.createCheckout(body: .json(.init(
            productId: "premium_monthly", userId: "cus_chloe", storekitOriginalTransactionId: "2000000810000001", platform: "ios"
        ))).ok.body.json
        #expect(checkout.amount == 0, "nothing now: Apple has been paid until its period ends")
        #expect(checkout.trialEnd == Int(Self.appleEnd.timeIntervalSince1970) && checkout.trialType == "migration")
        #expect(checkout.pendingAmount == 639, "$7.99 less the 20% Chloé is eligible for")
        _ = try await server.desk.simulateCheckout(body: .json(.init(transactionId: checkout.transactionId, outcome: .paid))).ok
        _ = try await server.desk.simulateAppStoreEvent(body: .json(.init(originalTransactionId: "2000000810000001", event: .autoRenewOff))).ok
        let advanced = try await server.desk.advanceClock(body: .json(.init(days: 10))).ok.body.json
        let chloe = advanced.transitions.filter { $0.customerId == "cus_chloe" }.flatMap(\.steps)
        #expect(chloe.contains("Apple period ended; expired") && !chloe.contains { $0.hasPrefix("renewed by Apple") }, "\(chloe)")
        let web = "sub_web_\(checkout.transactionId)"
        let made = try await charges(server, web)
        #expect(made.map(\.amount) == [6_390_000], "one charge")
        #expect(made.first?.at == Int64(Self.appleEnd.timeIntervalSince1970), "at the moment Apple's period ended")
    }

    @Test func aForgedEndDateBridgesOnlyTheRealRemainingDays() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let forged = TestServer.start.addingTimeInterval(2 * 365 * 86_400)
        let checkout = try await server.app.createCheckout(body: .json(.init(
            productId: "premium_monthly", userId: "cus_chloe", storekitSubscriptionEnd: forged, storekitOriginalTransactionId: "2000000810000001"
        ))).ok.body.json
        #expect(checkout.trialEnd == Int(Self.appleEnd.timeIntervalSince1970), "the server's record, not the claim")
        // An earlier claim than the record is taken as it is (never longer than the record).
        let earlier = TestServer.start.addingTimeInterval(5 * 86_400)
        let second = try await server.app.createCheckout(body: .json(.init(
            productId: "premium_monthly", userId: "cus_chloe", storekitSubscriptionEnd: earlier, storekitOriginalTransactionId: "2000000810000001"
        ))).ok.body.json
        #expect(second.trialEnd == Int(earlier.timeIntervalSince1970))
    }

    @Test func noVerifiedAppStoreSubscriptionMeansNoTrialAndNoDiscount() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        // A new user has no App Store subscription: a made-up transaction id bridges nothing.
        let ava = try await server.app.createCheckout(body: .json(.init(
            productId: "premium_monthly", userId: "cus_fresh", storekitSubscriptionEnd: TestServer.start.addingTimeInterval(30 * 86_400),
            storekitOriginalTransactionId: "2000000899999999"
        ))).ok.body.json
        #expect(ava.amount == 799 && ava.trialEnd == nil && ava.pendingAmount == 0)
        // Another customer's transaction id is not hers to bridge.
        let stolen = try await server.app.createCheckout(body: .json(.init(
            productId: "premium_yearly", userId: "cus_ava", storekitOriginalTransactionId: "2000000810000001"
        ))).ok.body.json
        #expect(stolen.trialEnd == nil && stolen.amount == 5999)
        // Ben's own App Store period is bridged, but he is outside the rollout: no discount.
        let ben = try await server.app.createCheckout(body: .json(.init(
            productId: "premium_monthly", userId: "cus_ben", storekitOriginalTransactionId: "2000000810000002"
        ))).ok.body.json
        #expect(ben.trialEnd != nil && ben.amount == 0 && ben.pendingAmount == 799)
    }

    @Test func finalizeIsIdempotentAndEndsWithTheCheckout() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let checkout = try await server.app.createCheckout(body: .json(.init(productId: "premium_yearly", userId: "cus_ava"))).ok.body.json
        #expect(checkout.deferredMode == true && checkout.clientSecret == nil)
        #expect(checkout.callbackUrl.contains("transaction_id=\(checkout.transactionId)") && checkout.publishableKey == "pk_test_savedesk_demo_payments")
        let first = try await server.app.finalizeCheckout(path: .init(transactionId: checkout.transactionId)).ok.body.json
        let second = try await server.app.finalizeCheckout(path: .init(transactionId: checkout.transactionId)).ok.body.json
        #expect(first == second && first.clientSecret.hasPrefix("pi_\(checkout.transactionId)_secret_"))
        let other = try await server.app.createCheckout(body: .json(.init(productId: "basic_monthly", userId: "cus_ava"))).ok.body.json
        server.clock.advance(by: 25 * 3_600)
        expectFailure(try await server.app.finalizeCheckout(path: .init(transactionId: other.transactionId)), status: 410, code: "checkout_expired")
        expectFailure(try await server.app.getCheckoutConfig(path: .init(transactionId: other.transactionId)), status: 410, code: "checkout_expired")
        expectFailure(try await server.app.finalizeCheckout(path: .init(transactionId: "txn_nope")), status: 404, code: "unknown_transaction")
        #expect(try await server.app.finalizeCheckout(path: .init(transactionId: checkout.transactionId)).ok.body.json == first, "finalized stays answered")
    }

    @Test func theDemoTipIsForTestKeysAndTheSDKsKeyFormatWorks() async throws {
        var config = try TestServer.configWithLiveKeys()
        config.apiKeys.append(try #require(APIKey(key: "zs_pk_live_savedesk_app_0001")))
        config.apiKeys.append(try #require(APIKey(key: "zs_pk_test_savedesk_app_0001")))
        let server = try await TestServer.start(config: config, testClock: false)
        defer { Task { await server.stop() } }
        let live = server.client(key: "zs_pk_live_savedesk_app_0001"), test = server.client(key: "zs_pk_test_savedesk_app_0001")
        expectFailure(try await live.getProducts(query: .init(demo: .migration)), status: 403, code: "test_mode_only")
        #expect(try await test.getProducts(query: .init(demo: .migration)).ok.body.json.config.offer?.rolloutPercent == 100)
        // A zs_pk_live key is a live app key: a test customer's id is not its to use.
        expectFailure(try await live.getEntitlements(query: .init(userId: "cus_ava")), status: 409, code: "user_id_in_other_mode")
        #expect(try await test.getEntitlements(query: .init(userId: "cus_ava")).ok.body.json.entitlements.count == 1)
        expectFailure(try await test.searchCustomers(), status: 403, code: "secret_key_required")
    }

    @Test func theCatalogsTipFollowsTheServersDecision() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let chloe = try await server.app.getProducts(query: .init(userId: "cus_chloe")).ok.body.json.config.offer
        #expect(chloe?.productId == "premium_monthly" && chloe?.freeTrialDays == 9)
        #expect(try await server.app.getProducts(query: .init(userId: "cus_ben")).ok.body.json.config.offer == nil, "outside the rollout")
        #expect(try await server.app.getProducts(query: .init(userId: "cus_ava")).ok.body.json.config.offer == nil, "already on the web")
    }

    /// A date out of its range in a body is a 400, not rolled over (the fuzzer's minute 99 was a
    /// 200 for one commit); a valid one in the same place is taken.
    @Test func anOutOfRangeDateInABodyIsRefused() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        func batch(_ end: String) async throws -> Int {
            try await server.raw(.POST, "/v1/iap/checkout-configs/batch", body: """
                {"customer_name": "Chloé", "products": [{"product_id": "premium_monthly", "user_id": "cus_chloe", "storekit_subscription_end": "\(end)"}]}
                """).status
        }
        #expect(try await batch("2024-01-01T12:99:00Z") == 400)
        #expect(try await batch("2024-02-30T12:00:00Z") == 400)
        #expect(try await batch("2024-01-01T12:00:00Z") == 200)
    }
}
