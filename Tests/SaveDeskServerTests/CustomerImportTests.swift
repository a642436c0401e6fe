import Foundation
import Logging
import SQLKit
import SaveDeskAPI
import Testing
import TestSupport

@testable import SaveDeskServer

/// Operators bring their base: a file imported (an upsert; a re-run changes nothing; a bad file
/// reported with nothing half-written), and one customer created or updated through the Desk API.
@Suite("Customers an operator brings")
struct CustomerImportTests {
    static func file(_ name: String, _ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString.prefix(8))-\(name)")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    static let good = """
        id,mode,name,email,country,app_account_token,app_store_original_transaction_ids,billing_customer_id
        imp-1,test,"Smith, Jo",jo@example.com,us,3F2504E0-4F89-11D3-9A0C-0305E82C3301,2000000999000001;2000000999000002,cus_stripe_1
        imp-2,live,"Quote ""Q"" Person",q@example.org,DE,,,
        imp-3,test,Ålesund Ø,ø@example.no,,,,

        """

    @Test func aFileIsAnUpsertAndARerunChangesNothing() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let database = TestDatabase.location(in: server.directory)
        let path = try Self.file("good.csv", Self.good)
        let dry = try await CustomerImport.run(file: path, databasePath: database, dryRun: true)
        #expect(dry.succeeded && dry.created == 3 && dry.rows == 3)
        #expect(try await server.count("customers", where: "id LIKE 'imp-%'") == 0, "a dry run writes nothing")
        let first = try await CustomerImport.run(file: path, databasePath: database)
        #expect(first.created == 3 && first.updated == 0 && first.unchanged == 0, "\(first.problems)")
        let again = try await CustomerImport.run(file: path, databasePath: database)
        #expect(again.created == 0 && again.updated == 0 && again.unchanged == 3)
        #expect(try await server.count("customers", where: "id = 'imp-1' AND name = 'Smith, Jo' AND country = 'US' AND app_account_token = '3f2504e0-4f89-11d3-9a0c-0305e82c3301' AND billing_customer_id = 'cus_stripe_1'") == 1)
        #expect(try await server.count("app_store_links", where: "customer_id = 'imp-1'") == 2)
        #expect(try await server.count("audit_events", where: "actor = 'import' AND customer_id LIKE 'imp-%'") == 3)
        // JSON Lines too: a change to one, a new one; the console finds them at once.
        let lines = try Self.file("more.jsonl", """
            {"id":"imp-1","mode":"test","email":"jo.smith@example.com"}
            {"id":"imp-4","mode":"test","name":"Four","app_store_original_transaction_ids":["2000000999000004"]}
            """)
        let more = try await CustomerImport.run(file: lines, databasePath: database)
        #expect(more.created == 1 && more.updated == 1, "\(more.problems)")
        let found = try await server.desk.searchCustomers(query: .init(query: "jo.smith")).ok.body.json.customers
        #expect(found.map(\.id) == ["imp-1"])
        // Apple tells about an imported original transaction: it attaches to its customer.
        let status = try await AppStoreLinkingTests().notify(server, "DID_RENEW", AppStoreSyncTests().transaction("2000000999000004"))
        #expect(status == "applied")
        #expect(try await server.app.getEntitlements(query: .init(userId: "imp-4")).ok.body.json.entitlements.count == 1)
    }

    /// Each batch's transaction adds a segment to SQLite's search index; the import ends with
    /// them merged into one, so a search after it reads one b-tree per trigram.
    @Test(.disabled(if: TestDatabase.isPostgres, "SQLite's FTS5 index"))
    func anImportLeavesTheSearchIndexInOnePiece() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-import-\(UUID())")
        let database = directory.appendingPathComponent("savedesk.sqlite").path
        let count = CustomerImport.batchSize * 2 + 500
        var text = "id,mode,name,email\n"
        for index in 0..<count { text += "imp-\(index),test,Row \(index) Lindqvist,row\(index)@import.example\n" }
        let report = try await CustomerImport.run(file: try Self.file("many.csv", text), databasePath: database)
        #expect(report.created == count, "\(report.problems)")
        let store = try await Store.open(path: database, logger: .init(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let found = await Result.of {
            let segments = try await store.sqlRead { db in
                try await db.raw("SELECT count(DISTINCT segid) AS n FROM customer_search_idx").first()?.decode(column: "n", as: Int.self)
            }
            let first = try await store.read { try await $0.customers.search("row0@import", kind: nil, livemode: false, page: 1, perPage: 5) }
            let last = try await store.read { try await $0.customers.search("row \(count - 1) lind", kind: nil, livemode: false, page: 1, perPage: 5) }
            return (segments, first.customers.map(\.id), last.customers.map(\.id))
        }
        await store.close()
        let (segments, first, last) = try found.get()
        #expect(segments == 1)
        #expect(first == ["imp-0"] && last == ["imp-\(count - 1)"])
    }

    @Test(arguments: [
        ("bad quoting", "id,mode,name\nq-1,test,Bad\"quote\n", "line 2: a quote inside an unquoted field"),
        ("an unclosed quote", "id,mode,name\nq-1,test,\"open\n", "line 2: a quoted field is never closed"),
        ("a duplicate id", "id,mode\nq-1,test\nq-2,test\nq-1,test\n", "line 4: id: duplicate id \"q-1\" (first on line 2)"),
        ("a wrong mode", "id,mode\nq-1,production\n", "line 2: mode: must be test or live, got \"production\""),
        ("an invalid email", "id,mode,email\nq-1,test,jo@@example\n", "line 2: email: not an email address: \"jo@@example\""),
        ("an unknown column", "id,mode,phone\nq-1,test,555\n", "line 1: unknown column \"phone\""),
        ("a short row", "id,mode,name\nq-1,test\n", "line 2: 2 fields; the header has 3"),
        ("a bad token", "id,mode,app_account_token\nq-1,test,not-a-uuid\n", "line 2: app_account_token: not a UUID"),
        ("an id of the other mode", "id,mode\ncus_ava,live\n", "line 2: mode: customer cus_ava is test data"),
    ])
    func aMalformedFileIsAClearReportWithNothingWritten(what: String, text: String, expected: String) async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        // A valid row first: it is not written either.
        let path = try Self.file("bad.csv", text.replacingOccurrences(of: "\n", with: "\nfirst-ok,test\n", options: [], range: text.range(of: "\n")))
        let report = try await CustomerImport.run(file: path, databasePath: TestDatabase.location(in: server.directory))
        #expect(!report.succeeded, "\(what)")
        // The valid row took line 2: what the case names is one line further down (the header stays line 1).
        let shifted = expected.replacing(/line (\d+)/) { match in
            let line = Int(match.output.1) ?? 0
            return "line \(line > 1 ? line + 1 : line)"
        }
        #expect(report.problems.contains { $0.description.hasPrefix(shifted) }, "\(what): \(report.problems)")
        #expect(try await server.count("customers", where: "id IN ('first-ok', 'q-1', 'q-2')") == 0, "\(what): nothing written")
    }

    /// The import reads each batch's customers in a few queries: a customer prefetched is found
    /// again from what was read, not asked for a row at a time (nor one known to be missing).
    @Test func aPrefetchedBatchIsFoundWithoutAskingTheDatabaseAgain() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let store = server.running.store
        try await store.exclusive { db in
            let customers = SQLCustomerRepository(db: db, kind: store.kind)
            let ids = ["cus_ava", "cus_nobody"] + (0..<1_200).map { "cus_missing_\($0)" }
            try await customers.prefetch(ids: ids)
            let ava = try #require(try await customers.find(id: "cus_ava"))
            // Changed behind the repository's back: what it found stays what it had read.
            try await db.raw("UPDATE customers SET name = 'Changed' WHERE id = 'cus_ava'").run()
            try await db.raw(
                "INSERT INTO customers (id, name, email, created_at, card_failing, livemode) VALUES ('cus_nobody', 'N', 'n@example.com', 0, \(unsafeRaw: store.kind == .sqlite ? "0, 0" : "FALSE, FALSE"))"
            ).run()
            #expect(try await customers.find(id: "cus_ava") == ava)
            #expect(try await customers.find(id: "cus_nobody") == nil)
            #expect(try await customers.find(id: "cus_missing_1199") == nil)
            // A repository that did not prefetch asks.
            #expect(try await SQLCustomerRepository(db: db, kind: store.kind).find(id: "cus_ava")?.name == "Changed")
        }
    }

    @Test func aFiftyMegabyteLineIsReportedInBoundedMemory() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("import-huge-\(UUID()).jsonl")
        FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        handle.write(Data(#"{"id":"h-1","mode":"test"}"#.utf8 + [10]))
        handle.write(Data(#"{"id":"h-2","mode":"test","name":""#.utf8))
        let chunk = Data(repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0..<50 { handle.write(chunk) }
        handle.write(Data("\"}\n".utf8))
        try handle.close()
        defer { try? FileManager.default.removeItem(at: url) }
        let report = try await CustomerImport.run(file: url.path, databasePath: TestDatabase.location(in: server.directory))
        #expect(report.problems.map(\.description) == ["line 2: longer than 65536 bytes"])
        #expect(try await server.count("customers", where: "id LIKE 'h-%'") == 0)
    }

    @Test func anOperatorCreatesAndUpdatesOneCustomerAudited() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let made = try await server.desk.createCustomer(body: .json(.init(
            id: "desk-1", name: "Desk One", email: "one@example.com", country: "fr", appAccountToken: "3F2504E0-4F89-11D3-9A0C-0305E82C3399",
            appStoreOriginalTransactionIds: ["2000000999000100"]
        ))).ok.body.json
        #expect(made.profile.country == "FR" && made.profile.appAccountToken == "3f2504e0-4f89-11d3-9a0c-0305e82c3399")
        #expect(made.profile.createdByApp == false)
        expectFailure(try await server.desk.createCustomer(body: .json(.init(id: "desk-1"))), status: 409, code: "customer_exists")
        let changed = try await server.desk.updateCustomer(path: .init(customerId: "desk-1"), body: .json(.init(email: "new@example.com"))).ok.body.json
        #expect(changed.profile.email == "new@example.com" && changed.profile.name == "Desk One", "fields not given stay")
        expectFailure(try await server.desk.updateCustomer(path: .init(customerId: "desk-1"), body: .json(.init(email: "nope"))),
                      status: 422, code: "invalid_customer")
        expectFailure(try await server.desk.updateCustomer(path: .init(customerId: "nobody-here"), body: .json(.init(name: "X"))),
                      status: 404, code: "unknown_user")
        expectFailure(try await server.desk.createCustomer(body: .json(.init(id: "desk-2", appAccountToken: "3f2504e0-4f89-11d3-9a0c-0305e82c3399"))),
                      status: 409, code: "app_account_token_taken")
        expectFailure(try await server.app.createCustomer(body: .json(.init(id: "desk-3"))), status: 403, code: "secret_key_required")
        let timeline = try await server.desk.getCustomerTimeline(path: .init(customerId: "desk-1")).ok.body.json.events.map(\.action)
        #expect(timeline.contains("customer.created") && timeline.contains("customer.updated"))
    }

    /// The command: a report on standard error and exit 1 for a bad file, a summary and exit 0 for
    /// a good one.
    @Test func theImportCommandReportsAndExits() async throws {
        let directory = try CrashTests.directory()
        let database = try await TestDatabase.prepare(in: directory, file: "db.sqlite")
        let binary = ConfigValidationTests.savedesk.deletingLastPathComponent().appendingPathComponent("savedesk-server").path
        func importing(_ path: String, _ extra: [String] = []) async throws -> (status: Int32?, out: String, err: String) {
            let out = directory.appendingPathComponent("out-\(UUID())"), err = directory.appendingPathComponent("err-\(UUID())")
            let child = try ChildProcess.spawn(binary, ["import", "customers", path, "--db", database] + extra,
                                               environment: ["SWIFT_BACKTRACE": "interactive=no"], stdout: out.path, stderr: err.path)
            let status = await child.wait(timeout: .seconds(60))
            return (status, (try? String(contentsOf: out, encoding: .utf8)) ?? "", (try? String(contentsOf: err, encoding: .utf8)) ?? "")
        }
        let bad = try await importing(try Self.file("bad.csv", "id,mode,email\nx-1,test,nope\n"))
        #expect(bad.status == 1 && bad.err.contains("line 2: email: not an email address") && bad.err.contains("nothing was written"), "\(bad.err)")
        let good = try await importing(try Self.file("good.csv", Self.good))
        #expect(good.status == 0 && good.out.contains("3 rows: 3 customers were created, 0 updated, 0 unchanged"), "\(good.out) \(good.err)")
        let dry = try await importing(try Self.file("good.csv", Self.good), ["--dry-run"])
        #expect(dry.status == 0 && dry.out.contains("0 customers would be created, 0 updated, 3 unchanged (dry run"), "\(dry.out)")
    }
}
