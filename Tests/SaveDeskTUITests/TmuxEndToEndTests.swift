import Foundation
import Logging
import SaveDeskClient
import SQLKit
import Synchronization
import TestSupport
import Testing

@testable import SaveDeskServer

/// The tmux servers the suite started, killed with what runs in them once its tests are over: a
/// test's `defer { Task { await terminal.stop() } }` may never run once the last test has returned,
/// and a test that failed midway left its `savedesk demo` (and its server) running for good.
struct TmuxServers: SuiteTrait, TestScoping {
    private static let sockets = Mutex<[String]>([])

    static func register(_ socket: String) { sockets.withLock { $0.append(socket) } }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let outcome = await Result.of { try await function() }
        for socket in Self.sockets.withLock({ list in defer { list.removeAll() }; return list }) {
            _ = await (try? ChildProcess.spawn("tmux", ["-L", socket, "kill-server"]))?.wait(timeout: .seconds(10))
        }
        try outcome.get()
    }
}

/// The built `savedesk demo` in a real terminal (tmux, 80×24): keys in, screen text out, and the
/// server's database checked after each flow.
@Suite("savedesk demo in tmux", .serialized, TmuxServers())
struct TmuxEndToEndTests {
    static let binary = Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("savedesk")

    /// One tmux server of our own (its own socket), one session running the demo.
    struct Terminal {
        let socket = "savedesk-test-\(UUID().uuidString.prefix(8))"
        let directory: URL
        /// Keys the agent pressed (each character typed counts as one).
        let pressed = KeyCount()

        final class KeyCount: @unchecked Sendable {
            // Only the test's own task touches it, one call at a time.
            var value = 0
        }

        init() throws {
            TmuxServers.register(socket)
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-tmux-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }

        var database: String { directory.appendingPathComponent("server/savedesk.sqlite").path }
        var sttyFile: URL { directory.appendingPathComponent("stty.txt") }

        /// Runs tmux and returns what it printed (a ChildProcess, not Foundation's Process: the
        /// tmux server that `new-session` leaves behind inherits Process's termination socket,
        /// so Process would never see the client exit).
        @discardableResult
        func tmux(_ arguments: [String]) async throws -> String {
            let file = directory.appendingPathComponent("tmux-\(UUID().uuidString).out")
            defer { try? FileManager.default.removeItem(at: file) }
            let child = try ChildProcess.spawn("tmux", ["-L", socket] + arguments, stdout: file.path)
            guard await child.wait(timeout: .seconds(30)) != nil else { throw CocoaError(.executableLoad) }
            return (try? String(contentsOf: file, encoding: .utf8)) ?? ""
        }

        /// Starts the demo, finds the customer, and opens the cancel flow of their subscription.
        func openCancelFlow(searching name: String) async throws {
            try await start()
            try await waitFor(" customers \u{00B7} page 1 of")
            try await type(name)
            try await waitFor("1 customer ")
            try await keys("Enter")
            try await waitFor("1 Cancel flow (Premium Monthly)")
            try await keys("c")
            try await waitFor("What's the main reason you want to cancel? *")
        }

        /// Starts the demo; when it ends, the terminal's settings are written to `stty.txt`.
        func start() async throws {
            let command = "SWIFT_BACKTRACE=interactive=no TERM=xterm-256color '\(TmuxEndToEndTests.binary.path)' demo --data-dir '\(directory.path)'; "
                + "echo EXIT=$?; stty -a > '\(sttyFile.path)'; sleep 120"
            try await tmux(["new-session", "-d", "-s", "demo", "-x", "80", "-y", "24", command])
        }

