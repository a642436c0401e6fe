import Foundation
import SQLKit
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("Win-back")
struct WinBackTests {
    @Test func aLapsedAppStoreSubscriberGetsOneCodeOnce() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let first = try await server.desk.winBackCustomer(path: .init(customerId: "cus_ivan"), body: .json(.init(productId: "premium_monthly"))).ok.body.json
        #expect(first.kind == "offer_code" && first.offerCode == "READERBACK01")
        #expect(first.message.contains("READERBACK01"))
        let again = try await server.desk.winBackCustomer(path: .init(customerId: "cus_ivan"), body: .json(.init(productId: "premium_monthly"))).ok.body.json
        #expect(again.offerCode == "READERBACK01", "the same customer keeps their code; the pool is not drained")
        let issued = try await server.withStore { store in
            try await store.exclusive { db in
                try await db.select().columns("code", "customer_id", "issued_by").from("win_back_codes")
                    .where("customer_id", .isNot, SQLLiteral.null).all()
            }
        }
        #expect(issued.count == 1)
        #expect(try issued[0].decode(column: "issued_by", as: String.self) == "Marco (support)")
    }

    @Test func anEmptyPoolIsAClearError() async throws {
        var config = try TestServer.demoConfig()
        config.winBack?.offerCodes = []
        let server = try await TestServer.start(config: config)
        defer { Task { await server.stop() } }
        let body = expectFailure(
            try await server.desk.winBackCustomer(path: .init(customerId: "cus_ivan"), body: .json(.init(productId: "premium_monthly"))),
            status: 409, code: "no_offer_codes"
        )
        #expect(body?.error.contains("win_back.offer_codes") == true)
    }

    @Test func aLapsedWebSubscriptionRestartsWithTheDiscount() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        // Farah's cancellation takes effect on day 8.
        let now = try await server.desk.advanceClock(body: .json(.init(days: 9))).ok.body.json.now
        let result = try await server.desk.winBackCustomer(path: .init(customerId: "cus_farah"), body: .json(.init(productId: "basic_monthly"))).ok.body.json
        #expect(result.kind == "web_reactivated")
        #expect(result.message == "Basic Monthly restarted at 30% off for 3 months")
        #expect(result.renewsAt == Calendar.utc.date(byAdding: .month, value: 1, to: now))
        let entitlement = try await server.app.getEntitlements(query: .init(userId: "cus_farah")).ok.body.json.entitlements[0]
        #expect(entitlement.status.rawValue == "active" && entitlement.isActive && entitlement.willRenew)
        let charged = try await server.withStore { store in
            try await store.exclusive { db in
                try await db.select().column("amount_micros").from("charges").where("subscription_id", .equal, "sub_farah_1").all()
                    .map { try $0.decode(column: "amount_micros", as: Int64.self) }
            }
        }
        #expect(charged == [2_790_000], "$3.99 less 30%")
        #expect(try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_farah")).ok.body.json.events[0].action == "win_back")
    }

    @Test func onlyLapsedSubscribersAndOnlyWhenConfigured() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        expectFailure(try await server.desk.winBackCustomer(path: .init(customerId: "cus_ava"), body: .json(.init(productId: "premium_monthly"))),
                      status: 409, code: "not_lapsed")
        expectFailure(try await server.desk.winBackCustomer(path: .init(customerId: "cus_priya"), body: .json(.init(productId: "premium_yearly"))),
                      status: 404, code: "no_lapsed_subscription")
        expectFailure(try await server.app.winBackCustomer(path: .init(customerId: "cus_ivan"), body: .json(.init(productId: "premium_monthly"))),
                      status: 403, code: "secret_key_required")
        var config = try TestServer.demoConfig()
        config.winBack = nil
        let bare = try await TestServer.start(config: config)
        defer { Task { await bare.stop() } }
        expectFailure(try await bare.desk.winBackCustomer(path: .init(customerId: "cus_ivan"), body: .json(.init(productId: "premium_monthly"))),
                      status: 422, code: "win_back_not_configured")
    }
}
