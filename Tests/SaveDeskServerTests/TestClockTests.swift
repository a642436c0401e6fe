import Foundation
import Logging
import OpenAPIAsyncHTTPClient
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("Test clock")
struct TestClockTests {
    @Test func advancingRunsEveryDueTransition() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let result = try await server.desk.advanceClock(body: .json(.init(days: 13))).ok.body.json
        #expect(result.now == TestServer.start.addingTimeInterval(13 * 86_400))
        let steps = Dictionary(uniqueKeysWithValues: result.transitions.map { ($0.subscriptionId, $0.steps) })
        #expect(steps == [
            // The web ledger.
            "sub_ava_1": ["renewed"],
            "sub_farah_1": ["period ended after cancellation; expired"],
            // Hana pays on the web but Apple still renews: the web trial follows Apple's period.
            "sub_hana_2": ["the App Store subscription is paid until Jan 3, 2027; the migration trial follows it (no double charge)"],
            "sub_quinn_1": ["trial ended; first charge paid"],
            "sub_sam_1": ["payment kept failing; expired"],
            // The simulated App Store, through signed notifications.
            "sub_chloe_1": ["renewed by Apple"],
            "sub_hana_1": ["renewed by Apple"],
            "sub_olivia_1": ["grace period ended; billing retry"],
        ])
        // Emma's pause ends on day 24: a second advance resumes her.
        let later = try await server.desk.advanceClock(body: .json(.init(days: 11, hours: 1))).ok.body.json
        #expect(later.transitions.first { $0.customerId == "cus_emma" }?.steps == ["pause ended; resumed automatically"])
        let emma = try await server.app.getEntitlements(query: .init(userId: "cus_emma")).ok.body.json.entitlements[0]
        #expect(emma.status.rawValue == "active" && emma.isActive)
        let sam = try await server.desk.getCustomer(path: .init(customerId: "cus_sam")).ok.body.json.entitlements[0].lifecycle
        #expect(sam.state.rawValue == "expired" && sam.summary == "Expired (payment failed)")
    }

    @Test func liveKeysAndPublishableKeysCannotMoveTime() async throws {
        // Live keys only run on a server without test tooling (no local CA, no test clock).
        let server = try await TestServer.start(config: try TestServer.configWithLiveKeys(), testClock: false)
        defer { Task { await server.stop() } }
        expectFailure(try await server.client(key: "sk_live_savedesk_ops_000001").advanceClock(body: .json(.init(days: 1))),
                      status: 403, code: "test_mode_only")
        expectFailure(try await server.app.advanceClock(body: .json(.init(days: 1))), status: 403, code: "secret_key_required")
        let live = server.client(key: "sk_live_savedesk_ops_000001")
        expectFailure(try await live.simulateAppStoreEvent(body: .json(.init(originalTransactionId: "2000000810000001", event: .refund))),
                      status: 403, code: "test_mode_only")
        let checkout = try await server.app.createCheckout(body: .json(.init(productId: "premium_yearly", userId: "cus_ava"))).ok.body.json
        expectFailure(try await live.simulateCheckout(body: .json(.init(transactionId: checkout.transactionId, outcome: .paid))),
                      status: 403, code: "test_mode_only")
        // A test-mode key on this server: the clock is not adjustable.
        expectFailure(try await server.desk.advanceClock(body: .json(.init(days: 1))), status: 409, code: "clock_not_adjustable")
        expectFailure(try await live.simulateStoreKitPurchase(body: .json(.init(productId: "premium_monthly"))),
                      status: 403, code: "test_mode_only")
        #expect(try await server.desk.getDeskSession().ok.body.json.serverTime == TestServer.start, "time did not move")
    }

    /// Out of the spec's range: 400. In range, but no time at all: 422 (the spec cannot say "not both zero").
    @Test(arguments: [(-1, 0, 400, "out_of_range"), (0, 0, 422, "invalid_advance"), (0, -5, 400, "out_of_range"), (4000, 0, 400, "out_of_range")])
    func nonsenseAmountsAreRefused(days: Int, hours: Int, status: Int, code: String) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        expectFailure(try await server.desk.advanceClock(body: .json(.init(days: days, hours: hours))), status: status, code: code)
        #expect(try await server.desk.getDeskSession().ok.body.json.serverTime == TestServer.start)
    }

    @Test func aRealTimeServerRefuses() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-realtime-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let running = try await SaveDeskBackend.start(
            config: try TestServer.demoConfig(), databasePath: directory.appendingPathComponent("db.sqlite").path,
            clock: SystemClock(), options: .init(testClock: false), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        defer { Task { await running.stop() } }
        let client = Client(serverURL: URL(string: running.baseURL)!, transport: AsyncHTTPClientTransport(),
                            middlewares: [KeyHeader(key: TestServer.operatorKey)])
        expectFailure(try await client.advanceClock(body: .json(.init(days: 1))), status: 409, code: "clock_not_adjustable")
    }
}
