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
