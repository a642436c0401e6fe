import Foundation
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

@Suite("Customer portal")
struct PortalTests {
    func session(_ server: TestServer, user: String = "cus_ava") async throws -> (path: String, expires: Date?) {
        let session = try await server.app.createCustomerPortalSession(
            body: .json(.init(userId: user, returnUrl: "https://reader.example.com/account"))
        ).ok.body.json
        let url = try #require(URL(string: session.portalUrl))
        #expect(session.portalUrl.hasPrefix(server.baseURL + "/portal/"), "served by SaveDesk itself")
        return (url.path, session.expiresAt)
    }

    @Test func aPortalPageShowsTheCustomersSubscriptionsAndActs() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (path, expires) = try await session(server)
        #expect(expires == TestServer.start.addingTimeInterval(30 * 60))
        let page = try await server.raw(.GET, path, key: nil)
        #expect(page.status == 200)
        #expect(page.headers.first(name: "Content-Type")?.hasPrefix("text/html") == true)
        #expect(page.body.contains("Billing for Ava Thompson"))
        #expect(page.body.contains("Premium Monthly</strong> (Web) — Active · renews Dec 4, 2026"))
        #expect(page.body.contains("Cancel at period end"))
        #expect(page.body.contains("https://reader.example.com/account"))

        let cancelled = try await server.raw(.POST, path + "/cancel?product_id=premium_monthly", key: nil)
        #expect(cancelled.status == 200)
        #expect(cancelled.body.contains("Cancelled. You keep access until Dec 4, 2026."))
        #expect(cancelled.body.contains("This link has now been used"))
        #expect(cancelled.headers.first(name: "Cache-Control") == "no-store")
        // The token ended with the change.
        let again = try await server.raw(.GET, path, key: nil)
        #expect(again.status == 410 && again.body.contains("already used"))
        #expect(try await server.raw(.POST, path + "/resume?product_id=premium_monthly", key: nil).status == 410)
        let event = try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_ava")).ok.body.json.events[0]
        #expect(event.action == "subscription.cancel_at_period_end" && event.actor == "customer (portal)")
        let entitlement = try await server.app.getEntitlements(query: .init(userId: "cus_ava")).ok.body.json.entitlements[0]
        #expect(!entitlement.willRenew)
    }

    @Test func pausedCustomersCanResumeAndAppStoreOnesAreToldWhere() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let (emma, _) = try await session(server, user: "cus_emma")
        let page = try await server.raw(.GET, emma, key: nil)
        #expect(page.body.contains("Resume now"))
        let resumed = try await server.raw(.POST, emma + "/resume?product_id=premium_yearly", key: nil)
        #expect(resumed.body.contains("Your subscription is running again."))
        let (chloe, _) = try await session(server, user: "cus_chloe")
        let apple = try await server.raw(.GET, chloe, key: nil)
        #expect(apple.body.contains("Manage this one in the App Store"))
        #expect(!apple.body.contains("Cancel at period end"))
        let refused = try await server.raw(.POST, chloe + "/cancel?product_id=premium_monthly", key: nil)
        #expect(refused.status == 422)
        #expect(refused.body.contains("billed by the App Store"))
    }

    @Test func forgedAndExpiredLinksGetClearPages() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let forged = try await server.raw(.GET, "/portal/" + String(repeating: "ab", count: 32), key: nil)
        #expect(forged.status == 404 && forged.body.contains("Link not recognised"))
        let junk = try await server.raw(.GET, "/portal/../../etc/passwd", key: nil)
        #expect(junk.status == 404)
        let (path, _) = try await session(server)
        server.clock.advance(by: 31 * 60)
        let expired = try await server.raw(.GET, path, key: nil)
        #expect(expired.status == 410 && expired.body.contains("Link expired"))
        let action = try await server.raw(.POST, path + "/cancel?product_id=premium_monthly", key: nil)
        #expect(action.status == 410)
        let entitlement = try await server.app.getEntitlements(query: .init(userId: "cus_ava")).ok.body.json.entitlements[0]
        #expect(entitlement.willRenew, "an expired link changes nothing")
    }

    @Test func aNewUserGetsASessionAndReturnURLsAreAbsolute() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        // A user id the server has not seen: the customer is made with the session, and has nothing.
        let session = try await server.app.createCustomerPortalSession(body: .json(.init(userId: "cus_nobody"))).ok.body.json
        #expect(try await server.count("customers", where: "id = 'cus_nobody'") == 1)
        let page = await RawHTTP.get(port: server.running.port, try #require(URL(string: session.portalUrl)).path, key: nil)
        #expect(page.status == 200, "\(page.body)")
        expectFailure(try await server.app.createCustomerPortalSession(body: .json(.init(userId: "cus_ava", returnUrl: "account"))),
                      status: 422, code: "invalid_return_url")
    }

    @Test func returnURLsAreHttpsOrAListedAppSchemeAndLinksUseThePublicBaseURL() async throws {
        var config = try TestServer.demoConfig()
        config.server.publicBaseURL = "https://billing.reader.example.com"
        config.server.returnURLSchemes = ["savedeskreader"]
        let server = try await TestServer.start(config: config)
        defer { Task { await server.stop() } }
        for bad in ["javascript:alert(document.cookie)", "http://reader.example.com/account", "data:text/html,hi", "https://", "otherapp://x"] {
            expectFailure(try await server.app.createCustomerPortalSession(body: .json(.init(userId: "cus_ava", returnUrl: bad))),
                          status: 422, code: "invalid_return_url")
        }
        let https = try await server.app.createCustomerPortalSession(body: .json(.init(userId: "cus_ava", returnUrl: "https://reader.example.com/a"))).ok.body.json
        #expect(https.portalUrl.hasPrefix("https://billing.reader.example.com/portal/"))
        let app = try await server.app.createCustomerPortalSession(body: .json(.init(userId: "cus_ava", returnUrl: "savedeskreader://account"))).ok.body.json
        let page = try await server.raw(.GET, try #require(URL(string: app.portalUrl)).path, key: nil)
        #expect(page.body.contains("savedeskreader://account"))
        #expect(page.headers.first(name: "Cache-Control") == "no-store")
        let checkout = try await server.app.createCheckout(body: .json(.init(productId: "premium_yearly", userId: "cus_ava"))).ok.body.json
        #expect(checkout.checkoutUrl.hasPrefix("https://billing.reader.example.com/checkout/txn_"))
        let checkoutPage = try await server.raw(.GET, try #require(URL(string: checkout.checkoutUrl)).path, key: nil)
        #expect(checkoutPage.status == 200 && checkoutPage.headers.first(name: "Cache-Control") == "no-store")
        // API answers are not cached either.
        let api = try await server.raw(.GET, "/v1/iap/cancel-flow")
        #expect(api.headers.first(name: "Cache-Control") == "no-store")
    }
}
