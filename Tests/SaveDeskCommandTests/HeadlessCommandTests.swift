import Foundation
import RetentionDomain
import SaveDeskClient
import Testing

/// Every headless command against an in-process server: golden JSON for the success paths, the
/// exit code and message for each class of error.
@Suite("savedesk headless commands")
struct HeadlessCommandTests {
    @Test func cancelFlowAcceptingTheOffer() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let result = try await server.run(["flow", "cancel", "--user", "cus_ava", "--product", "premium_monthly",
                                           "--answer", "1=11", "--accept-offer", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        try Golden.check(result.stdout, "flow-cancel-retained.json")
        #expect(result.stderr.isEmpty, "the response was delivered before the command ended")
    }

    @Test func cancelFlowDecliningAndPausing() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let result = try await server.run(["flow", "cancel", "--user", "cus_ava", "--product", "premium_monthly",
                                           "--answer", "1=13", "--answer", "2=23", "--answer", "3=  more comics please ",
                                           "--pause-option", "1", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        try Golden.check(result.stdout, "flow-cancel-paused.json")
        let human = try await server.run(["flow", "cancel", "--user", "cus_farah", "--product", "basic_monthly", "--dry-run",
                                          "--answer", "1=14", "--cancel"])
        #expect(human.status == 0 && human.stdout.contains("Outcome: cancelled · dry run"), "\(human.stdout)")
    }

    @Test func cancelFlowDryRunChangesNothing() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let result = try await server.run(["flow", "cancel", "--user", "cus_ava", "--product", "premium_monthly",
                                           "--answer", "1=13", "--cancel", "--immediate", "--dry-run", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        try Golden.check(result.stdout, "flow-cancel-dry-run.json")
        let analytics = try await server.run(["analytics", "cancel-flow", "--json"])
        #expect(analytics.stdout.contains(#""total" : 0"#), "no response was recorded")
    }

    /// Diego, billed by the App Store, says it is too expensive: switch and save is the save offer;
    /// he pays the web checkout, turns off Apple's renewal, and the switch completes.
    @Test func appStoreCancelFlowEndsInSwitchAndSave() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let result = try await server.run(["flow", "cancel", "--user", "cus_diego", "--product", "premium_monthly",
                                           "--answer", "1=11", "--switch", "--pay", "--apple-cancelled", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        try Golden.check(result.stdout, "flow-cancel-app-store-switch.json")
        let funnel = try await server.run(["analytics", "switch-and-save", "--json"])
        #expect(funnel.stdout.contains(#""conversions" : 1"#) && funnel.stdout.contains(#""completed" : 1"#), "\(funnel.stdout)")
        let flows = try await server.run(["analytics", "cancel-flow", "--json"])
        #expect(flows.stdout.contains(#""retained" : 1"#) && flows.stdout.contains(#""total" : 1"#), "one response: \(flows.stdout)")
        let human = try await server.run(["customers", "show", "cus_diego"])
        #expect(human.stdout.contains("Migration trial"), "\(human.stdout)")
    }

    /// Diego needs a break: Apple has no pause, so the switch is offered instead; he declines and
    /// cancels: the steps are read out, and Apple's auto-renew-off notification confirms it.
    @Test func appStoreCancelFlowEndsWithACancellationAppleConfirms() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let result = try await server.run(["flow", "cancel", "--user", "cus_diego", "--product", "premium_monthly",
                                           "--answer", "1=12", "--cancel", "--apple-cancelled", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        try Golden.check(result.stdout, "flow-cancel-app-store-cancelled.json")
        let flows = try await server.run(["analytics", "cancel-flow", "--json"])
        #expect(flows.stdout.contains(#""confirmed" : 1"#) && flows.stdout.contains(#""read_out" : 1"#), "\(flows.stdout)")
        // Without the customer's part it stays waiting for Apple.
        let waiting = try await server.run(["flow", "cancel", "--user", "cus_chloe", "--product", "premium_monthly",
                                            "--answer", "1=14", "--cancel"])
        #expect(waiting.status == 0 && waiting.stdout.contains("waiting for Apple to confirm"), "\(waiting.stdout)")
        // Nora is too new for switch and save: her save offer is an App Store offer code.
        let nora = try await server.run(["flow", "cancel", "--user", "cus_nora", "--product", "premium_monthly",
                                         "--answer", "1=11", "--offer-code", "--json"])
        #expect(nora.status == 0 && nora.stdout.contains(#""offer_code" : "READERSTAY01""#), "\(nora.stdout) \(nora.stderr)")
    }

    @Test func switchAndSaveAllTheWay() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let result = try await server.run(["flow", "switch", "--user", "cus_chloe", "--pay", "--apple-cancelled", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        try Golden.check(result.stdout, "flow-switch-completed.json")
        let ineligible = try await server.run(["flow", "switch", "--user", "cus_nora", "--json"])
        try Golden.check(ineligible.stdout, "flow-switch-ineligible.json")
        let funnel = try await server.run(["analytics", "switch-and-save", "--json"])
        try Golden.check(funnel.stdout, "analytics-switch-and-save.json")
        // Apple's cancel page: nothing asked yet, every row says so.
        let page = try await server.run(["analytics", "cancel-page"])
        #expect(page.status == 0, "\(page.stderr)")
        #expect(page.stdout.contains("holdout (no answer)") && page.stdout.contains("SAVE RATE"), "\(page.stdout)")
    }

    @Test func customersListShowAnalyticsAndClock() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let list = try await server.run(["customers", "list", "--query", "example", "--per-page", "3", "--json"])
        #expect(list.status == 0)
        try Golden.check(list.stdout, "customers-list.json")
        let show = try await server.run(["customers", "show", "cus_olivia", "--json"])
        try Golden.check(show.stdout, "customers-show.json")
        let table = try await server.run(["customers", "list"])
        #expect(table.stdout.split(separator: "\n").first?.hasPrefix("ID          NAME") == true, "aligned columns: \(table.stdout)")
        #expect(!table.stdout.contains("\u{1B}["), "no colour when stdout is not a terminal")
        _ = try await server.run(["flow", "cancel", "--user", "cus_ava", "--product", "premium_monthly", "--answer", "1=13", "--cancel"])
        let analytics = try await server.run(["analytics", "cancel-flow", "--from", "2026-11-01", "--operator", "Marco (support)", "--json"])
        try Golden.check(analytics.stdout, "analytics-cancel-flow.json")
        let clock = try await server.run(["clock", "advance", "--days", "10", "--json"])
        try Golden.check(clock.stdout, "clock-advance.json")
    }

    @Test func errorsHaveTheirExitCodesAndSayWhy() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        func expectFailure(_ arguments: [String], status: Int32, _ message: String, environment: [String: String?] = [:],
                           sourceLocation: SourceLocation = #_sourceLocation) async throws {
            let result = try await server.run(arguments, environment: environment)
            #expect(result.status == status, "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)", sourceLocation: sourceLocation)
            #expect(result.stdout.isEmpty || !result.stdout.contains("{"), "no JSON document on failure", sourceLocation: sourceLocation)
        }
        // Bad key, no key, publishable key.
        try await expectFailure(["customers", "list", "--key", "sk_test_not_a_known_key_01"], status: 4, "this API key is not known")
        try await expectFailure(["customers", "list"], status: 4, "no API key", environment: ["SAVEDESK_KEY": nil])
        try await expectFailure(["customers", "list", "--key", "pk_test_savedesk_demo_app_0001"], status: 4, "secret operator key")
        // Unknown user.
        try await expectFailure(["customers", "show", "cus_nobody"], status: 5, "no customer with id \"cus_nobody\"")
        try await expectFailure(["flow", "cancel", "--user", "cus_nobody", "--product", "premium_monthly", "--cancel"], status: 5, "cus_nobody")
        // Invalid answers, each naming the id.
        let cancel = ["flow", "cancel", "--user", "cus_ava", "--product", "premium_monthly"]
        try await expectFailure(cancel + ["--answer", "9=1", "--cancel"], status: 2, "no question 9 in this cancel flow (questions: 1, 2, 3)")
        try await expectFailure(cancel + ["--answer", "1=99", "--cancel"], status: 2, "question 1 has no option \"99\"")
        try await expectFailure(cancel + ["--cancel"], status: 2, "question 1 (What's the main reason you want to cancel?) needs an answer")
        try await expectFailure(cancel + ["--answer", "1=12", "--accept-offer"], status: 2, "option 12 of question 1 (I need a break for a while) leads to the pause")
        try await expectFailure(cancel + ["--answer", "1=11", "--answer", "2=21", "--cancel"], status: 2,
                                "question 2 is not asked on this path: option 11 of question 1 goes straight to the save offer")
        try await expectFailure(cancel + ["--answer", "1=13", "--pause-option", "7"], status: 2, "no pause option 7")
        try await expectFailure(cancel + ["--answer", "1=13"], status: 2, "choose exactly one ending")
        try await expectFailure(cancel + ["--answer", "1=13", "--cancel", "--immediate", "--no-input"], status: 2, "Pass --yes")
        // Endings that do not fit who bills the customer, each saying why and what fits.
        let diego = ["flow", "cancel", "--user", "cus_diego", "--product", "premium_monthly"]
        try await expectFailure(diego + ["--answer", "1=11", "--accept-offer"], status: 2,
                                "cus_diego's Premium Monthly is billed by the App Store: a coupon cannot apply to an App Store subscription; its save offer is switch and save: use --switch")
        try await expectFailure(diego + ["--answer", "1=12", "--pause-days", "30"], status: 2, "Apple has no pause")
        try await expectFailure(diego + ["--answer", "1=11", "--offer-code"], status: 2, "--offer-code does not fit")
        try await expectFailure(diego + ["--answer", "1=13", "--cancel", "--immediate", "--yes"], status: 2, "drop --immediate")
        try await expectFailure(cancel + ["--answer", "1=11", "--switch"], status: 2,
                                "--switch does not fit: cus_ava's Premium Monthly is billed on the web, and its save offer is the coupon: use --accept-offer")
        try await expectFailure(cancel + ["--answer", "1=11", "--accept-offer", "--pay"], status: 2, "--pay goes with --switch")
        // Live key on a test-only command.
        // (Live keys live on a server without test tooling.)
        let live = try await CommandRunner.start(live: true)
        defer { Task { await live.stop() } }
        try await expectFailure(["clock", "advance", "--days", "1", "--key", CommandRunner.liveKey, "--server", live.running.baseURL],
                                status: 4, "test-mode key")
        try await expectFailure(["flow", "switch", "--user", "cus_chloe", "--pay", "--key", CommandRunner.liveKey, "--server", live.running.baseURL],
                                status: 4, "test-mode key")
        // Server down.
        try await expectFailure(["customers", "list", "--server", "http://127.0.0.1:9"], status: 1, "could not be reached")
        // Nothing changed for Ava along the way.
        let ava = try await server.run(["customers", "show", "cus_ava", "--json"])
        #expect(ava.stdout.contains(#""state" : "active""#))
    }

    @Test func flagBeatsEnvironmentBeatsProfile() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let config = server.directory.appendingPathComponent("config/savedesk")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try """
        default_profile = "demo"
        [profiles.demo]
        server = "\(server.running.baseURL)"
        key = "\(CommandRunner.operatorKey)"
        [profiles.broken]
        server = "http://127.0.0.1:9"
        key = "\(CommandRunner.operatorKey)"
        """.write(to: config.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
        let none: [String: String?] = ["SAVEDESK_SERVER": nil, "SAVEDESK_KEY": nil]
        // The file holds keys: readable by others, it gets a warning; private, none.
        chmod(config.appendingPathComponent("config.toml").path, 0o644)
        let open = try await server.run(["customers", "list"], environment: none)
        #expect(open.status == 0 && open.stderr.contains("holds API keys and can be read by other users"))
        chmod(config.appendingPathComponent("config.toml").path, 0o600)
        #expect(try await server.run(["customers", "list"], environment: none).stderr.isEmpty)
        #expect(try await server.run(["customers", "list"], environment: none).status == 0, "the default profile")
        #expect(try await server.run(["customers", "list", "--profile", "broken"], environment: none).status == 1, "the named profile")
        #expect(try await server.run(["customers", "list"], environment: ["SAVEDESK_PROFILE": "broken", "SAVEDESK_KEY": nil]).status == 0,
                "SAVEDESK_SERVER beats the profile's server")
        let flag = try await server.run(["customers", "list", "--key", "sk_test_not_a_known_key_01"])
        #expect(flag.status == 4, "--key beats SAVEDESK_KEY")
        let unknown = try await server.run(["customers", "list", "--profile", "nope"], environment: none)
        #expect(unknown.status == 2 && unknown.stderr.contains("no profile \"nope\"") && unknown.stderr.contains("profiles: broken, demo"))
        try "[profiles.demo]\nservr = \"x\"\n".write(to: config.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
        let bad = try await server.run(["customers", "list"], environment: none)
        #expect(bad.status == 2 && bad.stderr.contains("unknown key profiles.demo.servr"))
    }

    @Test func whatAnEarlierCommandLeftInTheOutboxGoesWithTheNextOne() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        // A response an earlier run could not deliver (the server was down), waiting on disk in
        // the outbox of this server and key.
        let outbox = try Outbox(directory: Outbox.folder(
            in: server.directory.appendingPathComponent("state/savedesk/outbox"), serverURL: try #require(URL(string: server.running.baseURL)),
            key: CommandRunner.operatorKey))
        try outbox.enqueue(.cancelFlowResponse, body: CancelFlow.Response(
            productId: "premium_monthly", userId: "cus_ben", outcome: .dismissed, answers: [], offerShown: false,
            offerAccepted: false, lastStepSeen: 0))
        let list = try await server.run(["customers", "list", "--json"])
        #expect(list.status == 0 && list.stderr.isEmpty, "\(list.stderr)")
        #expect(outbox.pending().isEmpty)
        let analytics = try await server.run(["analytics", "cancel-flow", "--json"])
        #expect(analytics.stdout.contains(#""dismissed" : 1"#), "\(analytics.stdout)")
    }

    @Test func serverStringsAreShownNeverObeyed() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        // A name with a terminal title change, a bell, a cursor move and a right-to-left override.
        let evil = "Eve\u{1B}]0;pwned\u{07}\u{1B}[2J\u{202E}lyn\nFake line"
        try await server.insertCustomer(id: "cus_evil", name: evil)
        for arguments in [["customers", "show", "cus_evil"], ["customers", "list", "--query", "evil"]] {
            let result = try await server.run(arguments)
            #expect(result.status == 0)
            #expect(!result.stdout.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(arguments)")
            #expect(!result.stdout.unicodeScalars.contains { (0x7F..<0xA0).contains($0.value) || $0 == "\u{202E}" })
            #expect(result.stdout.contains("Eve]0;pwned[2Jlyn Fake line"), "\(result.stdout)")
        }
        // JSON keeps the data as it is (escaped by JSON itself).
        let json = try await server.run(["customers", "show", "cus_evil", "--json"])
        #expect(json.stdout.contains(#"Eve\u001b]0;pwned\u0007"#))
    }

    /// `savedesk customers add|update`: an operator's own customer, through the Desk API.
    @Test func customersAddAndUpdate() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let added = try await server.run(["customers", "add", "new-reader", "--name", "New Reader", "--email", "new@example.com", "--country", "gb",
                                          "--app-store-original-transaction-id", "2000000999000200"])
        #expect(added.status == 0 && added.stdout.contains("Added new-reader (New Reader)"), "\(added.stderr)")
        let again = try await server.run(["customers", "add", "new-reader"])
        #expect(again.status != 0 && again.stderr.contains("exists"), "\(again.stderr)")
        let bad = try await server.run(["customers", "update", "new-reader", "--email", "not-an-email"])
        #expect(bad.status != 0 && bad.stderr.contains("not an email address"), "\(bad.stderr)")
        let updated = try await server.run(["customers", "update", "new-reader", "--email", "reader@example.com"])
        #expect(updated.status == 0, "\(updated.stderr)")
        let shown = try await server.run(["customers", "show", "new-reader"])
        #expect(shown.stdout.contains("reader@example.com") && shown.stdout.contains("GB"), "\(shown.stdout)")
    }

    /// `savedesk events tail`: what the stream carries, resumed from an event id, as lines or JSON
    /// Lines, with the usual exit codes.
    @Test func eventsTailPrintsWhatHappened() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        _ = try await server.run(["customers", "add", "tail-reader", "--name", "Tail Reader"])
        _ = try await server.run(["customers", "update", "tail-reader", "--email", "tail@example.com"])
        let json = try await server.run(["events", "tail", "--customer", "tail-reader", "--after", "0", "--count", "2", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        let lines = json.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(json.stdout)")
        struct Line: Decodable {
            struct Data: Decodable { var id: Int64; var customer_id: String; var actor: String }
            var event: String
            var data: Data
        }
        let parsed = try lines.map { try JSONDecoder().decode(Line.self, from: Data($0.utf8)) }
        #expect(parsed.map(\.event) == ["customer.created", "customer.updated"])
        #expect(parsed.allSatisfy { $0.data.customer_id == "tail-reader" && $0.data.actor == "Marco (support)" })
        #expect(parsed[0].data.id < parsed[1].data.id)

        let text = try await server.run(["events", "tail", "--customer", "tail-reader", "--after", "\(parsed[0].data.id)", "--count", "1"])
        #expect(text.status == 0 && text.stdout.contains("Marco (support) updated the customer  (customer.updated)"), "\(text.stdout)")

        let refused = try await server.run(["events", "tail"], environment: ["SAVEDESK_KEY": "pk_test_savedesk_demo_app_0001"])
        #expect(refused.status == 4 && refused.stderr.contains("secret"), "\(refused.stderr)")
    }
}
