import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SQLKit
import Synchronization
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
        let response = try await HTTPClient.shared.execute(request, timeout: TimeAmount(answerPatience))
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

    /// A load balancer as the test's clients see one: each request goes to an instance whose
    /// `/readyz` last answered 200 (probed every 50 ms).
    final class Balancer: Sendable {
        private let state = Mutex<(ports: [Int], ready: Set<Int>)>(([], []))

        init(ports: [Int]) { state.withLock { $0 = (ports, Set(ports)) } }

        func replace(_ old: Int, with new: Int) {
            state.withLock { state in
                state.ports = state.ports.map { $0 == old ? new : $0 }
                state.ready.remove(old)
            }
        }

        func pick() -> Int? { state.withLock { $0.ready.randomElement() } }

        func probe() async {
            while !Task.isCancelled {
                for port in state.withLock({ $0.ports }) {
                    let reply = await RawHTTP.get(port: port, "/readyz", key: nil)
                    state.withLock { state in
                        if reply.status == 200, state.ports.contains(port) { state.ready.insert(port) } else { state.ready.remove(port) }
                    }
                }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// A rolling restart under a write load: one instance gets SIGTERM, answers not ready for its
    /// drain delay while it still answers, then finishes what is in flight and exits 0; a new one
    /// takes its place. Every request was answered (none failed, none was retried after an
    /// error), and every acknowledged write is stored once.
    @Test func aRollingRestartOfOneInstanceLosesNoRequest() async throws {
        let directory = try CrashTests.directory()
        let arguments = ["--test-clock", "--drain-delay", "3"]
        let first = try await ServeProcessTests.launch(directory, arguments: arguments)
        let second = try await ServeProcessTests.launch(directory, arguments: arguments)
        defer {
            for server in [first, second] { server.process.signal(SIGKILL) }
        }
        let balancer = Balancer(ports: [first.port, second.port])
        let acknowledged = Tally<[String: Int]>([:])  // mark → the port that acknowledged it
        let failures = Tally<[String]>([])
        let prober = Task { await balancer.probe() }
        var replacement: ServeProcessTests.Launched?
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var n = 0
                    while !Task.isCancelled {
                        n += 1
                        let mark = "ack-\(worker)-\(n)"
                        for _ in 0..<50 where !Task.isCancelled {
                            guard let port = balancer.pick() else {
                                try? await Task.sleep(for: .milliseconds(20))
                                continue
                            }
                            do {
                                let reply = try await Self.call(port, "/v1/iap/cancel-flow/respond", CrashTests.response(marked: mark), idempotencyKey: mark)
                                if reply.status == 200 {
                                    acknowledged.withLock { $0[mark] = port }
                                    break
                                }
                                // The rate limit's answer is an answer: wait as it says, then send again.
                                if reply.status == 429 {
                                    try? await Task.sleep(for: .milliseconds(200))
                                    continue
                                }
                                failures.withLock { $0.append("\(mark) on \(port): \(reply.status) \(reply.body)") }
                            } catch where !Task.isCancelled {
                                failures.withLock { $0.append("\(mark) on \(port): \(error)") }
                            } catch {
                                break  // the load is over
                            }
                        }
                    }
                }
            }
            func acks() -> Int { acknowledged.withLock { $0.count } }
            func acks(on port: Int) -> Int { acknowledged.withLock { $0.values.filter { $0 == port }.count } }
            let deadline = ContinuousClock.now + .seconds(120)
            while acks() < 150, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            first.process.signal(SIGTERM)
            let status = await first.process.wait(timeout: .seconds(30))
            #expect(status == 0, "the drained instance exits cleanly")
            replacement = try? await ServeProcessTests.launch(directory, arguments: arguments)
            if let replacement {
                balancer.replace(first.port, with: replacement.port)
                while acks(on: replacement.port) < 50, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            }
            group.cancelAll()
        }
        prober.cancel()
        defer { replacement?.process.signal(SIGKILL) }
        let replaced = try #require(replacement)
        let acked = acknowledged.withLock { $0 }
        #expect(acked.values.contains(replaced.port) && acked.values.contains(second.port), "both instances took the load")
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        let log = (try? String(contentsOf: first.log, encoding: .utf8)) ?? ""
        #expect(log.contains("draining") && log.contains("SaveDesk stopped"), "\(log.suffix(600))")
        for server in [second, replaced] {
            server.process.signal(SIGTERM)
            _ = await server.process.wait(timeout: .seconds(30))
        }
        let counts = try await CrashTests.storedMarks(TestDatabase.location(in: directory, file: "db.sqlite"))
        let missing = acked.keys.filter { counts[$0] == nil }
        #expect(acked.count >= 200)
        #expect(missing.isEmpty, "\(missing.count) acknowledged writes lost of \(acked.count)")
        #expect(counts.values.allSatisfy { $0 == 1 }, "each once")
    }
}
