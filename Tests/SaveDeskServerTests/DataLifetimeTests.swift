import Foundation
import SQLKit
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

/// Data with a lifetime: idempotency records answer for 24 hours, expired sessions and abandoned
/// checkouts are purged by a job in the server's lifecycle, the audit trail records only real
/// changes, and the test clock's offset lives in the database.
@Suite("Data with a lifetime")
struct DataLifetimeTests {
    static let response = Components.Schemas.CancelFlowResponse(
        userId: "cus_ava", productId: "premium_monthly", outcome: .cancelled, offerShown: false, offerAccepted: false,
        pauseShown: false, pauseAccepted: false, lastStepSeen: 1, answers: [.init(questionId: 1, selectedOptionId: 13)]
    )

    func count(_ server: TestServer, _ sql: String) async throws -> Int {
        try await server.withStore { store in
            try await store.exclusive { db in try await db.raw(SQLQueryString(sql)).first()?.decode(column: "n", as: Int.self) ?? -1 }
        }
    }

    @Test func anIdempotencyKeyAnswersForTwentyFourHours() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        for _ in 0..<2 {
            _ = try await server.app.submitCancelFlowResponse(headers: .init(idempotencyKey: "k-1"), body: .json(Self.response)).ok
        }
        #expect(try await count(server, "SELECT count(*) AS n FROM cancel_flow_responses") == 1)
        server.clock.advance(by: 23 * 3_600)
        _ = try await server.app.submitCancelFlowResponse(headers: .init(idempotencyKey: "k-1"), body: .json(Self.response)).ok
        #expect(try await count(server, "SELECT count(*) AS n FROM cancel_flow_responses") == 1, "still a replay after 23 h")
        server.clock.advance(by: 2 * 3_600)
        _ = try await server.app.submitCancelFlowResponse(headers: .init(idempotencyKey: "k-1"), body: .json(Self.response)).ok
        #expect(try await count(server, "SELECT count(*) AS n FROM cancel_flow_responses") == 2, "a new request after 25 h")
    }

    @Test func theSameKeyWithAnotherBodyIs422BeforeAnyOtherCheck() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        _ = try await server.app.pauseSubscription(
            headers: .init(idempotencyKey: "p-1"), body: .json(.init(userId: "cus_ava", productId: "premium_monthly", pauseDurationDays: 10))
        ).ok
        for body in [#"{"user_id":"cus_ava"}"#, #"{"user_id":"cus_ava","product_id":"premium_monthly","pause_duration_days":99999}"#, "not json"] {
            let reply = try await server.raw(.POST, "/v1/iap/subscriptions/pause", body: body, headers: ["Idempotency-Key": "p-1"])
            #expect(reply.status == 422 && reply.body.contains("idempotency_key_reused"), "\(body): \(reply.body)")
        }
        // Key order and spacing do not make a different request.
        let reordered = try await server.raw(.POST, "/v1/iap/subscriptions/pause",
                                             body: #"{ "pause_duration_days": 10, "product_id": "premium_monthly", "user_id": "cus_ava" }"#,
                                             headers: ["Idempotency-Key": "p-1"])
        #expect(reordered.status == 200)
    }

    @Test func aRepeatThatChangesNothingLeavesNoAuditRow() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let first = try await server.app.acceptSaveOffer(body: .json(.init(userId: "cus_ava", productId: "premium_monthly"))).ok.body.json
        let second = try await server.app.acceptSaveOffer(body: .json(.init(userId: "cus_ava", productId: "premium_monthly"))).ok.body.json
        #expect(first == second)
        let cancel = Components.Schemas.CancelRequest(userId: "cus_ava", productId: "premium_monthly")
        let c1 = try await server.app.cancelSubscription(body: .json(cancel)).ok.body.json
        let c2 = try await server.app.cancelSubscription(body: .json(cancel)).ok.body.json
        #expect(c1 == c2)
        let actions = try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_ava")).ok.body.json.events.map(\.action)
        #expect(actions.filter { $0 == "subscription.accept_offer" }.count == 1)
        #expect(actions.filter { $0 == "subscription.cancel_at_period_end" }.count == 1)
    }

    @Test func theClockAndTheSimulatorsHonourIdempotencyKeys() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let a = try await server.desk.advanceClock(headers: .init(idempotencyKey: "adv-1"), body: .json(.init(days: 2))).ok.body.json
        let b = try await server.desk.advanceClock(headers: .init(idempotencyKey: "adv-1"), body: .json(.init(days: 2))).ok.body.json
        #expect(a == b)
        #expect(try await server.desk.getDeskSession().ok.body.json.serverTime == TestServer.start.addingTimeInterval(2 * 86_400))
        let off = Components.Schemas.SimulateAppStoreRequest(originalTransactionId: "2000000810000001", event: .autoRenewOff)
        let s1 = try await server.desk.simulateAppStoreEvent(headers: .init(idempotencyKey: "sim-1"), body: .json(off)).ok.body.json
        let s2 = try await server.desk.simulateAppStoreEvent(headers: .init(idempotencyKey: "sim-1"), body: .json(off)).ok.body.json
        #expect(s1 == s2 && s1.status == "applied")
        #expect(try await count(server, "SELECT count(*) AS n FROM appstore_notifications") == 1)
        let purchase = Components.Schemas.SimulateStoreKitPurchaseRequest(productId: "premium_monthly")
        let p1 = try await server.desk.simulateStoreKitPurchase(headers: .init(idempotencyKey: "buy-1"), body: .json(purchase)).ok.body.json
        let p2 = try await server.desk.simulateStoreKitPurchase(headers: .init(idempotencyKey: "buy-1"), body: .json(purchase)).ok.body.json
        #expect(p1 == p2)
    }

    @Test func theTestClocksOffsetSurvivesARestart() async throws {
        let server = try await TestServer.start()
        _ = try await server.desk.advanceClock(body: .json(.init(days: 3))).ok
        await server.stop()
        let restarted = try await TestServer.start(directory: server.directory, clock: server.clock, seed: false)
        defer { Task { await restarted.stop() } }
        #expect(try await restarted.desk.getDeskSession().ok.body.json.serverTime == TestServer.start.addingTimeInterval(3 * 86_400))
    }

    @Test func expiredDataIsPurgedByTheServersOwnJob() async throws {
        let server = try await TestServer.start(purgeInterval: .milliseconds(100))
        defer { Task { await server.stop() } }
        _ = try await server.app.createCustomerPortalSession(headers: .init(idempotencyKey: "portal-1"), body: .json(.init(userId: "cus_ava"))).ok
        _ = try await server.app.createCheckout(body: .json(.init(productId: "premium_yearly", userId: "cus_ava"))).ok
        let auditRows = try await count(server, "SELECT count(*) AS n FROM audit_events")
        #expect(try await count(server, "SELECT count(*) AS n FROM idempotency_records") == 1)
        #expect(try await count(server, "SELECT count(*) AS n FROM portal_sessions") == 1)
        #expect(try await count(server, "SELECT count(*) AS n FROM checkout_transactions WHERE status = 'pending'") == 1)
        server.clock.advance(by: 25 * 3_600)
        for _ in 0..<100 {
            let left = try await count(server, "SELECT (SELECT count(*) FROM idempotency_records) + (SELECT count(*) FROM portal_sessions) + (SELECT count(*) FROM checkout_transactions) AS n")
            if left == 0 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try await count(server, "SELECT count(*) AS n FROM idempotency_records") == 0)
        #expect(try await count(server, "SELECT count(*) AS n FROM portal_sessions") == 0)
        #expect(try await count(server, "SELECT count(*) AS n FROM checkout_transactions") == 0)
        #expect(try await count(server, "SELECT count(*) AS n FROM audit_events") == auditRows, "the audit trail is kept")
    }

    /// Each background job runs once per mode, in that mode's scope: the test-mode purge removes
    /// what expired in test time (the test clock runs ahead) and never a live row, which the live
    /// pass removes at live time. (Before: one pass at the server's time for both modes, so test
    /// data outlived its test-time expiry.)
    @Test func aJobOfOneModeNeverTouchesTheOthersData() async throws {
        let server = try await TestServer.start(purgeInterval: .milliseconds(100))
        defer { Task { await server.stop() } }
        _ = try await server.app.createCustomerPortalSession(body: .json(.init(userId: "cus_ava"))).ok
        _ = try await server.app.createCheckout(body: .json(.init(productId: "premium_yearly", userId: "cus_ava"))).ok
        let start = Int64(TestServer.start.timeIntervalSince1970)
        try await server.withStore { store in
            try await store.exclusive { db in
                try await db.raw("""
                    INSERT INTO customers (id, name, email, created_at, livemode) VALUES ('cus_live_1', 'Live One', 'one@live.example', \(bind: start), \(bind: true))
                    """).run()
                try await db.raw("""
                    INSERT INTO checkout_transactions (id, customer_id, product_id, status, amount, original_amount, pending_amount, currency,
                        discount_percent, created_at, livemode)
                    VALUES ('txn_live_1', 'cus_live_1', 'premium_yearly', 'pending', 100, 100, 0, 'USD', 0, \(bind: start), \(bind: true))
                    """).run()
                try await db.raw("""
                    INSERT INTO portal_sessions (token, customer_id, expires_at, livemode) VALUES ('live-token', 'cus_live_1', \(bind: start + 3_600), \(bind: true))
                    """).run()
            }
        }
        func left(_ mode: Bool) async throws -> Int {
            try await count(server, "SELECT (SELECT count(*) FROM portal_sessions WHERE livemode = \(mode ? "(1 = 1)" : "(1 = 0)")) + (SELECT count(*) FROM checkout_transactions WHERE livemode = \(mode ? "(1 = 1)" : "(1 = 0)")) AS n")
        }
        #expect(try await left(false) == 2)
        #expect(try await left(true) == 2)
        // Test time moves two days: the test checkout is abandoned, the test portal link expired.
        _ = try await server.desk.advanceClock(body: .json(.init(days: 2))).ok
        for _ in 0..<100 where try await left(false) > 0 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try await left(false) == 0, "test data is purged at test time")
        #expect(try await left(true) == 2, "no live row is touched by the test-mode pass")
        // Live time moves a day: now the live rows are due, and the live pass removes them.
        server.clock.advance(by: 25 * 3_600)
        for _ in 0..<100 where try await left(true) > 0 { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try await left(true) == 0)
    }

    @Test func aJobsScopeSaysItsMode() {
        let test = RequestScope.job("purge", livemode: false), live = RequestScope.job("purge", livemode: true)
        #expect(!test.livemode && live.livemode && test.actor == "purge")
        #expect(test.requestId.hasPrefix("purge:test:") && live.requestId.hasPrefix("purge:live:"))
    }
}
