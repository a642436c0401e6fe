import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SQLKit
import Testing
import TestSupport

@testable import SaveDeskServer

/// Two `savedesk serve` processes on one PostgreSQL database (runs when the run has a cluster,
/// as `make test` does): what must happen once happens once whichever instance is asked, the
/// test clock is one clock, and a killed instance loses nothing it acknowledged.
@Suite("Two instances on one PostgreSQL database", .serialized, .enabled(if: TestDatabase.isPostgres))
struct MultiInstanceTests {
    struct Pair {
        var directory: URL
        var first: ServeProcessTests.Launched
        var second: ServeProcessTests.Launched
        var ports: [Int] { [first.port, second.port] }

        func stop() async {
            for server in [first, second] where server.process.isRunning {
                server.process.signal(SIGTERM)
                _ = await server.process.wait(timeout: .seconds(10))
            }
        }

        /// Rows of the shared database matching `condition`.
        func count(_ table: String, where condition: String) async throws -> Int {
            try await TestServer.openStore(TestDatabase.location(in: directory, file: "db.sqlite")) { db in
                try await db.raw("SELECT count(*) AS n FROM \(unsafeRaw: table) WHERE \(unsafeRaw: condition)").first()?
                    .decode(column: "n", as: Int.self) ?? -1
            }
        }
    }

    /// Two instances on one database and one data directory (the seed applied by the first).
    static func pair() async throws -> Pair {
        let directory = try CrashTests.directory()
        let first = try await ServeProcessTests.launch(directory, arguments: ["--test-clock"])
        let second = try await ServeProcessTests.launch(directory, arguments: ["--test-clock"])
        return Pair(directory: directory, first: first, second: second)
    }

