import Foundation
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("Desk endpoints, auth and audit")
struct DeskEndpointTests {
    @Test func searchByIdEmailOrNameWithPaging() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let byName = try await server.desk.searchCustomers(query: .init(query: "hana")).ok.body.json
        #expect(byName.customers.map(\.id) == ["cus_hana"])
        #expect(byName.customers[0].summary.contains("Premium Monthly"))
        let byEmail = try await server.desk.searchCustomers(query: .init(query: "OLIVIA.BROWN@example")).ok.body.json
        #expect(byEmail.customers.map(\.id) == ["cus_olivia"])
        let byId = try await server.desk.searchCustomers(query: .init(query: "cus_sam")).ok.body.json
        #expect(byId.customers.map(\.name) == ["Sam Whitfield"])
        let none = try await server.desk.searchCustomers(query: .init(query: "zzz")).ok.body.json
        #expect(none.customers.isEmpty && none.total == 0)

        let first = try await server.desk.searchCustomers(query: .init(page: 1, perPage: 6)).ok.body.json
        let third = try await server.desk.searchCustomers(query: .init(page: 3, perPage: 6)).ok.body.json
        #expect(first.total == 16 && first.customers.count == 6 && third.customers.count == 4)
        #expect(first.customers.map(\.name) == first.customers.map(\.name).sorted())
        let all = try await server.desk.searchCustomers(query: .init(perPage: 100)).ok.body.json
        #expect(Set(all.customers.map(\.id)).count == 16)
        let past = try await server.desk.searchCustomers(query: .init(page: 9, perPage: 6)).ok.body.json
        #expect(past.customers.isEmpty && past.total == 16, "past the last page, the total still counts")

