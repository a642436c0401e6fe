import Foundation
import TestSupport
import Testing

@testable import SaveDeskServer

@Suite("Config validation")
struct ConfigValidationTests {
    static func path(_ name: String) throws -> String {
        try #require(Bundle.module.path(forResource: name, ofType: "toml", inDirectory: "Configs"))
    }

    func issues(_ name: String) throws -> [String] {
        let file = try Self.path(name)
        do {
            _ = try ConfigReader.load(file: file)
            Issue.record("\(name) was accepted")
            return []
        } catch {
            return error.issues.map(\.description)
        }
    }

    @Test func theDemoConfigIsValid() throws {
        let config = try TestServer.demoConfig()
        #expect(config.products.count == 3)
        #expect(config.cancelFlow.offerTerms == .discount(percent: 40, duration: .repeating(months: 3)))
        #expect(config.cancelFlow.defaultPauseOptionId == 1)
        #expect(config.campaign?.rolloutPercent == 70)
        #expect(config.apiKeys.map(\.actor) == ["app", "Marco (support)", "Priya (support lead)"])
        #expect(config.tiers.change(from: "basic_monthly", to: "premium_monthly") == .upgrade)
    }

    @Test func everyErrorIsNamedByPath() throws {
        let found = try issues("broken-everything")
        let expected = [
            "products[0].interval: must be week, month or year, got \"fortnight\"",
            "products[0].web_price: expected a price such as \"7.99\", got \"7.9x\"",
            "products[1].id: duplicate product id \"premium_monthly\"",
            "products[1].interval: missing",
            "products[1].web_price: write the price as text, such as \"7.99\" (got floating-point number)",
            "cancel_flow.colour: unknown key",
            "cancel_flow.offer.value: a discount must be 1–100 percent, got 140",
            "cancel_flow.app_store_offer.offer_codes[1]: an offer code is 1–64 letters, digits, - or _, got \"STAY 2\"",
            "cancel_flow.app_store_offer.body: missing",
            "cancel_flow.app_store_offer.cta_text: missing",
            "cancel_flow.pause.options[0]: needs exactly one of days or resume_date",
            "cancel_flow.pause.default_option: there is no pause option 7",
            "cancel_flow.questions[2].options[0]: triggers both offer and pause",
            "cancel_flow.questions[2].options[1].id: duplicate option id 1",
            "cancel_flow.questions[2].options[1]: triggers the pause, but pause is not enabled",
            "cancel_flow.questions[3].id: duplicate question id 3",
            "cancel_flow.questions[3].type: must be single_select or free_text, got \"stars\"",
            "switch_and_save.eligible_product_ids[1]: no product \"gold\" in products",
            "switch_and_save.max_subscription_days: must not be below min_subscription_days (60)",
            "switch_and_save.rollout_percent: must be between 0 and 100, got 150",
            "api_keys[0].key: must start with pk_test_, pk_live_, zs_pk_test_, zs_pk_live_, sk_test_ or sk_live_",
            "api_keys[1].operator: a secret key needs the operator name it acts as",
            "win_back.offer_codes[1]: duplicate offer code \"BACK1\"",
            "win_back.offer_codes[2]: an offer code is 1–64 letters, digits, - or _, got \"no spaces allowed\"",
            "win_back.discount_percent: must be between 1 and 100, got 0",
        ]
        for line in expected {
            #expect(found.contains(line), "missing: \(line)\nfound:\n\(found.joined(separator: "\n"))")
        }
        #expect(found.count == expected.count, "\(found.joined(separator: "\n"))")
    }

