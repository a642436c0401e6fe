import Foundation
import Logging
import Testing
import TestSupport

@testable import SaveDeskServer

/// A real app's users: nobody is a 404, a write makes the customer, and a publishable key (public
/// by nature) cannot fill the database with made-up users.
@Suite("New users")
struct NewUserTests {
    /// A funnel event for `user` sent from `from` (a loopback address), as raw HTTP.
    static func event(_ server: TestServer, user: String, from: UInt32 = 0x7F00_0001) async -> RawHTTP.Reply {
        let body = #"{"event_type":"paywall_viewed","user_id":"\#(user)","product_id":"premium_monthly"}"#
        return await RawHTTP.exchange(
            port: server.running.port,
            "POST /v1/iap/events HTTP/1.1\r\nHost: x\r\nX-ZeroSettle-Key: \(TestServer.appKey)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)",
            from: from
        )
    }

    @Test func aBurstOfNewIdsFromOneAddressIs429AndOtherAddressesAreNot() async throws {
        var config = try TestServer.demoConfig()
        config.rateLimits.newCustomers.perAddressBurst = 5
        config.rateLimits.newCustomers.perAddressPerSecond = 0.001
        let server = try await TestServer.start(config: config)
        defer { Task { await server.stop() } }
        var statuses: [Int] = []
        for index in 0..<8 { statuses.append(await Self.event(server, user: "burst-\(index)").status) }
        #expect(statuses == [200, 200, 200, 200, 200, 429, 429, 429], "\(statuses)")
        let refused = await Self.event(server, user: "burst-9")
        #expect(refused.body.contains("new_customer_rate_limited") && refused.head.lowercased().contains("retry-after:"), "\(refused.head)")
        // Another address still makes new users; a known user from the first one is still served.
        #expect(await Self.event(server, user: "other-address", from: 0x7F00_0002).status == 200)
        #expect(await Self.event(server, user: "cus_ava").status == 200)
        #expect(try await server.count("customers", where: "id LIKE 'burst-%' OR id = 'other-address'") == 6)
    }

    @Test func aKeysDailyCapRefusesLogsAndShowsInTheSession() async throws {
        var config = try TestServer.demoConfig()
        config.rateLimits.newCustomers.perKeyPerDay = 3
        let log = CapturedLog()
        let server = try await TestServer.start(config: config, logger: log.logger)
        defer { Task { await server.stop() } }
        var statuses: [Int] = []
        for index in 0..<5 { statuses.append(await Self.event(server, user: "capped-\(index)", from: 0x7F00_0010 + UInt32(index)).status) }
        #expect(statuses == [200, 200, 200, 429, 429])
        let refused = await Self.event(server, user: "capped-9", from: 0x7F00_0020)
        #expect(refused.body.contains("new_customer_cap"), "\(refused.body)")
        #expect(log.lines.contains { $0.contains("cap of new customers") }, "\(log.lines.suffix(5))")
        #expect(!log.lines.contains { $0.contains("capped-") }, "no user id in the cap's log line")
        let session = try await server.desk.getDeskSession().ok.body.json
        #expect(session.newCustomers?.createdLast24h == 3 && session.newCustomers?.dailyCapPerKey == 3)
        #expect(session.newCustomers?.refusedSinceStart == 3)
        // An operator's key is not capped.
        let made = try await server.desk.createCustomerPortalSession(body: .json(.init(userId: "made-by-an-operator")))
        #expect(try made.ok.body.json.portalUrl.isEmpty == false)
    }

    /// A user id with markup and control characters: stored as it is (case and all), never echoed
    /// into a log line or a page unescaped.
    @Test func aUserIdIsNeverEchoedUnescaped() async throws {
        let log = CapturedLog()
        let server = try await TestServer.start(logger: log.logger)
        defer { Task { await server.stop() } }
        let hostile = "<script>alert(1)</script>\n200 OK forged\u{1b}[2J"
        let session = try await server.app.createCustomerPortalSession(body: .json(.init(userId: hostile))).ok.body.json
        #expect(try await server.count("customers", where: "id LIKE '<script>%'") == 1)
        let page = await RawHTTP.get(port: server.running.port, try #require(URL(string: session.portalUrl)).path, key: nil)
        #expect(page.status == 200 && !page.body.contains("<script>alert"), "\(page.body)")
        // Refused with the id in its message (a cancel of nothing): the reason is logged escaped.
        _ = try await server.app.cancelSubscription(body: .json(.init(userId: hostile, productId: "premium_monthly")))
        for line in log.lines {
            #expect(!line.contains("\n") && !line.contains("\u{1b}"), "\(line)")
        }
        #expect(RedactingLogHandler.printable("a\nb\u{1b}c\u{9b}") == "a\\nb\\u{1b}c\\u{9b}")
    }

    /// Ids are one space across the modes: a live app cannot use a test customer's id, and a
    /// test one cannot make a customer with an id live data holds.
    @Test func anIdOfTheOtherModeIsRefusedNotShared() async throws {
        let server = try await TestServer.start(config: try TestServer.configWithLiveKeys(), testClock: false)
        defer { Task { await server.stop() } }
        let live = server.client(key: TestServer.liveAppKey)
        let made = try await live.createCustomerPortalSession(body: .json(.init(userId: "shared-id")))
        #expect(try made.ok.body.json.portalUrl.isEmpty == false)
        expectFailure(try await server.app.getEntitlements(query: .init(userId: "shared-id")), status: 409, code: "user_id_in_other_mode")
        expectFailure(try await server.app.createCustomerPortalSession(body: .json(.init(userId: "shared-id"))), status: 409, code: "user_id_in_other_mode")
        // Operators of the other mode do not see it at all.
        expectFailure(try await server.desk.getCustomer(path: .init(customerId: "shared-id")), status: 404, code: "unknown_user")
    }
}
