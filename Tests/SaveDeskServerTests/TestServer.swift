import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import SaveDeskAPI
import SQLKit
import Testing
import TestSupport

@testable import SaveDeskServer

/// A real SaveDesk server on an ephemeral loopback port, with the demo config and seed in a
/// fresh directory and a manual clock, and generated clients to talk to it.
struct TestServer {
    static let appKey = "pk_test_savedesk_demo_app_0001"
    static let operatorKey = "sk_test_savedesk_demo_marco_0001"
    static let start = Date(timeIntervalSince1970: 1_795_348_800)  // 2026-11-22T12:00:00Z

    let running: SaveDeskBackend.Running
    let clock: ManualClock
    let directory: URL
    let config: ServerConfig

    /// The server's database: a SQLite file in `directory`, or its own PostgreSQL database (TestDatabase).
    var databasePath: String { TestDatabase.location(in: directory) }
    var baseURL: String { running.baseURL }

    static func demoConfig() throws -> ServerConfig {
        try ConfigReader.load(file: try #require(DemoSeed.demoConfigPath))
    }

    /// Starts a server; with `directory`, on that directory's database (a restart).
    /// The demo config with a live operator and a live app key, and without the demo's local
    /// StoreKit CA (test tooling never runs next to live keys).
    static func configWithLiveKeys() throws -> ServerConfig {
        var config = try demoConfig()
        config.apiKeys.append(try #require(APIKey(key: liveOperatorKey, operatorName: "Live Ops")))
        config.apiKeys.append(try #require(APIKey(key: liveAppKey)))
        config.appStore?.localCA = false
        config.appStore?.trustedRoots = []
        return config
    }

    /// The tests' HTTP client: kept connections are let go after 20 s, before the server closes
    /// idle ones (30 s), so a test that waits between calls never sends on a closing connection
    /// (AsyncHTTPClient's shared client keeps them 60 s: `remoteConnectionClosed`).
    static let http: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.idleTimeout = .seconds(20)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    static let liveOperatorKey = "sk_live_savedesk_ops_000001"
    static let liveAppKey = "pk_live_savedesk_app_000001"

    static func start(
        directory: URL? = nil, clock: ManualClock? = nil, seed: Bool = true, config: ServerConfig? = nil, testClock: Bool = true,
        readTimeout: Duration? = nil, purgeInterval: Duration = .seconds(600), seedFile: String? = nil,
        logger: Logger = .init(label: "test") { _ in SwiftLogNoOpLogHandler() },
        adjust: (inout SaveDeskBackend.Options) -> Void = { _ in }
    ) async throws -> TestServer {
        let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let clock = clock ?? ManualClock(start)
        let config = try config ?? demoConfig()
        let path = try await warningIfSlow("TestServer.start: preparing the database in \(directory.lastPathComponent)") {
            try await TestDatabase.prepare(in: directory)
        }
        if seed {
            let file = try seedFile ?? #require(DemoSeed.demoSeedPath)
            _ = try await warningIfSlow("TestServer.start: seeding \(directory.lastPathComponent)") {
                try await DemoSeed.apply(file: file, config: config, databasePath: path, now: clock.now())
            }
        }
        var options = SaveDeskBackend.Options(
            testClock: testClock, purgeInterval: purgeInterval, readTimeout: readTimeout, dataDirectory: directory.path
        )
        adjust(&options)
        let running = try await warningIfSlow("TestServer.start: starting the server on \(directory.lastPathComponent)") {
            try await SaveDeskBackend.start(config: config, databasePath: path, clock: clock, options: options, logger: logger)
        }
        return TestServer(running: running, clock: clock, directory: directory, config: config)
    }

    func stop() async {
        await warningIfSlow("TestServer.stop: the server on \(directory.lastPathComponent)") { await running.stopAndHoldPort() }
    }

    func client(key: String? = TestServer.appKey) -> Client {
        Client(serverURL: URL(string: baseURL)!, transport: AsyncHTTPClientTransport(configuration: .init(client: Self.http)),
               middlewares: [KeyHeader(key: key)])
    }

    var app: Client { client(key: Self.appKey) }
    var desk: Client { client(key: Self.operatorKey) }

    /// A request as bytes, for what the generated client cannot send (malformed JSON, …).
    func raw(
        _ method: HTTPMethod, _ path: String, body: String? = nil, key: String? = TestServer.appKey,
        headers: [String: String] = [:]
    ) async throws -> (status: Int, body: String, headers: HTTPHeaders) {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        if let key { request.headers.add(name: "X-ZeroSettle-Key", value: key) }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: TimeAmount(answerPatience))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: bytes), response.headers)
    }