        /// `savedesk tui` on a running server in a session of its own (a second console beside the demo).
        func startConsole(_ session: String, server: String, key: String) async throws {
            let state = directory.appendingPathComponent(session).path
            let command = "SWIFT_BACKTRACE=interactive=no TERM=xterm-256color XDG_STATE_HOME='\(state)' XDG_CONFIG_HOME='\(state)' "
                + "'\(TmuxEndToEndTests.binary.path)' tui --server '\(server)' --key '\(key)'; echo EXIT=$?; sleep 120"
            try await tmux(["new-session", "-d", "-s", session, "-x", "80", "-y", "24", command])
        }

        func keys(_ keys: String..., in session: String = "demo") async throws {
            pressed.value += keys.count
            try await tmux(["send-keys", "-t", session] + keys)
        }

        /// Types text literally.
        func type(_ text: String, in session: String = "demo") async throws {
            pressed.value += text.count
            try await tmux(["send-keys", "-t", session, "-l", text])
        }

        func screen(_ session: String = "demo") async throws -> String { try await tmux(["capture-pane", "-p", "-t", session]) }

        /// Polls the screen until it shows `text` (bounded); how long it took.
        @discardableResult
        func waitFor(
            _ text: String, in session: String = "demo", timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation
        ) async throws -> Duration {
            let started = ContinuousClock.now
            while ContinuousClock.now - started < timeout {
                if try await screen(session).contains(text) { return ContinuousClock.now - started }
                try await Task.sleep(for: .milliseconds(20))
            }
            Issue.record("the screen never showed \"\(text)\":\n\(try await screen(session))", sourceLocation: sourceLocation)
            throw CancellationError()
        }

        func stop() async { _ = try? await tmux(["kill-server"]) }

        /// A value from the demo server's database (it is still running: SQLite WAL lets us read).
        func query(_ sql: String) async throws -> [SQLRow] {
            let store = try await Store.open(path: database, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
            let rows = try await store.exclusive { db in try await db.raw(SQLQueryString(stringLiteral: sql)).all() }
            await store.close()
            return rows
        }

        func count(_ sql: String) async throws -> Int {
            try await query(sql).first?.decode(column: "n", as: Int.self) ?? -1
        }

        /// Polls a count until it matches (deliveries happen in the background).
        func eventually(_ sql: String, equals expected: Int, sourceLocation: SourceLocation = #_sourceLocation) async throws {
            for _ in 0..<200 {
                if try await count(sql) == expected { return }
                try await Task.sleep(for: .milliseconds(50))
            }
            Issue.record("\(sql) never became \(expected) (last: \(try await count(sql)))", sourceLocation: sourceLocation)
        }
    }