        // Short queries, accents, and text that means something to a search engine.
        let short = try await server.desk.searchCustomers(query: .init(query: "Be")).ok.body.json
        #expect(short.customers.map(\.id) == ["cus_ben"], "one or two characters: a name or email that starts with them")
        let inside = try await server.desk.searchCustomers(query: .init(query: "kaf")).ok.body.json
        #expect(inside.customers.map(\.id) == ["cus_ben"], "three or more: anywhere in the name or email")
        let accented = try await server.desk.searchCustomers(query: .init(query: "ramírez")).ok.body.json
        #expect(accented.customers.map(\.id) == ["cus_diego"])
        for odd in ["\"", "a\"b", "*", "hana OR ava", "(", "NEAR(", "%", "_"] {
            let answer = try await server.desk.searchCustomers(query: .init(query: odd)).ok.body.json
            #expect(answer.total == answer.customers.count, "\(odd)")
        }
        let wildcard = try await server.desk.searchCustomers(query: .init(query: "%")).ok.body.json
        #expect(wildcard.total == 0, "% is no wildcard: no name or email starts with it")
        expectFailure(try await server.desk.searchCustomers(query: .init(page: 0)), status: 400, code: "out_of_range")
    }

    /// A typed text that matches many customers costs no more than one that matches a thousand:
    /// the total stops at 1,000 (`total_capped`), and the pages hold the first 1,000 found, by
    /// name ignoring case; a name prefix finds the first by name of all.
    @Test func aSearchMatchingMoreThanAThousandIsCapped() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let firstNames = ["Hana", "hal", "Hugo", "Ava"]
        try await server.withStore { store in
            try await store.transaction(key: "test") { data in
                for index in 0..<1_400 {
                    try await data.customers.insert(CustomerRecord(
                        id: "cus_many_\(index)", name: "\(firstNames[index % 4]) Okafor \(index)", email: "n\(index)@many.example", country: nil,
                        createdAt: 1_700_000_000, cardFailing: false, kind: .generated
                    ))
                }
            }
        }
        let okafor = try await server.desk.searchCustomers(query: .init(query: "okafor", perPage: 100)).ok.body.json
        #expect(okafor.total == 1_000 && okafor.totalCapped == true)
        #expect(okafor.customers.count == 100 && okafor.customers.allSatisfy { $0.name.lowercased().contains("okafor") })
        let names = okafor.customers.map { $0.name.lowercased() }
        #expect(names == names.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }), "by name, ignoring case")
        let last = try await server.desk.searchCustomers(query: .init(query: "okafor", page: 67, perPage: 15)).ok.body.json
        #expect(last.customers.count == 10, "990 to 1,000")
        let past = try await server.desk.searchCustomers(query: .init(query: "okafor", page: 68, perPage: 15)).ok.body.json
        #expect(past.customers.isEmpty && past.total == 1_000 && past.totalCapped == true)
        var seen = Set<String>()
        for page in 1...10 {
            seen.formUnion(try await server.desk.searchCustomers(query: .init(query: "okafor", page: page, perPage: 100)).ok.body.json.customers.map(\.id))
        }
        #expect(seen.count == 1_000, "the pages hold 1,000 different customers")

        // A prefix: the first by name among all of them ("hal…" before "hana…"), case aside.
        let prefix = try await server.desk.searchCustomers(query: .init(query: "ha", perPage: 20)).ok.body.json
        #expect(prefix.totalCapped == false && prefix.total == 701, "350 Hana, 350 hal and the demo's Hana: \(prefix.total)")
        let wide = try await server.desk.searchCustomers(query: .init(query: "h", perPage: 20)).ok.body.json
        #expect(wide.totalCapped == true && wide.total == 1_000)
        let everyH = try await server.withStore { store in
            try await store.read { data in
                try await data.customers.search("ha", kind: nil, livemode: false, page: 1, perPage: 100)
            }
        }
        let expected = everyH.customers.map(\.name).sorted { $0.lowercased().utf8.lexicographicallyPrecedes($1.lowercased().utf8) }
        #expect(wide.customers.map(\.name) == Array(expected.prefix(20)), "\(wide.customers.map(\.name))")
        #expect(wide.customers.first?.name == "hal Okafor 1")

        // Fewer than 1,000: exact, not capped; a kind narrows before the cap.
        let few = try await server.desk.searchCustomers(query: .init(query: "okafor 12")).ok.body.json
        #expect(few.total == 111 && few.totalCapped == false, "12, 120–129 and 1200–1299: \(few.total)")
        let stories = try await server.desk.searchCustomers(query: .init(query: "h", kind: .story)).ok.body.json
        #expect(stories.totalCapped == false && stories.customers.allSatisfy { $0.kind == .story } && !stories.customers.isEmpty)
    }

    /// Writes generated customers (id, name, email) straight into the server's store.
    static func insert(_ customers: [(id: String, name: String, email: String)], into server: TestServer) async throws {
        try await server.withStore { store in
            try await store.transaction(key: "test") { data in
                for customer in customers {
                    try await data.customers.insert(CustomerRecord(
                        id: customer.id, name: customer.name, email: customer.email, country: nil,
                        createdAt: 1_700_000_000, cardFailing: false, kind: .generated
                    ))
                }
            }
        }
    }

    /// A customer whose id is the text and whose name or email holds it too is found by both
    /// ways, and listed and counted once (SQLite joins the two without deduplicating them).
    @Test func aCustomerFoundByIdAndByNameIsListedOnce() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let made: [(id: String, name: String, email: String)] = [
            ("twinid", "Twinid Ames", "ames@twin.example"), ("cus_twin_b", "Ola Twinid", "ola@twin.example"),
            ("longtwin99", "Lee Long", "longtwin99@twin.example"), ("cus_twin_c", "Longtwin99 Lee", "lee@twin.example"),
        ]
        try await Self.insert(made, into: server)
        // The whole text's phrase (six characters), then its rarest part (ten).
        for (text, expected) in [("twinid", ["cus_twin_b", "twinid"]), ("LONGTWIN99", ["longtwin99", "cus_twin_c"])] {
            let found = try await server.desk.searchCustomers(query: .init(query: text)).ok.body.json
            #expect(found.customers.map(\.id) == expected && found.total == 2 && found.totalCapped == false, "\(text): \(found.customers.map(\.id))")
        }
    }

    /// A one- or two-character text below the cap: matches by name, by email or both, each
    /// once, every page exactly the slice of all of them sorted by name (then id), however deep.
    @Test func aPrefixSearchPagesEveryMatchOnceInNameOrder() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        // Some match "xq" by name and email, some by email only, some by name only (a fifth of them
        // in capitals), some not at all.
        var made: [(id: String, name: String, email: String)] = []
        for index in 0..<1_000 {
            let name = index % 10 < 7 ? "Xq\(index * 7919 % 1_000) Lind" : "Zed \(index)"
            let email = index % 4 == 0 || index % 10 >= 7 ? "xq\(index)@prefix.example" : "other\(index)@prefix.example"
            made.append(("cus_prefix_\(index)", index % 5 == 4 ? name.uppercased() : name, index % 20 == 19 ? "no\(index)@prefix.example" : email))
        }
        made.append(("xq", "Mona Id", "mona@id.example"))  // found by its id only
        try await Self.insert(made, into: server)
        for text in ["xq", "x"] {
            let expected = made.filter { $0.id == text || $0.name.lowercased().hasPrefix(text) || $0.email.hasPrefix(text) }
                .sorted { one, other in
                    let (a, b) = (one.name.lowercased(), other.name.lowercased())
                    return a == b ? one.id.utf8.lexicographicallyPrecedes(other.id.utf8) : a.utf8.lexicographicallyPrecedes(b.utf8)
                }.map(\.id)
            #expect(expected.count > 600 && expected.count < 1_000)
            let pages = (expected.count + 14) / 15
            for page in [1, 2, pages / 2, pages - 1, pages] {
                let found = try await server.desk.searchCustomers(query: .init(query: page == 2 ? text.uppercased() : text, page: page, perPage: 15)).ok.body.json
                #expect(found.total == expected.count && found.totalCapped == false)
                #expect(found.customers.map(\.id) == Array(expected[((page - 1) * 15)..<min(page * 15, expected.count)]), "\(text), page \(page)")
            }
            let past = try await server.desk.searchCustomers(query: .init(query: text, page: pages + 1, perPage: 15)).ok.body.json
            #expect(past.customers.isEmpty && past.total == expected.count)
        }
    }

    /// A long text is found through its rarest part and checked whole on each customer: every
    /// match found, in name order, and nothing else; case aside; when the part finds more than
    /// its bound (here: the other mode's customers first), the whole phrase still finds them all.
    @Test func aLongTextFindsExactlyItsMatches() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        var made: [CustomerRecord] = []
        func customer(_ id: String, _ name: String, _ email: String, livemode: Bool = false) {
            made.append(CustomerRecord(id: id, name: name, email: email, country: nil, createdAt: 1_700_000_000, cardFailing: false,
                                       livemode: livemode, kind: .generated))
        }
        for index in 0..<300 { customer("cus_pad_\(index)", "Filler \(index)", "filler\(index)@pad.example") }
        // 2,100 share "qzxwvut late", the first 2,050 of them live: more than a part may find.
        for index in 0..<2_100 { customer("cus_late_\(index)", "Qzxwvut Late \(index)", "late\(index)@shared.example", livemode: index < 2_050) }
        for index in 0..<1_500 {
            let email = "member\(index)@sharedmail.example"
            customer("cus_member_\(index)", "Member \(index)", index % 7 == 0 ? email.uppercased() : email)
        }
        try await server.withStore { store in
            try await store.transaction(key: "test") { data in
                for record in made { try await data.customers.insert(record) }
            }
        }
        let all = try await server.desk.searchCustomers(query: .init(query: "", perPage: 1)).ok.body.json.total
        for text in ["member1234@sharedmail", "234@sharedmail.exa", "MEMBER14@SHAREDMAIL", "qzxwvut late", "qzxwvut late 2099",
                     "er12@sharedmail", "member1234@sharedmail.nope", "@sharedmail.example", "nowhere-to-be-found", "filler29"] {
            let lowered = text.lowercased()
            let expected = made.filter { !$0.livemode && ($0.name.lowercased().contains(lowered) || $0.email.lowercased().contains(lowered)) }
                .sorted { one, other in
                    let (a, b) = (one.name.lowercased(), other.name.lowercased())
                    return a == b ? one.id.utf8.lexicographicallyPrecedes(other.id.utf8) : a.utf8.lexicographicallyPrecedes(b.utf8)
                }.map(\.id)
            var found: [String] = []
            var page = 1
            while true {
                let result = try await server.desk.searchCustomers(query: .init(query: text, page: page, perPage: 100)).ok.body.json
                #expect(result.total == min(expected.count, 1_000) && result.totalCapped == (expected.count > 1_000), "\(text): \(result.total)")
                if result.customers.isEmpty { break }
                found += result.customers.map(\.id)
                page += 1
            }
            if expected.count <= 1_000 {
                #expect(found == expected, "\(text): \(found.count) found, \(expected.count) expected")
            } else {
                #expect(found.count == 1_000 && Set(found).isSubset(of: expected) && found == found.sorted { one, other in
                    expected.firstIndex(of: one)! < expected.firstIndex(of: other)!
                }, "\(text): a thousand of them, in order")
            }
        }
        #expect(all > 1_800)
    }

    /// The part of a long text searched first: the run of four trigrams expected to find the
    /// fewest customers, or none when even that one is common.
    @Test func theRarePartIsTheRunOfTrigramsFewestHold() {
        let million = 1_000_000.0
        var counts: [String: Double] = [:]
        for trigram in SQLCustomerRepository.trigrams(of: "customer4242@bench") { counts[trigram] = million }
        for (trigram, count) in ["r42": 11_111.0, "424": 40_000, "242": 40_000, "42@": 10_000, "er4": 111_111, "2@b": 100_000] {
            counts[trigram] = count
        }
        #expect(SQLCustomerRepository.rarePart(of: "customer4242@bench", counts: counts, customers: million) == "r4242@")
        // A trigram no customer holds: its run finds nobody.
        counts["zzz"] = 0
        #expect(SQLCustomerRepository.rarePart(of: "customerzzz@bench", counts: counts, customers: million)?.contains("zzz") == true)
        // Every trigram common: the whole phrase.
        #expect(SQLCustomerRepository.rarePart(of: "customer@bench", counts: counts, customers: million) == nil)
        #expect(SQLCustomerRepository.trigrams(of: "abcde") == ["abc", "bcd", "cde"])
    }

    @Test func detailShowsEveryLifecycleRow() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        var states: [String: String] = [:]
        for id in ["cus_ava", "cus_quinn", "cus_hana", "cus_farah", "cus_olivia", "cus_sam", "cus_emma", "cus_ivan", "cus_priya"] {
            let detail = try await server.desk.getCustomer(path: .init(customerId: id)).ok.body.json
            let lifecycle = try #require(detail.entitlements.last?.lifecycle)
            states[id] = lifecycle.state.rawValue
            #expect(detail.profile.id == id)
        }
        #expect(states == [
            "cus_ava": "active", "cus_quinn": "trialing", "cus_hana": "migration_trial", "cus_farah": "cancels_on",
            "cus_olivia": "grace_period", "cus_sam": "billing_retry", "cus_emma": "paused", "cus_ivan": "expired",
            "cus_priya": "revoked",
        ])
        let olivia = try await server.desk.getCustomer(path: .init(customerId: "cus_olivia")).ok.body.json.entitlements[0].lifecycle
        #expect(olivia.daysLeft == 5 && olivia.hasAccess && olivia.warning.rawValue == "warning")
        #expect(olivia.summary == "Grace period · 5 days left to fix payment")
        let ivan = try await server.desk.getCustomer(path: .init(customerId: "cus_ivan")).ok.body.json.entitlements[0].lifecycle
        #expect(ivan.winBackEligible && !ivan.hasAccess)
        expectFailure(try await server.desk.getCustomer(path: .init(customerId: "cus_nobody")), status: 404, code: "unknown_user")
    }

    @Test func deskRefusesPublishableAndMissingKeys() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        expectFailure(try await server.app.searchCustomers(), status: 403, code: "secret_key_required")
        expectFailure(try await server.client(key: nil).searchCustomers(), status: 401, code: "unauthorized")
        expectFailure(try await server.client(key: "sk_test_guessing_a_key_000").getCustomer(path: .init(customerId: "cus_ava")),
                      status: 401, code: "unauthorized")
        expectFailure(try await server.client(key: nil).getCancelFlowConfig(), status: 401, code: "unauthorized")
        // Authorization: Bearer works as well as X-ZeroSettle-Key.
        let bearer = try await server.raw(.GET, "/v1/desk/customers", key: nil, headers: ["Authorization": "Bearer \(TestServer.operatorKey)"])
        #expect(bearer.status == 200)
        // Secret keys may use the IAP API.
        #expect(try await server.desk.getCancelFlowConfig().ok.body.json.enabled)
    }

    @Test func unknownRoutesAnswerWithTheEnvelope() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let response = try await server.raw(.GET, "/v1/iap/nothing-here")
        #expect(response.status == 404)
        #expect(response.body.contains(#""code":"no_such_endpoint""#))
    }

    @Test func auditRecordsActorRequestAndStates() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let response = try await server.raw(
            .POST, "/v1/iap/subscriptions/pause", body: #"{"user_id":"cus_ava","product_id":"premium_monthly","pause_duration_days":10}"#,
            key: TestServer.operatorKey
        )
        #expect(response.status == 200)
        let requestId = try #require(response.headers.first(name: "X-Request-Id"))
        _ = try await server.app.resumeSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly"))).ok
        let events = try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_ava")).ok.body.json.events
        #expect(events.map(\.action).prefix(2) == ["subscription.resume", "subscription.pause"])
        let pause = events[1]
        #expect(pause.actor == "Marco (support)")
        #expect(pause.requestId == requestId)
        #expect(pause.customerId == "cus_ava")
        #expect(pause.at == TestServer.start)
        #expect(pause.parameters.value["pause_duration_days"] as? Int == 10)
        #expect(pause.before?.value["status"] as? String == "active")
        #expect(pause.after?.value["status"] as? String == "paused")
        #expect(events[0].actor == "app")
        #expect(events.last?.action == "support.note", "seeded history comes last (oldest)")
    }
}
