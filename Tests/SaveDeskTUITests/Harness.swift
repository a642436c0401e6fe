import Foundation
import Logging
import Testing

@testable import SaveDeskServer
@testable import SaveDeskTUI
@testable import SaveDeskViewModels
@testable import TerminalKit

/// The console on a real in-process demo server with a fixed clock, driven by key events and
/// rendered into buffers, as the terminal would show it.
@MainActor
struct Harness {
    static let operatorKey = "sk_test_savedesk_demo_marco_0001"
    static let now = Date(timeIntervalSince1970: 1_795_348_800)  // 2026-11-22T12:00:00Z

    let running: SaveDeskBackend.Running
    let directory: URL
    let app: TUIApp

    /// `timeout`: how long the console waits for an answer (short where the server is meant to go).
    /// `startApp` false leaves starting the console to whoever runs it (a `TUIRunner`).
    /// `history`: the demo's generated history too (as `savedesk demo` adds it).
    static func start(
        theme: Theme = .builtInDefault, timeout: Duration = .seconds(10), startApp: Bool = true, history: Bool = false
    ) async throws -> Harness {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-tui-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var config = try ConfigReader.load(file: try #require(DemoSeed.demoConfigPath))
        // Apple's cancel page decides within a deadline; a loaded test machine must not turn the
        // demo device's answer into the default message (the deadline has its own tests).
        config.appStore?.retentionMessaging?.deadlineMilliseconds = 600_000
        let database = directory.appendingPathComponent("savedesk.sqlite").path
        _ = try await DemoSeed.apply(file: try #require(DemoSeed.demoSeedPath), config: config, databasePath: database, now: now)
        if history { _ = try await DemoHistory.apply(config: config, databasePath: database, now: now) }
        let running = try await SaveDeskBackend.start(
            config: config, databasePath: database, clock: ManualClock(now), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        let model = try AppModel(serverURL: URL(string: running.baseURL)!, key: operatorKey,
                                 dataDirectory: directory.appendingPathComponent("console"), timeout: timeout)
        let app = TUIApp(model: model, theme: theme)
        if startApp {
            app.start()
            await app.settle()
        }
        return Harness(running: running, directory: directory, app: app)
    }

    /// Writes generated customers straight into the server's database, one per name (ids: the
    /// prefix and the index).
    nonisolated func addCustomers(named names: [String], idPrefix: String = "cus_many_") async throws {
        let store = try await Store.open(path: directory.appendingPathComponent("savedesk.sqlite").path,
                                         logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        do {
            try await store.transaction(key: "test") { data in
                for (index, name) in names.enumerated() {
                    try await data.customers.insert(CustomerRecord(
                        id: "\(idPrefix)\(index)", name: name, email: "n\(index)@many.example", country: nil,
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

    func stop() async {
        app.model.shutdown()
        await running.stopAndHoldPort()
    }

    /// Keys as the person types them, each followed by whatever work it started.
    func press(_ keys: KeyEvent...) async {
        for key in keys {
            app.handle(key)
            await app.settle()
        }
        // What the key recorded is delivered in the background: wait for it (bounded), so the
        // status bar's outbox count is the same on every run.
        for _ in 0..<200 where app.model.client.outbox?.pending().isEmpty == false {
            try? await Task.sleep(for: .milliseconds(10))
        }
        app.model.refreshOutbox()
    }

    func type(_ text: String) async {
        for character in text { await press(.character(character)) }
    }

    func frame(_ width: Int = 80, _ height: Int = 24) -> Frame { app.render(width: width, height: height) }

    func text(_ width: Int = 80, _ height: Int = 24) -> String { frame(width, height).buffer.lines.joined(separator: "\n") }

    /// The screen's text as sentences: wrapped lines joined again (for checking that nothing is cut).
    func prose(_ width: Int = 80, _ height: Int = 24) -> String {
        text(width, height).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}

/// Buffer snapshots in `Tests/SaveDeskTUITests/Snapshots`: the text, and a map of the styles.
/// `SAVEDESK_UPDATE_SNAPSHOTS=1 swift test` rewrites them (then review the diff).
enum Snapshot {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Snapshots")

    /// What changes from run to run: the server's port, made-up ids.
    static func normalize(_ text: String) -> String {
        text.replacingOccurrences(of: #"127\.0\.0\.1:\d{5}"#, with: "127.0.0.1:PORT", options: .regularExpression)
            .replacingOccurrences(of: #"txn_[0-9a-f]{20}"#, with: "txn_XXXXXXXXXXXXXXXXXXXX", options: .regularExpression)
    }

    @MainActor
    static func check(_ harness: Harness, _ name: String, sizes: [(Int, Int)] = [(80, 24), (120, 40)],
                      sourceLocation: SourceLocation = #_sourceLocation) throws {
        for (width, height) in sizes {
            let buffer = harness.frame(width, height).buffer
            let text = normalize(buffer.lines.joined(separator: "\n")) + "\n"
            let styles = TestBackend.styleSnapshot(buffer) + "\n"
            try compare(text, "\(name)-\(width)x\(height).txt", sourceLocation: sourceLocation)
            try compare(styles, "\(name)-\(width)x\(height).styles", sourceLocation: sourceLocation)
        }
    }

    static func compare(_ actual: String, _ file: String, sourceLocation: SourceLocation) throws {
        let url = folder.appendingPathComponent(file)
        if ProcessInfo.processInfo.environment["SAVEDESK_UPDATE_SNAPSHOTS"] == "1" {
            try actual.write(to: url, atomically: true, encoding: .utf8)
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record("no snapshot \(file); SAVEDESK_UPDATE_SNAPSHOTS=1 swift test writes it", sourceLocation: sourceLocation)
            return
        }
        #expect(actual == expected, "snapshot \(file) differs; SAVEDESK_UPDATE_SNAPSHOTS=1 rewrites it", sourceLocation: sourceLocation)
    }
}
