import Foundation
import Logging
import RetentionDomain
import SaveDeskClient
@testable import SaveDeskServer
import SQLKit
import Testing
import TestSupport

/// A real server, in-process on an ephemeral port, with the demo config and seed.
struct LocalServer {
    static let appKey = "pk_test_savedesk_demo_app_0001"
    let running: SaveDeskBackend.Running
    let directory: URL

    static func start(in directory: URL? = nil) async throws -> LocalServer {
        let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-client-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let config = try ConfigReader.load(file: try #require(DemoSeed.demoConfigPath))
        let database = try await warningIfSlow("LocalServer.start: preparing the database") { try await TestDatabase.prepare(in: directory) }
        let seed = try #require(DemoSeed.demoSeedPath)
        _ = try await warningIfSlow("LocalServer.start: seeding") { try await DemoSeed.apply(file: seed, config: config, databasePath: database) }
        let running = try await warningIfSlow("LocalServer.start: starting the server") {
            try await SaveDeskBackend.start(config: config, databasePath: database, options: .init(testClock: true, dataDirectory: directory.path),
                                            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        }
        return LocalServer(running: running, directory: directory)
    }

    var url: URL { URL(string: running.baseURL)! }
}

@Suite("SaveDeskClient")
struct ClientTests {
    @Test func thePrimitivesWorkAgainstARealServer() async throws {
        let server = try await LocalServer.start()
        defer { Task { await server.running.stop() } }
        let client = SaveDeskClient(serverURL: server.url, key: LocalServer.appKey)
        let config = try await client.cancelFlowConfig()
        #expect(config.questions.count == 3 && config.offer?.value == "40")
        #expect(try await client.acceptSaveOffer(productId: "premium_monthly", userId: "cus_ava").message == "40% off for 3 months")
        let resumes = try await client.pauseSubscription(productId: "premium_monthly", userId: "cus_ava", days: 30)
        #expect(resumes != nil)
        try await client.resumeSubscription(productId: "premium_monthly", userId: "cus_ava")
        let until = try await client.cancelSubscription(productId: "premium_monthly", userId: "cus_ava")
        #expect(until > Date())
        #expect(try await client.openCustomerPortal(userId: "cus_ava").path.hasPrefix("/portal/"))
        let entitlements = try await client.restoreEntitlements(userId: "cus_hana")
        #expect(Set(entitlements.map(\.source)) == [.storeKit, .webCheckout])
    }

    @Test func errorsCarryTheServersWords() async throws {
        let server = try await LocalServer.start()
        defer { Task { await server.running.stop() } }
        let client = SaveDeskClient(serverURL: server.url, key: LocalServer.appKey)
        do {
            try await client.cancelSubscription(productId: "premium_monthly", userId: "cus_chloe")
            Issue.record("an App Store subscription was cancelled")
        } catch {
            #expect(error.kind == .server(status: 422, code: "managed_by_app_store"))
            #expect(error.message.contains("billed by the App Store") && error.steps.count == 4)
        }
        await #expect(throws: SaveDeskClientError(kind: .server(status: 404, code: "no_subscription"), message: "cus_nobody has no Premium Monthly subscription")) {
            try await client.cancelSubscription(productId: "premium_monthly", userId: "cus_nobody")
        }
        let wrongKey = SaveDeskClient(serverURL: server.url, key: "pk_test_not_a_real_key_00")
        await #expect(throws: SaveDeskClientError.self) { _ = try await wrongKey.cancelFlowConfig() }
        await server.running.stopAndHoldPort()
        do {
            _ = try await client.cancelFlowConfig()
            Issue.record("a stopped server answered")
        } catch {
            #expect(error.kind == .unreachable && error.isTransient)
            #expect(error.message.contains("could not be reached"))
        }
    }

    /// Nothing listening: the call says so at once, not after the timeout. AsyncHTTPClient's
    /// default retried the connection with backoff until its timeout, and the client's own retry
    /// doubled it (60 s with the 30 s timeout here). The bound is far from both: a refused
    /// connect takes milliseconds, and a busy machine's delays take seconds, not fifteen.
    @Test func aServerThatIsDownIsReportedAtOnce() async throws {
        let server = try await LocalServer.start()
        let url = server.url
        await server.running.stopAndHoldPort()
        let client = SaveDeskClient(serverURL: url, key: LocalServer.appKey, timeout: .seconds(30))
        let start = ContinuousClock.now
        await #expect(throws: SaveDeskClientError.self) { _ = try await client.cancelFlowConfig() }
        #expect(ContinuousClock.now - start < .seconds(15), "took \(ContinuousClock.now - start)")
    }

    /// A stopped test server stands for a server that is down only while nothing else listens on
    /// its port: the port is held, so another test's server (same demo keys) is never given it.
    @Test func aStoppedServersPortIsRefusedAndNotGivenToAnotherServer() async throws {
        let server = try await LocalServer.start()
        let port = server.running.port
        await server.running.stopAndHoldPort()
        #expect(HeldPorts.isHeld(port))
        // A socket that asks for exactly that port, as the kernel checks it for port 0, is refused.
        let other = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(other) }
        let bound = Loopback.bind(other, port: port)
        #expect(bound == nil && errno == EADDRINUSE)
        // A call to it is refused at once.
        let client = SaveDeskClient(serverURL: server.url, key: LocalServer.appKey, timeout: .seconds(10))
        await #expect(throws: SaveDeskClientError.self) { _ = try await client.cancelFlowConfig() }
    }
}

