import Foundation
import Logging
import Testing
import TestSupport

@testable import SaveDeskServer

/// What operations teams run a server by: `/healthz` and `/readyz` for the load balancer, the
/// metrics listener, one log line per request with its request id, and a drain on SIGTERM.
@Suite("Health, readiness, metrics, logs, drain")
struct OperabilityTests {
    static let python = ProcessInfo.processInfo.environment["SAVEDESK_TEST_PYTHON"]

    static func json(_ body: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
    }

    /// The value of a header in a raw reply's head.
    static func header(_ name: String, in head: String) -> String? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
    }

    /// Polls `/readyz` until it answers `status` (bounded).
    static func readiness(port: Int, becomes status: Int, within seconds: Int = 60) async -> RawHTTP.Reply {
        var reply = await RawHTTP.get(port: port, "/readyz", key: nil)
        let deadline = ContinuousClock.now + .seconds(seconds)
        while reply.status != status, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(100))
            reply = await RawHTTP.get(port: port, "/readyz", key: nil)
        }
        return reply
    }

    /// A request's id (X-Request-Id, its log line, the audit rows it writes) reads as it always
    /// has: "req_", then 8-4-4 lower-case hex digits whose third group starts with 4, each id
    /// new (60 bits of a one-to-one mix of a count from a random start).
    @Test func requestIdsAreReqAndTheBeginningOfARandomUUID() throws {
        let shape = try Regex("req_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}")
        var ids = Set<String>(), digits = Set<Character>()
        for _ in 0..<2_000 {
            let id = RequestScope.newRequestId()
            #expect(id.wholeMatch(of: shape) != nil, "\(id)")
            ids.insert(id)
            digits.formUnion(id.dropFirst(4).filter { $0 != "-" })
        }
        #expect(ids.count == 2_000)
        #expect(digits.count == 16, "every hex digit turns up")
    }

    @Test func healthAndReadinessAnswerWithoutAKeyAndSayNothingSensitive() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let health = await RawHTTP.get(port: server.running.port, "/healthz", key: nil)
        let alive = try Self.json(health.body)["status"] as? String
        #expect(health.status == 200 && alive == "alive", "\(health.body)")
        let ready = await Self.readiness(port: server.running.port, becomes: 200)
        #expect(ready.status == 200, "\(ready.body)")
        let body = try Self.json(ready.body)
        #expect(body["status"] as? String == "ready")
        #expect(body["checks"] as? [String: String] == ["store": "ok", "migrations": "ok", "jobs": "ok", "draining": "no"])
        #expect(Self.header("X-Request-Id", in: ready.head)?.hasPrefix("req_") == true)
        for secret in [server.directory.path, "sqlite", "postgres", TestServer.appKey, TestServer.operatorKey] {
            #expect(!ready.body.contains(secret) && !health.body.contains(secret))
        }
        // The metrics are not on the public port.
        let metrics = await RawHTTP.get(port: server.running.port, "/metrics", key: TestServer.operatorKey)
        #expect(metrics.status == 404)
    }

    /// The store answers through a proxy the test cuts: the database is gone, as far as the server
    /// can tell. Readiness turns to 503 naming the store (and nothing more), and back once it
    /// returns; liveness stays 200 throughout.
    @Test(.enabled(if: TestDatabase.isPostgres, "needs the run's PostgreSQL cluster"))
    func readinessTurnsWhenTheDatabaseIsGoneAndBackWhenItReturns() async throws {
        let server = try #require(TestDatabase.postgresServer)
        let cluster = try #require(URLComponents(string: server))
        let proxy = try TCPProxy(to: try #require(cluster.port))
        defer { proxy.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-ready-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var location = try #require(URLComponents(string: try await TestDatabase.prepare(in: directory)))
        location.port = proxy.port
        let running = try await SaveDeskBackend.start(
            config: try TestServer.demoConfig(), databasePath: try #require(location.string),
            options: .init(testClock: true, dataDirectory: directory.path), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        defer { Task { await running.stop() } }
        #expect(await Self.readiness(port: running.port, becomes: 200).status == 200)

        proxy.cut()
        let gone = await Self.readiness(port: running.port, becomes: 503)
        #expect(gone.status == 503, "\(gone.body)")
        let body = try Self.json(gone.body)
        #expect(body["status"] as? String == "not_ready" && body["code"] as? String == "not_ready")
        #expect((body["checks"] as? [String: String])?["store"] == "unavailable", "\(gone.body)")
        #expect(body["error"] as? String == "not ready: store: unavailable")
        #expect(!gone.body.contains("127.0.0.1") && !gone.body.contains("savedesk@"), "\(gone.body)")
        #expect(await RawHTTP.get(port: running.port, "/healthz", key: nil).status == 200, "alive all the same")
        // A call that reads the store is a 503 the app can retry, never a 500 or a hang: it waits
        // at most `PostgresEngine.leaseTimeout` for a connection (the pool alone would keep it
        // waiting until its circuit breaker trips, half a minute and more).
        let read = await RawHTTP.exchange(
            port: running.port,
            "GET /v1/iap/entitlements?user_id=cus_ava HTTP/1.1\r\nHost: x\r\nX-ZeroSettle-Key: \(TestServer.appKey)\r\nConnection: close\r\n\r\n",
            timeout: 30
        )
        #expect(read.status == 503 && read.body.contains("database_unavailable"), "\(read.status) \(read.body) \(read.seconds) s")
        #expect(Self.header("Retry-After", in: read.head) != nil)

        proxy.restore()
        let back = await Self.readiness(port: running.port, becomes: 200, within: 120)
        #expect(back.status == 200, "\(back.body)")
    }

    /// On a graceful shutdown the instance first answers not ready, for the drain delay, while
    /// every other call is still answered; then it stops.
    @Test func aDrainAnswersNotReadyWhileStillServingThenStops() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-drain-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = try await TestDatabase.prepare(in: directory)
        let running = try await SaveDeskBackend.start(
            config: try TestServer.demoConfig(), databasePath: path,
            options: .init(testClock: true, dataDirectory: directory.path, drainDelay: .seconds(3)),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        #expect(await Self.readiness(port: running.port, becomes: 200).status == 200)
        let stopping = Task { await running.stop() }
        let draining = await Self.readiness(port: running.port, becomes: 503, within: 10)
        #expect(draining.status == 503)
        let checks = try Self.json(draining.body)["checks"] as? [String: String]
        #expect(checks?["draining"] == "yes", "\(draining.body)")
        let served = await RawHTTP.get(port: running.port, "/v1/iap/cancel-flow", key: TestServer.appKey)
        #expect(served.status == 200, "still answering while the balancer moves away")
        await stopping.value
        let after = await RawHTTP.get(port: running.port, "/healthz", key: nil)
        #expect(after.status == 0, "stopped: \(after.status)")
    }

    @Test func aJobThatStoppedOrIsStuckIsNotRunning() {
        let board = JobBoard()
        #expect(board.notRunning(expected: ["purge", "fold"]) == ["fold", "purge"], "never started")
        board.started("purge", interval: .seconds(1))
        board.started("fold", interval: .seconds(1))
        #expect(board.notRunning(expected: ["purge", "fold"]).isEmpty)
        board.runStarted("fold")
        #expect(board.notRunning(expected: ["purge", "fold"], now: .now + .seconds(59)).isEmpty)
        #expect(board.notRunning(expected: ["purge", "fold"], now: .now + .seconds(61)) == ["fold"], "stuck in a run")
        board.runEnded("fold")
        board.ended("purge")
        #expect(board.notRunning(expected: ["purge", "fold"]) == ["purge"])
    }

    /// The metrics listener's text parses with the Prometheus client library's own parser, and
    /// its counters move with requests: per operation and status, refusals by code, rate limits.
    @Test(.enabled(if: python != nil, "make test installs prometheus-client and sets SAVEDESK_TEST_PYTHON"))
    func theMetricsParseAsPrometheusAndMoveWithRequests() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-metrics-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = try await TestDatabase.prepare(in: directory)
        var config = try TestServer.demoConfig()
        // A burst of ten that refills once in 100 s: the forty requests below pass it however slowly
        // a busy machine sends them (at 0.5 a second, a loaded run once sent them all within budget).
        config.rateLimits.perAddress.burstRequests = 10
        config.rateLimits.perAddress.requestsPerSecond = 0.01
        let running = try await SaveDeskBackend.start(
            config: config, databasePath: path,
            options: .init(testClock: true, dataDirectory: directory.path, metrics: .init(host: "127.0.0.1", port: 0)),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        defer { Task { await running.stop() } }
        let metricsPort = try #require(running.metricsPort)
        #expect(metricsPort != running.port)

        func sample(_ name: String, _ labels: [String: String]) async throws -> Double {
            let reply = await RawHTTP.get(port: metricsPort, "/metrics", key: nil)
            #expect(reply.status == 200)
            #expect(Self.header("Content-Type", in: reply.head)?.hasPrefix("text/plain; version=0.0.4") == true)
            let families = try await Self.parse(reply.body, in: directory)
            let samples = families.flatMap(\.samples)
            return samples.first { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }?.value ?? 0
        }
        let ok = ["operation": "getCancelFlowConfig", "status": "200"]
        let before = try await sample("savedesk_http_requests_total", ok)
        for _ in 0..<3 { #expect(await RawHTTP.get(port: running.port, "/v1/iap/cancel-flow", key: TestServer.appKey).status == 200) }
        #expect(await RawHTTP.get(port: running.port, "/v1/iap/cancel-flow", key: nil).status == 401)
        #expect(try await sample("savedesk_http_requests_total", ok) == before + 3)
        #expect(try await sample("savedesk_http_refusals_total", ["operation": "getCancelFlowConfig", "code": "unauthorized"]) == 1)
        #expect(try await sample("savedesk_http_request_duration_seconds_count", ["operation": "getCancelFlowConfig"]) >= 4)
        // The store's figures and the fold's backlog are there from the start.
        #expect(try await sample("savedesk_store_pool_wait_seconds_count", ["pool": "reader"]) > 0)
        #expect(try await sample("savedesk_store_transaction_duration_seconds_count", [:]) >= 0)
        #expect(try await sample("savedesk_draining", [:]) == 0)
        // Past the address's burst, refusals are counted by payer and budget.
        var limited = 0
        for _ in 0..<40 where await RawHTTP.get(port: running.port, "/v1/iap/cancel-flow", key: TestServer.appKey).status == 429 { limited += 1 }
        #expect(limited > 0)
        #expect(try await sample("savedesk_rate_limit_refusals_total", ["payer": "address", "budget": "requests"]) == Double(limited))
        #expect(try await sample("savedesk_http_refusals_total", ["code": "rate_limited"]) == Double(limited))
    }

    struct Family: Decodable {
        struct Sample: Decodable {
            var name: String
            var labels: [String: String]
            var value: Double
        }
        var name: String
        var type: String
        var samples: [Sample]
    }

    /// Parses exposition text with prometheus_client's parser (scripts/parse-prometheus.py).
    static func parse(_ text: String, in directory: URL) async throws -> [Family] {
        let input = directory.appendingPathComponent("metrics-\(UUID().uuidString).txt")
        let output = directory.appendingPathComponent("metrics-\(UUID().uuidString).json")
        let errors = directory.appendingPathComponent("metrics-\(UUID().uuidString).err")
        try text.write(to: input, atomically: true, encoding: .utf8)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts/parse-prometheus.py")
        let process = try ChildProcess.spawn(try #require(python), [script.path, input.path], stdout: output.path, stderr: errors.path)
        let status = await process.wait(timeout: .seconds(60))
        #expect(status == 0, "\((try? String(contentsOf: errors, encoding: .utf8)) ?? "")")
        struct Parsed: Decodable { var families: [Family] }
        return try JSONDecoder().decode(Parsed.self, from: Data(contentsOf: output)).families
    }

    /// `savedesk-server serve --log-format json`: one JSON object a line; the line of a request
    /// carries the request id its answer was given, its operation, status, latency and actor, and
    /// no key appears anywhere.
    @Test func aJSONLogLinePerRequestCarriesTheRequestIdOfItsAnswer() async throws {
        let directory = try CrashTests.directory()
        let server = try await ServeProcessTests.launch(directory, arguments: ["--log-format", "json"])
        defer { server.process.signal(SIGTERM) }
        let reply = await RawHTTP.get(port: server.port, "/v1/iap/cancel-flow?user_id=cus_ava", key: TestServer.appKey)
        #expect(reply.status == 200)
        let requestId = try #require(Self.header("X-Request-Id", in: reply.head))
        let refused = await RawHTTP.get(port: server.port, "/v1/desk/customers", key: TestServer.appKey)
        #expect(refused.status == 403)
        let refusedId = try #require(Self.header("X-Request-Id", in: refused.head))
        server.process.signal(SIGTERM)
        #expect(try await ServeProcessTests.waitForExit(server.process) == 0)
        let lines = try String(contentsOf: server.log, encoding: .utf8).split(separator: "\n")
        #expect(!lines.isEmpty)
        var objects: [[String: Any]] = []
        for line in lines {
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            #expect(object != nil, "not one JSON object: \(line)")
            if let object { objects.append(object) }
        }
        #expect(objects.allSatisfy { $0["time"] is String && $0["level"] is String && $0["message"] is String })
        let line = try #require(objects.first { $0["message"] as? String == "request" && $0["request_id"] as? String == requestId })
        #expect(line["operation"] as? String == "getCancelFlowConfig")
        #expect(line["status"] as? String == "200")
        #expect(line["actor"] as? String == "app" && line["mode"] as? String == "test")
        #expect(Double(line["latency_ms"] as? String ?? "") != nil)
        let refusal = try #require(objects.first { $0["message"] as? String == "request" && $0["request_id"] as? String == refusedId })
        #expect(refusal["status"] as? String == "403" && refusal["code"] as? String == "secret_key_required")
        let text = try String(contentsOf: server.log, encoding: .utf8)
        #expect(!text.contains(TestServer.appKey) && !text.contains(TestServer.operatorKey))
    }

    @Test func aLogLineIsJSONWhateverItsText() throws {
        let line = JSONLogHandler.line(
            time: Date(timeIntervalSince1970: 1_795_000_000.25), level: .info, label: "savedesk.server", message: "a \"quoted\"\nline\u{0}",
            metadata: ["request_id": "req_1", "message": "clash", "nested": .dictionary(["list": .array(["a", .stringConvertible(2)])])]
        )
        let object = try Self.json(line)
        #expect(object["time"] as? String == "2026-11-18T11:06:40.250Z")
        #expect(object["message"] as? String == "a \"quoted\"\nline\u{0}")
        #expect(object["meta_message"] as? String == "clash" && object["request_id"] as? String == "req_1")
        #expect((object["nested"] as? [String: Any])?["list"] as? [String] == ["a", "2"])
        #expect(!line.contains("\n"))
    }
}