    /// What a new user sees first, at 80×24: the walk-through customers with what to try (Diego
    /// among them), the generated history behind a filter with its position marker in cells of its
    /// own, and on a page of buttons the one Enter presses is marked in the text itself.
    @Test func theFirstScreenNamesDiegoAndShowsWhatEnterPresses() async throws {
        let terminal = try Terminal()
        defer { Task { await terminal.stop() } }
        try await terminal.start()
        try await terminal.waitFor(" customers \u{00B7} page 1 of")
        try await terminal.waitFor("Diego Ram\u{00ED}rez")
        let first = try await terminal.screen()
        #expect(first.contains("Try: the App Store cancel flow"), "\(first)")
        let rows = first.split(separator: "\n")
        let lastStory = try #require(rows.lastIndex { $0.contains("Try: ") }), firstHistory = rows.firstIndex { $0.contains("cus_hist_") }
        #expect(rows.filter { $0.contains("Try: ") }.count == 16 && firstHistory.map { $0 > lastStory } != false,
                "the sixteen stories come first, the generated history after them:\n\(first)")
        // The list, then the filter: all → the stories → the generated history.
        try await terminal.keys("Down", "f")
        try await terminal.waitFor("16 demo stories")
        try await terminal.keys("f")
        try await terminal.waitFor("generated customers \u{00B7} page 1 of")
        // The footer names the filter at once; the page follows when it has loaded.
        try await terminal.waitFor(" of 20")
        let history = try await terminal.screen()
        let marked = history.split(separator: "\n").filter { $0.contains(/\d+\u{2013}\d+ of \d+\s*$/) }
        #expect(marked.count == 1, "one position marker:\n\(history)")
        #expect(marked.allSatisfy { $0.contains(/\ \d+\u{2013}\d+ of \d+\s*$/) }, "the marker overwrites no text: \(marked)")
        let ids = history.matches(of: /cus_hist_\d{4}/).map { String($0.output) }
        #expect(ids.count > 10 && Set(ids).count == ids.count, "ids shown whole and distinct: \(ids)")
        // Back to everyone, and into Ava's save offer: Enter's button is marked before any arrow.
        try await terminal.keys("f", "Tab")
        try await terminal.type("ava")
        try await terminal.waitFor("1 customer ")
        try await terminal.keys("Enter")
        try await terminal.waitFor("1 Cancel flow (Premium Monthly)")
        try await terminal.keys("c")
        try await terminal.waitFor("What's the main reason")
        try await terminal.keys("1", "Enter")
        try await terminal.waitFor("[\u{25B8}Stay & save 40%\u{25C2}]  [ No thanks ]")
        try await terminal.keys("Tab")
        try await terminal.waitFor("[ Stay & save 40% ]  [\u{25B8}No thanks\u{25C2}]")
        try await terminal.keys("?")
        try await terminal.waitFor("\u{2500} Keys \u{2500}")
        let help = try await terminal.screen()
        let escapes = help.split(separator: "\n").filter { $0.contains(/(^|\s)Esc\s/) }
        #expect(escapes.count == 1, "Esc is listed once:\n\(help)")
        try await terminal.keys("C-c")
        try await terminal.waitFor("EXIT=130")
    }

    @Test func aFullCancelFlowAnswersDeclinesTheOfferAndPausesOneMonth() async throws {
        let terminal = try Terminal()
        defer { Task { await terminal.stop() } }
        try await terminal.start()
        try await terminal.waitFor(" customers \u{00B7} page 1 of")
        #expect(try await terminal.screen().contains("TEST"))
        try await terminal.type("ava")
        try await terminal.waitFor("1 customer ")
        try await terminal.keys("Enter")
        try await terminal.waitFor("Ava Thompson (cus_ava)")
        // The overview has loaded (its actions are listed) before the agent acts.
        try await terminal.waitFor("1 Cancel flow (Premium Monthly)")
        try await terminal.keys("c")
        try await terminal.waitFor("What's the main reason you want to cancel? *")
        try await terminal.keys("3", "Enter")
        try await terminal.waitFor("How long have you been reading with us?")
        try await terminal.keys("3", "Enter")
        try await terminal.waitFor("Anything we could have done better?")
        try await terminal.type("more comics")
        try await terminal.keys("Enter")
        try await terminal.waitFor("Before you go: 40% off")
        #expect(try await terminal.screen().contains("$7.99/month  \u{2192}  with the offer $4.79/month"))
        try await terminal.keys("n")
        try await terminal.waitFor("Need a break?")
        #expect(try await terminal.screen().contains("(\u{2022})   1 month"))
        try await terminal.keys("Enter")
        try await terminal.waitFor("Paused until")
        try await terminal.eventually("SELECT count(*) AS n FROM subscriptions WHERE customer_id = 'cus_ava' AND status = 'paused'", equals: 1)
        try await terminal.eventually(
            "SELECT count(*) AS n FROM cancel_flow_responses WHERE customer_id = 'cus_ava' AND outcome = 'paused' AND offer_shown = 1 AND offer_accepted = 0 AND pause_accepted = 1 AND pause_duration_days = 30",
            equals: 1)
        try await terminal.keys("Enter")
        try await terminal.waitFor("Paused \u{00B7} resumes")
        // Resizes at any time: too small says so, and back again the screen is whole.
        try await terminal.tmux(["resize-window", "-t", "demo", "-x", "50", "-y", "15"])
        try await terminal.waitFor("Enlarge the window to at least 60\u{00D7}18")
        try await terminal.tmux(["resize-window", "-t", "demo", "-x", "100", "-y", "30"])
        try await terminal.waitFor("Paused \u{00B7} resumes")
        try await terminal.keys("q")
        try await terminal.waitFor("EXIT=0")
    }