@Suite("Durable outbox")
struct OutboxTests {
    static func response(_ index: Int) -> CancelFlow.Response {
        CancelFlow.Response(
            productId: "premium_monthly", userId: "cus_ava", outcome: index.isMultiple(of: 2) ? .cancelled : .retained,
            answers: [.init(questionId: 1, selectedOptionId: 11 + index % 4)], offerShown: true,
            offerAccepted: !index.isMultiple(of: 2), lastStepSeen: 3
        )
    }

    @Test func twentyResponsesWaitForTheServerAndArriveExactlyOnce() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-outbox-\(UUID())")
        // The server is down: a port held, never listening (connections refused at once).
        let gone = try #require(URL(string: "http://127.0.0.1:\(HeldPorts.holdFreshPort())"))
        let outbox = try Outbox(directory: directory)
        let offline = SaveDeskClient(serverURL: gone, key: LocalServer.appKey, timeout: .seconds(2), outbox: outbox)
        for index in 0..<20 { offline.submitCancelFlowResponse(Self.response(index)) }
        #expect(outbox.pending().count == 20, "written before submit returned")
        // submit started a delivery pass in the background; wait (bounded) until a pass has failed.
        var failed = await outbox.deliver(using: offline)
        for _ in 0..<200 where failed.nextAttempt == nil {
            try await Task.sleep(for: .milliseconds(20))
            failed = await outbox.deliver(using: offline)
        }
        #expect(failed.delivered == 0 && failed.remaining == 20 && failed.nextAttempt != nil)
        #expect((outbox.pending().first?.attempts ?? 0) >= 1, "the failure is recorded with the item")
        #expect(outbox.pending().dropFirst().allSatisfy { $0.attempts == 0 }, "later items wait behind the first, in order")

        // The app shuts down (its background delivery stops) and restarts (a new outbox on the
        // same folder), and the server is back.
        outbox.stop()
        while outbox.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        let server = try await LocalServer.start()
        defer { Task { await server.running.stop() } }
        let reopened = try Outbox(directory: directory)
        let pending = reopened.pending()
        #expect(pending.count == 20 && pending.map(\.sequence) == pending.map(\.sequence).sorted())
        let online = SaveDeskClient(serverURL: server.url, key: LocalServer.appKey, outbox: reopened)
        let report = await reopened.deliver(using: online, now: Date().addingTimeInterval(3_600))
        #expect(report.delivered == 20 && report.remaining == 0 && report.rejected == 0)
        let again = await reopened.deliver(using: online, now: Date().addingTimeInterval(7_200))
        #expect(again.delivered == 0)
        // The server has each exactly once, in order.
        let analytics = try await SaveDeskClientTestSupport.responseCount(server)
        #expect(analytics == 20)
    }

    @Test func aRepeatedDeliveryIsNotAppliedTwice() async throws {
        let server = try await LocalServer.start()
        defer { Task { await server.running.stop() } }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-outbox-\(UUID())")
        let outbox = try Outbox(directory: directory)
        let client = SaveDeskClient(serverURL: server.url, key: LocalServer.appKey, outbox: outbox)
        try outbox.enqueue(.cancelFlowResponse, body: Self.response(1))
        // The answer to the first delivery is lost; the same item (same key) goes again.
        let copy = try #require(outbox.pending().first)
        // On a loaded machine a delivery can fail (the database slow to connect) and wait for its
        // next try: each step delivers within a few tries, a try past the last one's backoff.
        func deliverWithin(tries: Int = 5) async -> Int {
            for attempt in 0..<tries {
                let report = await outbox.deliver(using: client, now: Date().addingTimeInterval(Double(attempt) * 3_600))
                if report.delivered > 0 || report.remaining == 0 { return report.delivered }
            }
            return 0
        }
        #expect(await deliverWithin() == 1)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try JSONEncoder().encode(copy).write(to: directory.appendingPathComponent(String(format: "%020llu", copy.sequence) + ".json"))
        #expect(await deliverWithin() == 1)
        #expect(try await SaveDeskClientTestSupport.responseCount(server) == 1)
    }

    @Test func aResponseTheServerRefusesIsSetAsideNotLost() async throws {
        let server = try await LocalServer.start()
        defer { Task { await server.running.stop() } }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-outbox-\(UUID())")
        let outbox = try Outbox(directory: directory)
        let client = SaveDeskClient(serverURL: server.url, key: LocalServer.appKey, outbox: outbox)
        var unknown = Self.response(0)
        unknown.answers = [.init(questionId: 99, selectedOptionId: 1)]
        try outbox.enqueue(.cancelFlowResponse, body: unknown)
        try outbox.enqueue(.cancelFlowResponse, body: Self.response(2))
        let report = await outbox.deliver(using: client)
        #expect(report.rejected == 1 && report.delivered == 1 && report.remaining == 0)
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("rejected").path)
        #expect(aside.filter { $0.hasSuffix(".json") }.count == 1 && outbox.rejectedCount == 1)
        let reason = try #require(aside.first { $0.hasSuffix(".reason") })
        #expect(try String(contentsOf: directory.appendingPathComponent("rejected/\(reason)"), encoding: .utf8).contains("there is no question 99"))
    }
}

enum SaveDeskClientTestSupport {
    /// How many cancel-flow responses the server's database holds.
    static func responseCount(_ server: LocalServer) async throws -> Int {
        let store = try await Store.open(
            path: TestDatabase.location(in: server.directory), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        let count = await Result.of { try await store.exclusive { db in try await db.raw("SELECT count(*) AS n FROM cancel_flow_responses").first()?.decode(column: "n", as: Int.self) ?? 0 } }
        await store.close()
        return try count.get()
    }
}
