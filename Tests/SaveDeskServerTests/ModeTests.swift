import Foundation
import SQLKit
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

/// Test and live data never mix: every customer, subscription and checkout carries its mode, test
/// keys see and change only test data, live keys only live data, and the test tooling (simulators,
/// the test clock, a local StoreKit CA) never runs next to live keys.
@Suite("Test and live data")
struct ModeTests {
    static let seed = """
        [[customers]]
        id = "cus_test"
        name = "Tess Test"
        email = "tess@example.com"
        [[customers.subscriptions]]
        product = "premium_monthly"
        source = "web"
        status = "active"
        started_days_ago = 40
        period_ends_in_days = 1

        [[customers]]
        id = "cus_live"
        name = "Liv Live"
        email = "liv@example.com"
        livemode = true
        [[customers.subscriptions]]
        product = "premium_monthly"
        source = "web"
        status = "active"
        started_days_ago = 40
        period_ends_in_days = 1
        [[customers.subscriptions]]
        product = "premium_monthly"
        source = "app_store"
        status = "active"
        started_days_ago = 100
        period_ends_in_days = 5
        original_transaction_id = "2000000900000001"
        """

    static func seedFile() throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mixed-seed-\(UUID()).toml")
        try seed.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    @Test func eachKeySeesAndChangesOnlyItsOwnMode() async throws {
        // A live server: test and live keys, a trusted root (no local CA), no test clock.
        let ca = try LocalStoreKitCA.make(name: "Trusted")
        let rootFile = FileManager.default.temporaryDirectory.appendingPathComponent("root-\(UUID()).pem")
        try ca.root.serializeAsPEM().pemString.write(to: rootFile, atomically: true, encoding: .utf8)
        var config = try TestServer.configWithLiveKeys()
        config.appStore?.trustedRoots = [rootFile.path]
        let server = try await TestServer.start(config: config, testClock: false, seedFile: try Self.seedFile())
        defer { Task { await server.stop() } }
        let liveDesk = server.client(key: TestServer.liveOperatorKey), liveApp = server.client(key: TestServer.liveAppKey)

        expectFailure(try await server.desk.getCustomer(path: .init(customerId: "cus_live")), status: 404, code: "unknown_user")
        // An app of the other mode cannot use the id at all (ids are one space across modes).
        expectFailure(try await server.app.getEntitlements(query: .init(userId: "cus_live")), status: 409, code: "user_id_in_other_mode")
        expectFailure(try await liveDesk.getCustomer(path: .init(customerId: "cus_test")), status: 404, code: "unknown_user")
        #expect(try await server.desk.searchCustomers().ok.body.json.customers.map(\.id) == ["cus_test"])
        #expect(try await liveDesk.searchCustomers().ok.body.json.customers.map(\.id) == ["cus_live"])

        // A checkout a live app created: a test key can neither see it nor complete it.
        let checkout = try await liveApp.createCheckout(body: .json(.init(productId: "premium_yearly", userId: "cus_live"))).ok.body.json
        expectFailure(try await server.desk.simulateCheckout(body: .json(.init(transactionId: checkout.transactionId, outcome: .paid))),
                      status: 404, code: "unknown_transaction")
        expectFailure(try await server.app.getTransaction(path: .init(transactionId: checkout.transactionId)), status: 404, code: "unknown_transaction")
        expectFailure(try await liveDesk.simulateCheckout(body: .json(.init(transactionId: checkout.transactionId, outcome: .paid))),
                      status: 403, code: "test_mode_only")
        #expect(try await liveApp.getTransaction(path: .init(transactionId: checkout.transactionId)).ok.body.json.status == .pending)

        // Sandbox-signed data never reaches live customers.
        let now = Int64(TestServer.start.timeIntervalSince1970 * 1000)
        let sandbox = AppStoreTransaction(
            transactionId: "tx_1", originalTransactionId: "2000000900000001", bundleId: "com.savedesk.reader",
            productId: "com.savedesk.reader.premium.monthly", purchaseDate: now, originalPurchaseDate: now, expiresDate: now + 86_400_000 * 30,
            environment: "Sandbox", type: nil, revocationDate: now, signedDate: SignedDates.next()
        )
        expectFailure(try await liveApp.syncStoreKitTransaction(body: .json(.init(jwsRepresentation: try await ca.sign(sandbox), userId: "cus_live"))),
                      status: 422, code: "jws_wrong_mode")
        let refund = try await ca.sign(AppStoreNotification(
            notificationType: "REFUND", subtype: nil, notificationUUID: UUID().uuidString,
            data: .init(bundleId: "com.savedesk.reader", environment: "Sandbox", signedTransactionInfo: try await ca.sign(sandbox),
                        signedRenewalInfo: nil, status: nil),
            signedDate: SignedDates.next()
        ))
        #expect(try await server.client(key: nil).receiveAppStoreNotification(body: .json(.init(signedPayload: refund))).ok.body.json.status == "unmatched")
        #expect(try await liveDesk.getCustomer(path: .init(customerId: "cus_live")).ok.body.json.entitlements.allSatisfy { $0.entitlement.isActive })

        // Analytics count each mode apart.
        _ = try await server.app.submitCancelFlowResponse(body: .json(.init(
            userId: "cus_test", productId: "premium_monthly", outcome: .cancelled, offerShown: false, offerAccepted: false,
            pauseShown: false, pauseAccepted: false, lastStepSeen: 1, answers: [.init(questionId: 1, selectedOptionId: 13)]
        ))).ok
        #expect(try await server.desk.getCancelFlowAnalytics().ok.body.json.outcomes.total == 1)
        #expect(try await liveDesk.getCancelFlowAnalytics().ok.body.json.outcomes.total == 0)
    }

    @Test func theTestClockMovesTestDataOnly() async throws {
        let server = try await TestServer.start(seedFile: try Self.seedFile())
        defer { Task { await server.stop() } }
        let before = try await server.withStore { store in
            try await store.read { data in try await data.ledger.subscriptions(customerId: "cus_live") }
        }
        let advanced = try await server.desk.advanceClock(body: .json(.init(days: 10))).ok.body.json
        #expect(advanced.transitions.map(\.customerId) == ["cus_test"])
        let after = try await server.withStore { store in
            try await store.read { data in try await data.ledger.subscriptions(customerId: "cus_live") }
        }
        #expect(after == before, "live subscriptions did not move")
        let charges = try await server.withStore { store in
            try await store.exclusive { db in
                try await db.select().column("subscription_id").from("charges").all().map { try $0.decode(column: "subscription_id", as: String.self) }
            }
        }
        #expect(charges == ["sub_test_1"])
    }

    @Test func testToolingIsRefusedNextToLiveKeys() async throws {
        var text = try String(contentsOfFile: try #require(DemoSeed.demoConfigPath), encoding: .utf8)
        text += "\n[[api_keys]]\nkey = \"sk_live_savedesk_ops_000001\"\noperator = \"Live Ops\"\n"
        #expect(throws: InvalidConfig.self) { try ConfigReader.parse(text) }
        do {
            _ = try ConfigReader.parse(text)
        } catch {
            #expect(error.issues.map(\.description) == ["app_store.local_ca: a local StoreKit CA is for test servers; this config has live keys"])
        }
        let config = try TestServer.configWithLiveKeys()
        #expect(config.deploymentIssues(testClock: true).map(\.path) == ["--test-clock"])
        await #expect(throws: InvalidConfig.self) {
            _ = try await TestServer.start(config: config, testClock: true)
        }
    }
}
