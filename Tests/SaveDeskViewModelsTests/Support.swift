import Foundation
import Logging
import Observation
import RetentionDomain
import SaveDeskClient
import SQLKit
import Testing
import TestSupport

@testable import SaveDeskServer
@testable import SaveDeskViewModels

/// A real server, in-process on an ephemeral port, with the demo config and seed, and a console
/// (app model) with its own data directory talking to it over HTTP.
struct Demo {
    static let operatorKey = "sk_test_savedesk_demo_marco_0001"
    var running: SaveDeskBackend.Running
    /// The server's data directory (its database).
    var serverDirectory: URL
    /// The console's data directory (outbox, dismissal cache, sync queue).
    var consoleDirectory: URL

    static func start(
        serverDirectory: URL? = nil, consoleDirectory: URL? = nil, seed: Bool = true, port: Int = 0, stripe: StripeSettings? = nil
    ) async throws -> Demo {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-vm-\(UUID())")
        let serverDirectory = serverDirectory ?? base.appendingPathComponent("server")
        try FileManager.default.createDirectory(at: serverDirectory, withIntermediateDirectories: true)
        var config = try ConfigReader.load(file: try #require(DemoSeed.demoConfigPath))
        config.billing.stripe = stripe
        let database = try await TestDatabase.prepare(in: serverDirectory)
        if seed { _ = try await DemoSeed.apply(file: try #require(DemoSeed.demoSeedPath), config: config, databasePath: database) }
        if port != 0 { HeldPorts.release(port) }
        let running = try await SaveDeskBackend.start(
            config: config, databasePath: database, port: port, options: .init(testClock: true, dataDirectory: serverDirectory.path),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        return Demo(running: running, serverDirectory: serverDirectory,
                    consoleDirectory: consoleDirectory ?? base.appendingPathComponent("console"))
    }

    /// The same server (database) again, at the same address (the console's outbox is kept per
    /// server and key).
    func restarted() async throws -> Demo {
        // The port was just freed; retry briefly in case the system is slow to release it.
        for _ in 0..<50 {
            if let demo = try? await Demo.start(serverDirectory: serverDirectory, consoleDirectory: consoleDirectory, seed: false, port: running.port) {
                return demo
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await Demo.start(serverDirectory: serverDirectory, consoleDirectory: consoleDirectory, seed: false, port: running.port)
    }

    /// Writes `count` generated customers straight into the server's database, named by index.
    func addCustomers(_ count: Int, name: @Sendable (Int) -> String) async throws {
        let store = try await Store.open(path: TestDatabase.location(in: serverDirectory), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        do {
            try await store.transaction(key: "test") { data in
                for index in 0..<count {
                    try await data.customers.insert(CustomerRecord(
                        id: "cus_many_\(index)", name: name(index), email: "n\(index)@many.example", country: nil,
                        createdAt: 1_700_000_000, cardFailing: false, kind: .generated
                    ))
                }
            }
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    var url: URL { URL(string: running.baseURL)! }

    @MainActor
    func console(timeout: Duration = answerPatience) throws -> AppModel {
        try AppModel(serverURL: url, key: Self.operatorKey, dataDirectory: consoleDirectory, timeout: timeout)
    }

    func stop() async { await running.stopAndHoldPort() }

    /// Rows of a table in the server's database.
    func count(_ table: String, where condition: String = "1 = 1") async throws -> Int {
        let store = try await Store.open(
            path: TestDatabase.location(in: serverDirectory),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        let count = await Result.of { try await store.exclusive { db in
            try await db.raw("SELECT count(*) AS n FROM \(unsafeRaw: table) WHERE \(unsafeRaw: condition)").first()?.decode(column: "n", as: Int.self) ?? 0
        } }
        await store.close()
        return try count.get()
    }
}

/// A URL where nothing listens (a server that was just stopped).
func deadServerURL() async throws -> URL {
    let gone = try await Demo.start(seed: false)
    await gone.stop()
    return gone.url
}

/// Records every value of an observed expression, as the UI would see it: each change is read
/// after it happened (the onChange of withObservationTracking fires before the change, so the
/// read is scheduled on the main actor) and tracking is re-armed each time.
@MainActor
final class Recorder<Value: Equatable> {
    private(set) var values: [Value] = []
    private let read: @MainActor () -> Value

    init(_ read: @escaping @MainActor () -> Value) {
        self.read = read
        values = [read()]
        arm()
    }

    private func arm() {
        withObservationTracking { _ = read() } onChange: { [weak self] in
            Task { @MainActor in self?.changed() }
        }
    }

    private func changed() {
        let value = read()
        if value != values.last { values.append(value) }
        arm()
    }

    /// Lets scheduled reads run, then returns what was seen.
    func settled() async -> [Value] {
        for _ in 0..<5 { await Task.yield() }
        return values
    }
}

/// Polls `condition` (bounded) instead of sleeping a fixed time.
@MainActor
func eventually(timeout: Duration = .seconds(10), _ condition: @MainActor () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}

/// One event of the console's run loop (a key press, a finished call): runs `body`, then lets the
/// main actor render, as the TUI does between events. Observation sees the state each event left.
@MainActor
func event<T>(_ body: @MainActor () async throws -> T) async rethrows -> T {
    let result = try await body()
    for _ in 0..<5 { await Task.yield() }
    return result
}

extension SaveDeskClientError {
    /// What the in-memory fakes answer while their server is "down" (the client's own words).
    static let fakeUnreachable = SaveDeskClientError(kind: .unreachable, message: "the SaveDesk server could not be reached")
}
