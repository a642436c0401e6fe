import Foundation
import SQLKit
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("Checkout and migration trial")
struct CheckoutTests {
    func charges(_ server: TestServer, _ subscription: String) async throws -> [Int64] {
        try await server.withStore { store in
            try await store.exclusive { db in
                try await db.select().column("amount_micros").from("charges").where("subscription_id", .equal, subscription)
                    .orderBy("at").all().map { try $0.decode(column: "amount_micros", as: Int64.self) }
            }
        }
    }

    @Test func aSwitchBridgesTheAppStorePeriodAndChargesOnceItEnds() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let appleEnd = TestServer.start.addingTimeInterval(9 * 86_400)
        let checkout = try await server.app.createCheckout(body: .json(.init(
            productId: "premium_monthly", userId: "cus_chloe", storekitSubscriptionEnd: appleEnd,
            storekitOriginalTransactionId: "2000000810000001", checkoutMode: .native, platform: "ios"
        ))).ok.body.json
        #expect(checkout.amount == 0 && checkout.originalAmount == 799 && checkout.pendingAmount == 639, "$7.99 less 20%")
        #expect(checkout.trialType == "migration" && checkout.trialEnd == Int(appleEnd.timeIntervalSince1970))
        #expect(checkout.subscriptionInterval == "month" && checkout.currency == "USD")
        let page = try await server.raw(.GET, URL(string: checkout.checkoutUrl)!.path, key: nil)
        #expect(page.status == 200 && page.body.contains("Nothing to pay today"))
        #expect(try await server.app.getTransaction(path: .init(transactionId: checkout.transactionId)).ok.body.json.status.rawValue == "pending")

        let paid = try await server.desk.simulateCheckout(body: .json(.init(transactionId: checkout.transactionId, outcome: .paid))).ok.body.json
        #expect(paid.status == .completed && paid.expiresAt == appleEnd)
        #expect(try await server.app.getUserOffer(query: .init(userId: "cus_chloe")).ok.body.json.state == "accepted", "paid on the web; Apple still renews")
        let reported = try await server.app.updateTransactionStoreKitStatus(path: .init(transactionId: checkout.transactionId), body: .json(.init(storekitStatus: 2)))
        #expect(try reported.ok.body.json.storekitStatus == 2)

