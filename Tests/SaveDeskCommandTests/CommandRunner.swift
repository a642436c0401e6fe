import Foundation
import Logging
import TestSupport
import Testing

@testable import SaveDeskServer

/// A demo server in-process on a fixed clock (so output is the same on every run), and the built
/// `savedesk` binary run against it as a person or a script would run it.
struct CommandRunner {
    static let operatorKey = "sk_test_savedesk_demo_marco_0001"
    static let liveKey = "sk_live_savedesk_ops_000001"
    /// The server's "now": every date in the golden files follows from it.
    static let now = Date(timeIntervalSince1970: 1_795_348_800)  // 2026-11-22T12:00:00Z

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    var running: SaveDeskBackend.Running
    var directory: URL

    static let binary = Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("savedesk")

    /// The demo server; with `live`, one that also has a live operator key, and so no test tooling
    /// (no local StoreKit CA, no test clock).
    static func start(live: Bool = false) async throws -> CommandRunner {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-cli-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var config = try ConfigReader.load(file: try #require(DemoSeed.demoConfigPath))
        if live {
            config.apiKeys.append(try #require(APIKey(key: liveKey, operatorName: "Live Ops")))
            config.appStore?.localCA = false
        }
        let database = try await TestDatabase.prepare(in: directory)
        _ = try await DemoSeed.apply(file: try #require(DemoSeed.demoSeedPath), config: config, databasePath: database, now: now)
        let running = try await SaveDeskBackend.start(
            config: config, databasePath: database, clock: ManualClock(now), options: .init(testClock: !live, dataDirectory: directory.path),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        return CommandRunner(running: running, directory: directory)
    }

    func stop() async { await running.stopAndHoldPort() }

    /// A customer written straight into the server's database (a name no form would accept).
    /// Writes a customer straight into the running server's database (data no API would take).
    /// A second writer on a SQLite file the server also writes can find it locked for longer than
    /// its busy timeout on a loaded machine: it tries again, a few times.
    func insertCustomer(id: String, name: String) async throws {
        for attempt in 1... {
            do {
                let store = try await Store.open(path: TestDatabase.location(in: directory),
                                                 logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
                do {
                    try await store.sqlTransaction { db in
                        try await db.insert(CustomerRecord(id: id, name: name, email: "evil@example.com", country: nil,
                                                           createdAt: Int64(Self.now.timeIntervalSince1970), cardFailing: false), into: "customers")
                    }
                } catch {
                    await store.close()
                    throw error
                }
                await store.close()
                return
            } catch where attempt < 5 && "\(error)".contains("busy") {
                continue
            }
        }
    }

    /// The environment of a clean account: no profiles, this server, this key, state in the
    /// test's directory.
    var environment: [String: String] {
        [
            "SAVEDESK_SERVER": running.baseURL, "SAVEDESK_KEY": Self.operatorKey,
            "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_STATE_HOME": directory.appendingPathComponent("state").path,
            "HOME": directory.path, "SWIFT_BACKTRACE": "interactive=no", "NO_COLOR": "1",
        ]
    }

    /// Runs `savedesk` with these arguments; never blocks a thread of the cooperative pool (the
    /// server shares it), and output goes to files, so no pipe fills up.
    func run(_ arguments: [String], environment extra: [String: String?] = [:]) async throws -> Result {
        let id = UUID().uuidString
        let out = directory.appendingPathComponent("\(id).out"), err = directory.appendingPathComponent("\(id).err")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        FileManager.default.createFile(atPath: err.path, contents: nil)
        var environment = self.environment
        for (key, value) in extra { environment[key] = value }
        let child = try ChildProcess.spawn(Self.binary.path, arguments, environment: environment, stdout: out.path, stderr: err.path)
        guard let status = await child.wait() else {
            child.signal(SIGKILL)
            throw CancellationError()
        }
        return Result(status: status, stdout: try String(contentsOf: out, encoding: .utf8), stderr: try String(contentsOf: err, encoding: .utf8))
    }
}

/// Golden files in `Tests/SaveDeskCommandTests/Golden`. `SAVEDESK_UPDATE_GOLDEN=1 swift test`
/// rewrites them from the current output (then review the diff).
enum Golden {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")

    /// Ids made up at run time (checkout transactions, URLs that carry them) are masked.
    static func normalize(_ text: String) -> String {
        text.replacingOccurrences(of: #"txn_[0-9a-f]+"#, with: "txn_…", options: .regularExpression)
            .replacingOccurrences(of: #"http://127\.0\.0\.1:\d+"#, with: "http://127.0.0.1:PORT", options: .regularExpression)
    }

    static func check(_ output: String, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let actual = normalize(output)
        let file = folder.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["SAVEDESK_UPDATE_GOLDEN"] == "1" {
            try actual.write(to: file, atomically: true, encoding: .utf8)
            return
        }
        let expected = try String(contentsOf: file, encoding: .utf8)
        #expect(actual == expected, "golden \(name) differs; SAVEDESK_UPDATE_GOLDEN=1 rewrites it", sourceLocation: sourceLocation)
    }
}