    /// Opens a database file, runs `body` on it, and closes it.
    static func openStore<T>(_ path: String, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
        let store = try await Store.open(path: path, logger: .init(label: "test") { _ in SwiftLogNoOpLogHandler() })
        do {
            let result = try await store.exclusive(body)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }

    /// Direct access to the store, for checking what was written.
    func withStore<T>(_ body: (Store) async throws -> T) async throws -> T {
        let store = try await Store.open(path: databasePath, logger: .init(label: "test") { _ in SwiftLogNoOpLogHandler() })
        do {
            let result = try await body(store)
            await store.close()
            return result
        } catch {
            await store.close()
            throw error
        }
    }
}

import Logging
import Synchronization

/// Signing dates for App Store data made by tests: each one later than the last, as Apple's are.
enum SignedDates {
    private static let last = Mutex<Int64>(Int64(TestServer.start.timeIntervalSince1970 * 1000))

    static func next() -> Int64 { last.withLock { $0 += 1; return $0 } }
}

/// Sends the API key the way the SDK does.
struct KeyHeader: ClientMiddleware {
    let key: String?

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        if let key { request.headerFields[HTTPField.Name("X-ZeroSettle-Key")!] = key }
        return try await next(request, body, baseURL)
    }
}

/// The error of any generated operation output (its `default` case), or nil on success.
func failure(_ output: Any) -> (status: Int, body: Components.Schemas.ErrorBody)? {
    let mirror = Mirror(reflecting: output)
    guard let child = mirror.children.first, child.label == "default" else { return nil }
    let parts = Mirror(reflecting: child.value).children.map(\.value)
    guard parts.count == 2, let status = parts[0] as? Int, let response = parts[1] as? Components.Responses._Error,
        let body = try? response.body.json
    else { return nil }
    return (status, body)
}

/// The error envelope of a raw answer's body.
func envelope(_ body: String) throws -> Components.Schemas.ErrorBody {
    try JSONDecoder().decode(Components.Schemas.ErrorBody.self, from: Data(body.utf8))
}

/// Asserts an operation failed with this status and code; returns the error body.
@discardableResult
func expectFailure(
    _ output: Any, status: Int, code: String, sourceLocation: SourceLocation = #_sourceLocation
) -> Components.Schemas.ErrorBody? {
    guard let (actualStatus, body) = failure(output) else {
        Issue.record("expected \(status) \(code), got success: \(output)", sourceLocation: sourceLocation)
        return nil
    }
    #expect(actualStatus == status, "status", sourceLocation: sourceLocation)
    #expect(body.code == code, "\(body.error)", sourceLocation: sourceLocation)
    #expect(!body.error.isEmpty, sourceLocation: sourceLocation)
    return body
}

/// One StoreKit sync, as the single-transaction shape of the sync-or-reconcile body.
extension Operations.SyncStoreKitTransaction.Input.Body {
    static func json(_ request: Components.Schemas.StoreKitTransactionRequest) -> Self { .json(.StoreKitTransactionRequest(request)) }
}

extension Operations.SyncStoreKitTransaction.Output.Ok.Body.JsonPayload {
    /// The answer to a single sync (a reconcile answers otherwise).
    var owned: Bool { if case .StoreKitTransactionResponse(let synced) = self { synced.owned } else { false } }
    var synced: Components.Schemas.StoreKitTransactionResponse? {
        if case .StoreKitTransactionResponse(let synced) = self { synced } else { nil }
    }
}

extension TestServer {
    /// Rows of a table (matching a condition) in the server's database.
    func count(_ table: String, where condition: String = "1 = 1") async throws -> Int {
        try await withStore { store in
            try await store.exclusive { db in
                try await db.raw("SELECT count(*) AS n FROM \(unsafeRaw: table) WHERE \(unsafeRaw: condition)").first()?
                    .decode(column: "n", as: Int.self) ?? -1
            }
        }
    }
}