    @Test func aFullSwitchAndSaveFlow() async throws {
        let terminal = try Terminal()
        defer { Task { await terminal.stop() } }
        try await terminal.start()
        try await terminal.waitFor(" customers \u{00B7} page 1 of")
        try await terminal.type("chloe")
        try await terminal.waitFor("1 customer ")
        try await terminal.keys("Enter")
        try await terminal.waitFor("Switch and save: eligible")
        try await terminal.keys("s")
        try await terminal.waitFor("Save 20% by paying on the web")
        try await terminal.waitFor("Premium Monthly: $9.99/month on the App Store \u{2192} $6.39/month on the web")
        try await terminal.keys("Enter")
        try await terminal.waitFor("Waiting for the customer to pay")
        #expect(try await terminal.screen().contains("/checkout/txn_"))
        try await terminal.keys("p")
        try await terminal.waitFor("Read these steps to the customer to cancel Apple billing")
        try await terminal.keys("o")
        try await terminal.waitFor("You're all set!")
        try await terminal.eventually(
            "SELECT count(*) AS n FROM subscriptions WHERE customer_id = 'cus_chloe' AND source = 'web' AND trial_type = 'migration'", equals: 1)
        try await terminal.eventually("SELECT count(*) AS n FROM subscriptions WHERE customer_id = 'cus_chloe' AND source = 'app_store' AND will_renew = 0", equals: 1)
        try await terminal.keys("q")
        try await terminal.waitFor("EXIT=0")
    }

    /// A new agent with Diego (App Store), who finds it too expensive: the switch is the save offer,
    /// with prices; he pays, turns off Apple's renewal, and the customer screen says he is active
    /// on the web. Under 25 keys, every one counted.
    @Test func anAppStoreSubscriberSwitchesAndSavesInTheCancelFlow() async throws {
        let terminal = try Terminal()
        defer { Task { await terminal.stop() } }
        try await terminal.openCancelFlow(searching: "diego")
        try await terminal.keys("1", "Enter")
        try await terminal.waitFor("Save 20% by paying on the web")
        #expect(try await terminal.screen().contains("Premium Monthly: $9.99/month on the App Store \u{2192} $6.39/month on the"))
        #expect(try await terminal.screen().contains("bridged: no double charge"))
        try await terminal.keys("y")
        try await terminal.waitFor("Waiting for the customer to pay")
        try await terminal.keys("p")
        try await terminal.waitFor("Read these steps to turn off Apple billing:")
        try await terminal.waitFor("waiting for Apple")
        try await terminal.keys("o")
        try await terminal.waitFor("switched to the web \u{00B7} completed")
        try await terminal.keys("Escape")
        try await terminal.waitFor("Active on the web \u{00B7} Premium Monthly \u{00B7} Migration trial")
        let banners = try await terminal.screen().split(separator: "\n").filter { $0.contains("\u{25B2}") }
        #expect(!banners.contains { $0.contains("Cancels on") }, "the App Store winding down is not the customer cancelling: \(banners)")
        #expect(terminal.pressed.value < 25, "\(terminal.pressed.value) keys")
        try await terminal.eventually(
            "SELECT count(*) AS n FROM cancel_flow_responses WHERE customer_id = 'cus_diego' AND outcome = 'retained' AND offer_shown = 1 AND offer_accepted = 1 AND pause_shown = 0",
            equals: 1)
        try await terminal.eventually("SELECT count(*) AS n FROM migration_conversions WHERE customer_id = 'cus_diego'", equals: 1)
        try await terminal.eventually(
            "SELECT count(*) AS n FROM subscriptions WHERE customer_id = 'cus_diego' AND source = 'web' AND trial_type = 'migration'", equals: 1)
        try await terminal.keys("q")
        try await terminal.waitFor("EXIT=0")
    }

