import AsyncHTTPClient
import Foundation
import NIOCore
import TestSupport
import Testing

@testable import SaveDeskServer

/// `savedesk serve` as a real process: binds loopback, serves, and shuts down cleanly on signals.
@Suite("savedesk serve")
struct ServeProcessTests {
    struct Launched {
        var process: ChildProcess
        var log: URL
        var port: Int
    }

    static func launch(_ directory: URL, arguments extra: [String] = []) async throws -> Launched {
        let log = directory.appendingPathComponent("serve-\(UUID().uuidString.prefix(6)).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let database = try await TestDatabase.prepare(in: directory, file: "db.sqlite")
        let process = try ChildProcess.spawn(
            ConfigValidationTests.savedesk.path,
            ["serve", "--config", try #require(DemoSeed.demoConfigPath), "--db", database, "--data-dir", directory.path,
             "--seed", try #require(DemoSeed.demoSeedPath), "--port", "0"] + extra,
            environment: ["SWIFT_BACKTRACE": "interactive=no"], stderr: log.path
        )
        // Poll the log for the bound address, with a bound (30 s: a loaded CI machine migrated and
        // seeded a PostgreSQL database in more than the 10 s this once allowed).
        for _ in 0..<600 {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            // `address=http://…` in text lines, `"address":"http://…"` in JSON ones.
            if let range = text.range(of: #"address(=|":")http://127\.0\.0\.1:(\d+)"#, options: .regularExpression) {
                let port = Int(text[range].split(separator: ":").last ?? "") ?? 0
                return Launched(process: process, log: log, port: port)
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.signal(SIGKILL)
        Issue.record("the server did not report its address: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        throw CancellationError()
    }

    static func waitForExit(_ process: ChildProcess) async throws -> Int32 {
        let status = await process.wait(timeout: .seconds(10))
        #expect(status != nil, "the server stopped")
        return status ?? -1
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func servesOnLoopbackAndStopsGracefully(signal: Int32) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-serve-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let server = try await Self.launch(directory)
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/v1/iap/cancel-flow/")
        request.headers.add(name: "X-ZeroSettle-Key", value: TestServer.appKey)
        let response = try await HTTPClient.shared.execute(request, timeout: TimeAmount(answerPatience))
        #expect(response.status.code == 200)
        #expect(String(buffer: try await response.body.collect(upTo: 1 << 20)).contains("questions"))
        server.process.signal(signal)
        #expect(try await Self.waitForExit(server.process) == 0)
        let log = try String(contentsOf: server.log, encoding: .utf8)
        #expect(log.contains("customers_added=16"))
        #expect(log.contains("Server started and listening on 127.0.0.1"), "loopback by default")
    }
}

/// The server's process keeps the heap memory it frees for its next allocations (`HeapTuning`),
/// rather than handing it back to the kernel and faulting it in again: a customer search that
/// sorts through a temporary table (SQLite allocates and frees a page cache for each) cost a
/// fresh `serve` 15 to 60 page faults a request ("ava" 17 and "a" 52 in a release build, 16 and
/// 61 in a debug one), and about none with it.
/// Page faults are counted, not timed: the count does not depend on how busy the machine is.
@Suite("savedesk serve's heap")
struct ServeHeapTests {
    /// The process's minor page faults so far (`/proc/PID/stat`, the 10th field).
    static func minorFaults(_ pid: pid_t) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command's name (in parentheses, which may hold spaces): state, ppid, … minflt.
        let afterName = try #require(stat.range(of: ")", options: .backwards)).upperBound
        let fields = stat[afterName...].split(separator: " ")
        return try #require(fields.count > 7 ? Int(fields[7]) : nil)
    }

    @Test func aSearchThatSortsTakesNoPageFaultsOnceWarm() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-heap-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await ServeProcessTests.launch(directory)
        defer { server.process.signal(SIGKILL) }
        func search(_ text: String) async throws {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/v1/desk/customers?query=\(text)&per_page=15")
            request.headers.add(name: "X-ZeroSettle-Key", value: TestServer.operatorKey)
            let response = try await HTTPClient.shared.execute(request, timeout: TimeAmount(answerPatience))
            _ = try await response.body.collect(upTo: 1 << 20)
            #expect(response.status.code == 200)
        }
        // "a": a prefix, sorted from both prefix indexes; "ava": a substring, matched through the
        // search index into a materialized table, then sorted.
        for text in ["a", "ava"] {
            for _ in 0..<20 { try await search(text) }
            let before = try Self.minorFaults(server.process.pid)
            let requests = 200
            for _ in 0..<requests { try await search(text) }
            let perRequest = Double(try Self.minorFaults(server.process.pid) - before) / Double(requests)
            #expect(perRequest < 3, "\(text): \(perRequest) page faults a request")
        }
    }
}