    /// Apple's cancel page: rules name messages and products that exist, an alternate product of
    /// the same group, a key for promotional offers that is the server's alone.
    @Test func retentionMessagingIsCheckedAsAWhole() throws {
        let demo = try String(contentsOfFile: try #require(DemoSeed.demoConfigPath), encoding: .utf8)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-config-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.appendingPathComponent("key.p8").path
        FileManager.default.createFile(atPath: key, contents: Data("not read by the reader".utf8), attributes: [.posixPermissions: 0o644])
        var text = demo.replacingOccurrences(of: "local_ca = true", with: "local_ca = false\ntrusted_roots = [\"\(key)\"]")
        text = text.replacingOccurrences(of: "signing_key_id = \"DEMOKEY001\"", with: "signing_key_id = \"DEMOKEY001\"\nsigning_key_file = \"\(key)\"")
        text = text.replacingOccurrences(of: "default_message = \"stay_for_stories\"", with: "default_message = \"missing\"")
        text = text.replacingOccurrences(of: "product_ids = [\"premium_monthly\"]", with: "product_ids = [\"gold\"]")
        text = text.replacingOccurrences(of: "\"en-US\" = \"a7e3c1d2-4b5f-4e6a-9c8d-2f1e0b3a4c21\"", with: "\"en-US\" = \"not-a-uuid\"")
        do {
            _ = try ConfigReader.parse(text)
            Issue.record("accepted")
        } catch {
            let found = error.issues.map(\.description).joined(separator: "\n")
            #expect(found.contains("app_store.retention_messaging.signing_key_file: \(key) is readable by others"), "\(found)")
            #expect(found.contains("app_store.retention_messaging.default_message: no message \"missing\" in messages"), "\(found)")
            #expect(found.contains("app_store.retention_messaging.rules[0].product_ids: no product \"gold\" in the catalog"), "\(found)")
            #expect(found.contains("is a UUID, got \"not-a-uuid\""), "\(found)")
        }
        // A promotional offer with no key file and no local CA has nothing to sign with.
        let unsigned = demo.replacingOccurrences(of: "local_ca = true", with: "local_ca = false\ntrusted_roots = [\"\(key)\"]")
        do {
            _ = try ConfigReader.parse(unsigned)
            Issue.record("accepted")
        } catch {
            #expect(error.issues.map(\.description).contains {
                $0.hasPrefix("app_store.retention_messaging.signing_key_file: a promotional offer is signed with the In-App Purchase key")
            })
        }
    }

    @Test func notTOMLNamesTheLine() throws {
        let found = try issues("not-toml")
        #expect(found.count == 1)
        #expect(found[0].hasPrefix("line 1: not valid TOML"))
    }

    @Test func anEmptyConfigSaysWhatIsMissing() throws {
        #expect(try issues("empty") == [
            "products: at least one product is needed", "cancel_flow: missing", "api_keys: at least one key is needed",
        ])
    }

    @Test func keysTellTheirKindAndMode() throws {
        let live = try #require(APIKey(key: "sk_live_abcdefghijklmnop", operatorName: "Ops"))
        #expect(live.kind == .secret && live.mode == .live && live.actor == "Ops")
        let app = try #require(APIKey(key: "pk_test_abcdefghijklmnop"))
        #expect(app.kind == .publishable && app.mode == .test && app.actor == "app")
        #expect(APIKey(key: "rk_test_abcdefghijklmnop") == nil)
        let ring = KeyRing([live, app])
        #expect(ring.lookup("sk_live_abcdefghijklmnop") == live)
        #expect(ring.lookup("sk_live_abcdefghijklmnoq") == nil)
        #expect(ring.lookup("") == nil)
    }

    /// The `savedesk` binary next to this test bundle.
    static var savedesk: URL {
        Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("savedesk")
    }

    func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-validate-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out"), err = directory.appendingPathComponent("err")
        let process = try ChildProcess.spawn(Self.savedesk.path, arguments, stdout: out.path, stderr: err.path)
        let status = await process.wait() ?? -1
        return (status, try String(contentsOf: out, encoding: .utf8), try String(contentsOf: err, encoding: .utf8))
    }

    @Test func theValidateCommandExits2AndPrintsEveryError() async throws {
        let broken = try await run(["config", "validate", try Self.path("broken-everything")])
        #expect(broken.status == 2)
        #expect(broken.stderr.contains("25 errors"))
        #expect(broken.stderr.contains("cancel_flow.questions[2].options[0]: triggers both offer and pause"))
        let good = try await run(["config", "validate", try #require(DemoSeed.demoConfigPath)])
        #expect(good.status == 0)
        #expect(good.stdout.contains("valid (3 products, 3 questions, 3 keys)"))
    }

    @Test func theServerRefusesToStartOnAnInvalidConfig() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-refuse-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let result = try await run([
            "serve", "--config", try Self.path("broken-everything"), "--db", directory.appendingPathComponent("db.sqlite").path,
            "--port", "0",
        ])
        #expect(result.status == 2)
        #expect(result.stderr.contains("The server did not start."))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("db.sqlite").path), "nothing was created")
    }
}

@Suite("Prices in config")
struct PriceParsingTests {
    @Test(arguments: [("7.99", 7_990_000), ("10", 10_000_000), ("0.5", 500_000), ("129.900000", 129_900_000)] as [(String, Int64)])
    func exactDecimals(text: String, micros: Int64) {
        #expect(TOMLNode.micros(text) == micros)
    }

    @Test(arguments: ["7.9x", "-1", "+1", "1.", ".5", "1.2345678", "1,99", "", "one"])
    func anythingElseIsRefused(text: String) {
        #expect(TOMLNode.micros(text) == nil)
    }
}