    /// Diego needs a break: Apple has no pause, and the page says so and shows the switch; he
    /// declines, the steps are read out, the flow waits for Apple, and a simulated auto-renew-off
    /// notification confirms it, on the customer screen too. Under 25 keys.
    @Test func anAppStoreCancellationIsReadOutThenConfirmedByApple() async throws {
        let terminal = try Terminal()
        defer { Task { await terminal.stop() } }
        try await terminal.openCancelFlow(searching: "diego")
        try await terminal.keys("2", "Enter")
        try await terminal.waitFor("Apple has no pause: Premium Monthly is billed by the App Store")
        #expect(try await terminal.screen().contains("Save 20% by paying on the web"), "what is available is shown")
        try await terminal.keys("n")
        try await terminal.waitFor("Cancelling is the customer's own step")
        #expect(try await terminal.screen().contains("4. Tap Cancel Subscription, then confirm."))
        try await terminal.keys("Enter")
        try await terminal.waitFor("Cancelled \u{00B7} waiting for Apple")
        try await terminal.waitFor("waiting for Apple to confirm")
        try await terminal.keys("o")
        try await terminal.waitFor("Cancelled \u{00B7} confirmed by Apple")
        try await terminal.keys("Escape")
        try await terminal.waitFor("Premium Monthly: cancellation read out on")
        try await terminal.waitFor("confirmed by Apple on")
        #expect(terminal.pressed.value < 25, "\(terminal.pressed.value) keys")
        try await terminal.eventually(
            "SELECT count(*) AS n FROM cancel_flow_responses WHERE customer_id = 'cus_diego' AND outcome = 'cancelled' AND offer_shown = 1 AND offer_accepted = 0 AND pause_shown = 0",
            equals: 1)
        try await terminal.eventually("SELECT count(*) AS n FROM appstore_cancellations WHERE customer_id = 'cus_diego' AND confirmed_at IS NOT NULL", equals: 1)
        try await terminal.keys("q")
        try await terminal.waitFor("EXIT=0")
    }