        let web = try #require(try await server.app.getEntitlements(query: .init(userId: "cus_chloe")).ok.body.json.entitlements.first { $0.source.rawValue == "web_checkout" })
        #expect(web.status == .active && web.isTrial && web.trialEndsAt == appleEnd && web.isActive, "a trial is active with is_trial on the wire")
        #expect(try await charges(server, web.id).isEmpty, "nothing charged while Apple's period runs")
        // Apple still renews (the customer has not turned it off): Apple bills, the web waits.
        let renewed = try await server.desk.advanceClock(body: .json(.init(days: 10))).ok.body.json
        #expect(try await charges(server, web.id).isEmpty, "never billed twice")
        #expect(renewed.transitions.first { $0.subscriptionId == web.id }?.steps.first?.contains("the migration trial follows it") == true)
        #expect(try await server.app.getUserOffer(query: .init(userId: "cus_chloe")).ok.body.json.state == "accepted", "mid-switch")
        // The customer turns Apple off: the web bills once Apple's (renewed) period ends, then monthly.
        _ = try await server.desk.simulateAppStoreEvent(body: .json(.init(originalTransactionId: "2000000810000001", event: .autoRenewOff))).ok
        _ = try await server.desk.advanceClock(body: .json(.init(days: 30))).ok
        #expect(try await charges(server, web.id) == [6_390_000], "one discounted charge when the App Store period ends")
        _ = try await server.desk.advanceClock(body: .json(.init(days: 31))).ok
        #expect(try await charges(server, web.id) == [6_390_000, 6_390_000], "the discount is forever")
    }

    @Test func underFortyEightHoursStartsAtTheBoundaryWithoutATrial() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let end = TestServer.start.addingTimeInterval(30 * 3_600)
        let checkout = try await server.app.createCheckout(body: .json(.init(productId: "premium_monthly", userId: "cus_chloe", storekitSubscriptionEnd: end))).ok.body.json
        #expect(checkout.trialType == nil && checkout.amount == 0 && checkout.pendingAmount == 639)
        #expect(checkout.trialEnd == Int(end.timeIntervalSince1970))
        _ = try await server.desk.simulateCheckout(body: .json(.init(transactionId: checkout.transactionId, outcome: .paid))).ok
        let web = try #require(try await server.app.getEntitlements(query: .init(userId: "cus_chloe")).ok.body.json.entitlements.first { $0.source.rawValue == "web_checkout" })
        #expect(web.status == .active && web.expiresAt == end && !web.isTrial)
        _ = try await server.desk.advanceClock(body: .json(.init(days: 2))).ok
        #expect(try await charges(server, web.id) == [6_390_000])
    }

    @Test func aPlainCheckoutIsPaidNowAndFailuresAreRecorded() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let plain = try await server.app.createCheckout(body: .json(.init(productId: "basic_monthly", userId: "cus_ivan"))).ok.body.json
        #expect(plain.amount == 399 && plain.trialType == nil && plain.pendingAmount == 0)
        let failed = try await server.app.createCheckout(body: .json(.init(productId: "premium_yearly", userId: "cus_ivan"))).ok.body.json
        #expect(try await server.desk.simulateCheckout(body: .json(.init(transactionId: failed.transactionId, outcome: .failed))).ok.body.json.status.rawValue == "failed")
        _ = try await server.desk.simulateCheckout(body: .json(.init(transactionId: plain.transactionId, outcome: .paid))).ok
        let ivan = try await server.app.getEntitlements(query: .init(userId: "cus_ivan")).ok.body.json.entitlements
        #expect(ivan.contains { $0.productId == "basic_monthly" && $0.source.rawValue == "web_checkout" && $0.isActive })
        #expect(!ivan.contains { $0.productId == "premium_yearly" })
        expectFailure(try await server.desk.simulateCheckout(body: .json(.init(transactionId: plain.transactionId, outcome: .paid))),
                      status: 409, code: "transaction_not_pending")
    }

    @Test func checkoutErrors() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        expectFailure(try await server.app.createCheckout(body: .json(.init(productId: "gold", userId: "cus_ava"))), status: 404, code: "unknown_product")
        // Ava pays for Premium Monthly on the web already: one web subscription per product.
        expectFailure(try await server.app.createCheckout(body: .json(.init(productId: "premium_monthly", userId: "cus_ava"))), status: 409, code: "already_subscribed")
        expectFailure(try await server.app.createCheckout(body: .json(.init(productId: "premium_monthly", userId: "cus_chloe", storekitSubscriptionEnd: TestServer.start.addingTimeInterval(-60)))),
                      status: 422, code: "storekit_period_over")
        expectFailure(try await server.app.getTransaction(path: .init(transactionId: "txn_nope")), status: 404, code: "unknown_transaction")
        let checkout = try await server.app.createCheckout(body: .json(.init(productId: "premium_monthly", userId: "cus_chloe"))).ok.body.json
        expectFailure(try await server.app.updateTransactionStoreKitStatus(path: .init(transactionId: checkout.transactionId), body: .json(.init(storekitStatus: 6))),
                      status: 400, code: "out_of_range")
        expectFailure(try await server.app.simulateCheckout(body: .json(.init(transactionId: checkout.transactionId, outcome: .paid))),
                      status: 403, code: "secret_key_required")
        server.clock.advance(by: 25 * 3_600)
        expectFailure(try await server.desk.simulateCheckout(body: .json(.init(transactionId: checkout.transactionId, outcome: .paid))),
                      status: 410, code: "checkout_expired")
        #expect(try await server.raw(.GET, "/checkout/txn_nope", key: nil).status == 404)
    }

    @Test func aConcurrentCreationForTheSameUserAndProductIs409WithRetryAfter() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        // Hold the customer's change lock, so the first creation stays in flight while the others
        // arrive (on PostgreSQL `exclusive` holds nothing, and neither does a transaction alone on
        // its key in its instance, which runs without the advisory lock: the first could finish
        // before the last arrived, and that one was then a creation of its own, seen in CI; a
        // queued transaction always takes the lock).
        let (entered, enteredSignal) = AsyncStream<Void>.makeStream()
        let (release, releaseSignal) = AsyncStream<Void>.makeStream()
        let holder = Task {
            try await server.running.store.queuedTransaction(key: "customer:cus_chloe") { _ in
                enteredSignal.yield()
                for await _ in release { break }
            }
        }
        for await _ in entered { break }
        let client = server.app
        let outputs = await withTaskGroup(of: Operations.CreateCheckout.Output?.self) { group in
            for _ in 0..<5 {
                group.addTask { try? await client.createCheckout(body: .json(.init(productId: "premium_monthly", userId: "cus_chloe"))) }
            }
            var refused: [Operations.CreateCheckout.Output?] = []
            for await output in group {
                refused.append(output)
                if refused.count == 4 { releaseSignal.yield() }
            }
            return refused
        }
        releaseSignal.finish()
        try await holder.value
        let conflicts = outputs.compactMap { $0.flatMap(failure) }
        #expect(conflicts.count == 4)
        #expect(conflicts.allSatisfy { $0.status == 409 && $0.body.code == "checkout_in_progress" && $0.body.retryAfter == 1 })
        #expect(outputs.filter { (try? $0?.ok) != nil }.count == 1)
    }
}