    static func call(
        _ port: Int, _ path: String, _ body: String? = nil, method: HTTPMethod = .POST, key: String = TestServer.appKey,
        idempotencyKey: String? = nil
    ) async throws -> (status: Int, body: String) {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = method
        request.headers.add(name: "X-ZeroSettle-Key", value: key)
        if let idempotencyKey { request.headers.add(name: "Idempotency-Key", value: idempotencyKey) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(20))
        return (Int(response.status.code), String(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    /// `n` calls at once, alternating between the two instances.
    static func concurrently(
        _ n: Int, over pair: Pair, _ call: @escaping @Sendable (_ index: Int, _ port: Int) async throws -> (status: Int, body: String)
    ) async throws -> [(status: Int, body: String)] {
        let ports = pair.ports
        return try await withThrowingTaskGroup(of: (status: Int, body: String).self) { group in
            for index in 0..<n { group.addTask { try await call(index, ports[index % 2]) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    static let offer = #"{"user_id":"cus_ava","product_id":"premium_monthly"}"#

    @Test func fiftyDuplicateAcceptsOverBothMakeOneDiscountAndOneAnswer() async throws {
        let pair = try await Self.pair()
        defer { Task { await pair.stop() } }
        let results = try await Self.concurrently(50, over: pair) { _, port in
            try await Self.call(port, "/v1/iap/cancel-flow/accept-offer", Self.offer, idempotencyKey: "accept-ava-1")
        }
        #expect(results.allSatisfy { $0.status == 200 }, "\(results.filter { $0.status != 200 }.prefix(3))")
        #expect(Set(results.map(\.body)).count == 1, "identical answers")
        #expect(try await pair.count("discounts", where: "subscription_id = 'sub_ava_1'") == 1)
        #expect(try await pair.count("audit_events", where: "customer_id = 'cus_ava' AND action = 'subscription.accept_offer'") == 1)
    }

    @Test func fiftyDifferentKeysOverBothStillMakeOneDiscount() async throws {
        let pair = try await Self.pair()
        defer { Task { await pair.stop() } }
        let results = try await Self.concurrently(50, over: pair) { index, port in
            try await Self.call(port, "/v1/iap/cancel-flow/accept-offer", Self.offer, idempotencyKey: "accept-\(index)")
        }
        #expect(results.allSatisfy { $0.status == 200 }, "\(results.filter { $0.status != 200 }.prefix(3))")
        #expect(try await pair.count("discounts", where: "subscription_id = 'sub_ava_1'") == 1)
    }

    @Test func twentyConcurrentPausesOverBothMakeOnePause() async throws {
        let pair = try await Self.pair()
        defer { Task { await pair.stop() } }
        let results = try await Self.concurrently(20, over: pair) { _, port in
            try await Self.call(port, "/v1/iap/subscriptions/pause", #"{"user_id":"cus_ava","product_id":"premium_monthly","pause_duration_days":10}"#)
        }
        #expect(results.allSatisfy { $0.status == 200 }, "\(results.filter { $0.status != 200 }.prefix(3))")
        #expect(Set(results.map(\.body)).count == 1, "every answer has the one pause's resumes_at")
        #expect(try await pair.count("audit_events", where: "customer_id = 'cus_ava' AND action = 'subscription.pause'") == 1)
        #expect(try await pair.count("subscriptions", where: "id = 'sub_ava_1' AND status = 'paused'") == 1)
    }

    @Test func fortyResponsesOverBothAreAllInTheRollups() async throws {
        let pair = try await Self.pair()
        defer { Task { await pair.stop() } }
        let customers = ["cus_ava", "cus_ben", "cus_chloe", "cus_quinn"]
        let results = try await Self.concurrently(40, over: pair) { index, port in
            let body = """
                {"user_id":"\(customers[index % customers.count])","product_id":"premium_monthly","outcome":"\(index % 2 == 0 ? "cancelled" : "retained")",
                "offer_shown":true,"offer_accepted":\(index % 2 == 1),"pause_shown":false,"pause_accepted":false,"last_step_seen":2,
                "answers":[{"question_id":1,"selected_option_id":11}]}
                """
            return try await Self.call(port, "/v1/iap/cancel-flow/respond", body)
        }
        #expect(results.allSatisfy { $0.status == 200 }, "\(results.filter { $0.status != 200 }.prefix(3))")
        // Every response is in the rollups the funnel reads, whichever instance recorded it.
        let report = try await Self.call(pair.first.port, "/v1/desk/analytics/cancel-flow", method: .GET, key: TestServer.operatorKey)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.body.utf8)) as? [String: Any])
        let outcomes = try #require(json["outcomes"] as? [String: Any])
        #expect(outcomes["cancelled"] as? Int == 20 && outcomes["retained"] as? Int == 20)
        // The instances' fold jobs (one at a time) bring every response into the rollups, once.
        var folded = false
        for _ in 0..<150 where !folded {
            folded = try await pair.count("cancel_flow_unrolled", where: "1 = 1") == 0
            if !folded { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(folded)
        #expect(try await pair.count("cancel_flow_daily_counts", where: "actor = '*' AND dimension = 'option' AND value = 11 AND n = 40") == 1)
    }

    @Test func oneNotificationPostedToBothIsAppliedOnce() async throws {
        let pair = try await Self.pair()
        defer { Task { await pair.stop() } }
        let ca = try LocalStoreKitCA.loadOrCreate(in: pair.directory)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let transaction = AppStoreTransaction(
            transactionId: "tx_multi_1", originalTransactionId: "2000000810000001", bundleId: "com.savedesk.reader",
            productId: "premium_monthly", purchaseDate: now, originalPurchaseDate: now - 200 * 86_400_000,
            expiresDate: now + 30 * 86_400_000, environment: "Sandbox", type: "Auto-Renewable Subscription",
            revocationDate: nil, signedDate: now
        )
        let notification = AppStoreNotification(
            notificationType: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", notificationUUID: UUID().uuidString,
            data: .init(bundleId: "com.savedesk.reader", environment: "Sandbox", signedTransactionInfo: try await ca.sign(transaction),
                        signedRenewalInfo: nil, status: nil),
            signedDate: now
        )
        let body = #"{"signedPayload":"\#(try await ca.sign(notification))"}"#
        let results = try await Self.concurrently(6, over: pair) { _, port in
            try await Self.call(port, "/v1/webhooks/appstore-notifications", body)
        }
        #expect(results.allSatisfy { $0.status == 200 }, "\(results.filter { $0.status != 200 }.prefix(3))")
        #expect(results.filter { $0.body.contains("\"applied\"") }.count == 1, "\(results.map(\.body))")
        #expect(results.filter { $0.body.contains("\"duplicate\"") }.count == 5)
        #expect(try await pair.count("appstore_notifications", where: "1 = 1") == 1)
    }

    @Test func theTestClockMovedOnOneIsSeenByTheOther() async throws {
        let pair = try await Self.pair()
        defer { Task { await pair.stop() } }
        let advanced = try await Self.call(pair.first.port, "/v1/desk/clock/advance", #"{"days":5}"#, key: TestServer.operatorKey)
        #expect(advanced.status == 200)
        // The second instance pauses at the new time: 5 + 10 days from now.
        let paused = try await Self.call(
            pair.second.port, "/v1/iap/subscriptions/pause", #"{"user_id":"cus_ava","product_id":"premium_monthly","pause_duration_days":10}"#
        )
        #expect(paused.status == 200)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(paused.body.utf8)) as? [String: Any])
        let text = try #require(object["resumes_at"] as? String)
        let resumes = try #require(ISO8601DateFormatter().date(from: text))
        let days = resumes.timeIntervalSinceNow / 86_400
        #expect(days > 14.9 && days < 15.1, "resumes in \(days) days")
    }

    @Test func everyAcknowledgedWriteSurvivesSIGKILLOfOneInstance() async throws {
        let pair = try await Self.pair()
        defer { Task { await pair.stop() } }
        let acknowledged = Tally<[String]>([])
        let ports = pair.ports, victim = pair.first.process
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<16 {
                group.addTask {
                    await CrashTests.writeLoad(worker: worker, port: ports[worker % 2], into: acknowledged) {
                        worker % 2 == 0 && !victim.isRunning
                    }
                }
            }
            while acknowledged.withLock({ $0.count }) < 400, victim.isRunning { try? await Task.sleep(for: .milliseconds(20)) }
            kill(victim.pid, SIGKILL)
            // The survivor keeps answering.
            let before = acknowledged.withLock { $0.count }
            let deadline = ContinuousClock.now + .seconds(30)
            while acknowledged.withLock({ $0.count }) < before + 100, ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            group.cancelAll()
        }
        _ = try await ServeProcessTests.waitForExit(victim)
        let acked = acknowledged.withLock { $0 }
        let counts = try await CrashTests.storedMarks(TestDatabase.location(in: pair.directory, file: "db.sqlite"))
        let missing = acked.filter { counts[$0] == nil }
        #expect(acked.count >= 500)
        #expect(missing.isEmpty, "\(missing.count) acknowledged writes lost of \(acked.count)")
        #expect(counts.values.allSatisfy { $0 == 1 }, "each once")
    }
}