    @Test func sigintMidFlowLeavesTheTerminalSaneAndRecordsTheFlow() async throws {
        let terminal = try Terminal()
        defer { Task { await terminal.stop() } }
        try await terminal.start()
        try await terminal.waitFor(" customers \u{00B7} page 1 of")
        try await terminal.type("ava")
        try await terminal.waitFor("1 customer ")
        try await terminal.keys("Enter")
        try await terminal.waitFor("Ava Thompson (cus_ava)")
        // The overview has loaded (its actions are listed) before the agent acts.
        try await terminal.waitFor("1 Cancel flow (Premium Monthly)")
        try await terminal.keys("c")
        try await terminal.waitFor("What's the main reason")
        try await terminal.keys("1", "Enter")
        try await terminal.waitFor("Before you go")
        try await terminal.keys("C-c")
        try await terminal.waitFor("EXIT=130")
        var stty = ""
        for _ in 0..<100 where stty.isEmpty {
            stty = (try? String(contentsOf: terminal.sttyFile, encoding: .utf8)) ?? ""
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(stty.contains(" icanon") && stty.contains(" echo ") && !stty.contains("-icanon") && !stty.contains(" -echo "), "\(stty)")
        // The flow left mid-way is recorded as dismissed, with the answer given.
        let rows = try await terminal.query("SELECT outcome, answers, offer_shown FROM cancel_flow_responses WHERE customer_id = 'cus_ava'")
        #expect(rows.count == 1)
        #expect(try rows.first?.decode(column: "outcome", as: String.self) == "dismissed")
    }

    /// Two consoles (two processes) on one server: each sees the other on Diego; the customer pays
    /// and turns off Apple's renewal from elsewhere, and the agent's flow moves on with no key.
    @Test func twoConsolesFollowTheCustomerWithNoKeyPressed() async throws {
        let terminal = try Terminal()
        defer { Task { await terminal.stop() } }
        let serverDirectory = terminal.directory.appendingPathComponent("server")
        try FileManager.default.createDirectory(at: serverDirectory, withIntermediateDirectories: true)
        let config = try ConfigReader.load(file: try #require(DemoSeed.demoConfigPath))
        let database = serverDirectory.appendingPathComponent("savedesk.sqlite").path
        _ = try await DemoSeed.apply(file: try #require(DemoSeed.demoSeedPath), config: config, databasePath: database)
        let running = try await SaveDeskBackend.start(
            config: config, databasePath: database, options: .init(dataDirectory: serverDirectory.path),
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        )
        defer { Task { await running.stop() } }
        try await terminal.startConsole("marco", server: running.baseURL, key: "sk_test_savedesk_demo_marco_0001")
        try await terminal.startConsole("priya", server: running.baseURL, key: "sk_test_savedesk_demo_priya_0001")
        for session in ["marco", "priya"] {
            try await terminal.waitFor(" customers \u{00B7} page 1 of", in: session)
            try await terminal.waitFor("\u{21BB} live", in: session)
            try await terminal.type("diego", in: session)
            try await terminal.waitFor("1 customer ", in: session)
            try await terminal.keys("Enter", in: session)
            try await terminal.waitFor("1 Cancel flow (Premium Monthly)", in: session)
        }
        try await terminal.waitFor("Priya (support lead) is also on this customer", in: "marco")
        try await terminal.waitFor("Marco (support) is also on this customer", in: "priya")

        // Marco offers Diego the switch; Priya sees what he is doing.
        try await terminal.keys("c", in: "marco")
        try await terminal.waitFor("What's the main reason you want to cancel? *", in: "marco")
        try await terminal.keys("1", "Enter", in: "marco")
        try await terminal.waitFor("Save 20% by paying on the web", in: "marco")
        try await terminal.keys("y", in: "marco")
        try await terminal.waitFor("Waiting for the customer to pay", in: "marco")
        try await terminal.waitFor("Marco (support) is also on this customer (in a cancel flow)", in: "priya")

        // Diego pays on his phone: the flow moves to Apple's steps, Marco presses nothing.
        let store = try await Store.open(path: database, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let pending = try await store.exclusive { db in
            try await db.raw("SELECT id FROM checkout_transactions WHERE customer_id = 'cus_diego' AND status = 'pending'").all()
                .map { try $0.decode(column: "id", as: String.self) }
        }
        await store.close()
        let customer = SaveDeskClient(serverURL: URL(string: running.baseURL)!, key: "sk_test_savedesk_demo_priya_0001")
        let before = terminal.pressed.value
        _ = try await customer.simulateCheckout(transactionId: try #require(pending.first), outcome: .paid)
        let paid = try await terminal.waitFor("Read these steps to turn off Apple billing:", in: "marco")
        try await terminal.waitFor("waiting for Apple", in: "marco")
        // Then he turns off Apple's renewal in Settings: the App Store reports it, the flow says so.
        let original = try #require(try await customer.appStoreOriginalTransactionId(userId: "cus_diego", activeOnly: false))
        _ = try await customer.simulateAppStoreEvent(originalTransactionId: original, event: .autoRenewOff)
        let completed = try await terminal.waitFor("switched to the web \u{00B7} completed", in: "marco")
        #expect(terminal.pressed.value == before, "no key was pressed while the customer acted")
        print("two consoles: paid → Apple steps on Marco's screen in \(paid), renewal off → completed in \(completed) (tmux polled every 20 ms)")
        for session in ["priya", "marco"] {
            try await terminal.keys("q", in: session)
            try await terminal.waitFor("EXIT=0", in: session)
        }
        await terminal.stop()
    }
}
