import AsyncHTTPClient
import Foundation
import NIOCore
import SQLKit
import Synchronization
import Testing
import TestSupport

@testable import SaveDeskServer

/// `savedesk serve` killed with SIGKILL: what it acknowledged is there after a restart, once, and
/// the test clock and the subscriptions it settled always agree.
@Suite("Crashes", .serialized)
struct CrashTests {
    static func post(_ port: Int, _ path: String, _ body: String, key: String = TestServer.appKey) async -> Bool {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = .POST
        request.headers.add(name: "X-ZeroSettle-Key", value: key)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        guard let response = try? await HTTPClient.shared.execute(request, timeout: .seconds(5)),
            (try? await response.body.collect(upTo: 1 << 20)) != nil
        else { return false }
        return response.status == .ok
    }

    /// A cancel-flow response whose free text is `mark`, to find it again after a crash.
    static func response(marked mark: String) -> String {
        #"{"user_id":"cus_ava","product_id":"premium_monthly","outcome":"cancelled","offer_shown":false,"offer_accepted":false,"pause_shown":false,"pause_accepted":false,"last_step_seen":3,"answers":[{"question_id":3,"free_text":"\#(mark)"}]}"#
    }

    /// One worker of a write load: marked responses posted to `port` until cancelled, or until a
    /// post fails and `gone` says its server is dead; each acknowledged mark is recorded.
    static func writeLoad(worker: Int, port: Int, into acknowledged: Tally<[String]>, gone: @Sendable () -> Bool) async {
        var n = 0
        while !Task.isCancelled {
            n += 1
            let mark = "ack-\(worker)-\(n)"
            if await post(port, "/v1/iap/cancel-flow/respond", response(marked: mark)) {
                acknowledged.withLock { $0.append(mark) }
            } else if gone() {
                return
            }
        }
    }

    /// How many times each acknowledged mark is stored (by free text).
    static func storedMarks(_ location: String) async throws -> [String: Int] {
        let stored = try await TestServer.openStore(location) { db in
            try await db.select().column("free_text").column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("cancel_flow_answers")
                .where("free_text", .like, "ack-%").groupBy("free_text").all()
                .map { (try $0.decode(column: "free_text", as: String.self), try $0.decode(column: "n", as: Int.self)) }
        }
        return Dictionary(uniqueKeysWithValues: stored)
    }

    static func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-crash-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func everyAcknowledgedWriteSurvivesSIGKILLOnce() async throws {
        let directory = try Self.directory()
        let server = try await ServeProcessTests.launch(directory)
        let acknowledged = Tally<[String]>([])
        let port = server.port, pid = server.process.pid
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<16 {
                group.addTask { await Self.writeLoad(worker: worker, port: port, into: acknowledged) { kill(pid, 0) != 0 } }
            }
            // Kill it mid-load, once well over 500 writes were acknowledged.
            while acknowledged.withLock({ $0.count }) < 600, server.process.isRunning {
                try? await Task.sleep(for: .milliseconds(20))
            }
            kill(server.process.pid, SIGKILL)
            group.cancelAll()
        }
        _ = try await ServeProcessTests.waitForExit(server.process)
        let acked = acknowledged.withLock { $0 }
        #expect(acked.count >= 500)
        let counts = try await Self.storedMarks(TestDatabase.location(in: directory, file: "db.sqlite"))
        let missing = acked.filter { counts[$0] == nil }
        #expect(missing.isEmpty, "\(missing.count) acknowledged writes lost of \(acked.count)")
        #expect(counts.values.allSatisfy { $0 == 1 }, "each once")
        // And it starts again on the same database.
        let again = try await ServeProcessTests.launch(directory)
        #expect(await Self.post(again.port, "/v1/iap/offer-dismissed", #"{"user_id":"cus_chloe","flow_type":"switch_and_save"}"#))
        again.process.signal(SIGTERM)
        _ = try await ServeProcessTests.waitForExit(again.process)
    }

    @Test func aKillMidAdvanceLeavesTheClockAndTheSubscriptionsConsistent() async throws {
        let directory = try Self.directory()
        let server = try await ServeProcessTests.launch(directory, arguments: ["--test-clock"])
        let answered = Tally(0)
        let port = server.port
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    guard await Self.post(port, "/v1/desk/clock/advance", #"{"days":1}"#, key: TestServer.operatorKey) else { return }
                    answered.withLock { $0 += 1 }
                }
            }
            while answered.withLock({ $0 }) < 8, server.process.isRunning { try? await Task.sleep(for: .milliseconds(5)) }
            try? await Task.sleep(for: .milliseconds(Int.random(in: 0...40)))
            kill(server.process.pid, SIGKILL)
            group.cancelAll()
        }
        _ = try await ServeProcessTests.waitForExit(server.process)
        let days = answered.withLock { $0 }
        let (offset, latest) = try await TestServer.openStore(TestDatabase.location(in: directory, file: "db.sqlite")) { db in
            let offset = try await db.select().column("offset_seconds").from("test_clock").first()?.decode(column: "offset_seconds", as: Int64.self) ?? 0
            let latest = try await db.select().column(SQLFunction("max", args: SQLColumn("at")), as: "n").from("audit_events")
                .where("actor", .in, ["billing", "app_store"]).first()?.decode(column: "n", as: Int64?.self) ?? 0
            return (offset, latest ?? 0)
        }
        // Every acknowledged advance is in the offset (one more may have committed unanswered).
        #expect(offset >= Int64(days) * 86_400 && offset <= Int64(days + 1) * 86_400, "offset \(offset) after \(days) answered")
        // Nothing was settled beyond the clock.
        #expect(latest <= Int64(Date().timeIntervalSince1970) + offset, "billing ran at \(latest), the clock says \(Int64(Date().timeIntervalSince1970) + offset)")
    }
}

/// A value several tasks update.
final class Tally<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
    func withLock<T>(_ body: (inout Value) -> T) -> T { value.withLock { body(&$0) } }
}
