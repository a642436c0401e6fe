import Foundation
import RetentionDomain
import SQLKit
import SaveDeskAPI
import Synchronization

/// The customer portal: a short-lived URL bound to one customer, served by SaveDesk itself as a
/// plain HTML page with resume and cancel-at-period-end actions that go through the same ledger
/// and audit as every other change.
final class PortalService: Sendable {
    typealias Schemas = Components.Schemas
    let subscriptions: SubscriptionService
    /// Where portal and checkout links start: the configured public base URL, or
    /// "http://127.0.0.1:PORT" once the server is bound.
    let baseURL: Mutex<String>

    init(subscriptions: SubscriptionService) {
        self.subscriptions = subscriptions
        baseURL = Mutex(subscriptions.config.server.publicBaseURL ?? "http://127.0.0.1")
    }

    /// Called once the server is bound; a configured public base URL wins.
    func bound(host: String, port: Int) {
        guard subscriptions.config.server.publicBaseURL == nil else { return }
        baseURL.withLock { $0 = "http://\(host):\(port)" }
    }

    /// Where the portal may send the customer back to: https, or an app scheme the config lists.
    func checkReturnURL(_ text: String) throws(SaveDeskError) {
        let allowed = ["https"] + subscriptions.config.server.returnURLSchemes
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), allowed.contains(scheme),
            scheme != "https" || url.host?.isEmpty == false
        else {
            throw .badRequest(
                "return_url must be an https URL or use one of the app schemes \(subscriptions.config.server.returnURLSchemes); got \"\(RequestValidator.quote(text))\"",
                code: "invalid_return_url"
            )
        }
    }

    func createSession(_ request: Schemas.PortalSessionRequest, idempotencyKey: String?) async throws -> Schemas.PortalSessionResponse {
        let minutes = subscriptions.config.billing.portalSessionMinutes
        let base = baseURL.withLock { $0 }
        if let returnURL = request.returnUrl { try checkReturnURL(returnURL) }
        return try await subscriptions.mutate(
            operation: "createCustomerPortalSession", request: request, idempotencyKey: idempotencyKey,
            customerId: request.userId, action: "portal.session_created"
        ) { db, now in
            _ = try await subscriptions.customer(db, id: request.userId)
            let token = Self.newToken()
            let expires = now + Int64(minutes) * 60
            try await db.insert(into: "portal_sessions").columns("token", "customer_id", "expires_at", "return_url")
                .values(SQLBindings.of(token, request.userId, expires, request.returnUrl)).run()
            return SubscriptionService.Change(
                output: Schemas.PortalSessionResponse(portalUrl: "\(base)/portal/\(token)", expiresAt: Date(unixSeconds: expires)),
                before: nil, after: nil
            )
        }
    }

    static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// A portal request's outcome: an HTTP status and a page.
    struct Page: Sendable {
        var status: Int
        var html: String
    }

    /// The customer a token belongs to, or the page to show instead (404 forged, 410 expired or
    /// already used for a change).
    func customer(forToken token: String) async throws -> Result<(CustomerRecord, String?), PageError> {
        return try await subscriptions.store.read { db in
            guard token.count == 64, token.allSatisfy(\.isHexDigit),
                let row = try await db.select().columns("customer_id", "expires_at", "return_url", "used_at").from("portal_sessions")
                    .where("token", .equal, token).first()
            else {
                return .failure(PageError(page: Page(status: 404, html: PortalHTML.message(
                    title: "Link not recognised", body: "This billing link is not valid. Ask support for a new one."))))
            }
            let customerId = try row.decode(column: "customer_id", as: String.self)
            guard let customer = try await db.customer(id: customerId) else {
                return .failure(PageError(page: Page(status: 404, html: PortalHTML.message(title: "Not found", body: "No such customer."))))
            }
            let now = subscriptions.now(livemode: customer.livemode).unixSeconds
            guard try row.decode(column: "expires_at", as: Int64.self) > now else {
                return .failure(PageError(page: Page(status: 410, html: PortalHTML.message(
                    title: "Link expired", body: "This billing link has expired. Ask support for a new one."))))
            }
            guard try row.decode(column: "used_at", as: Int64?.self) == nil else {
                return .failure(PageError(page: Page(status: 410, html: PortalHTML.message(
                    title: "Link used", body: "This billing link was already used for a change. Ask support for a new one."))))
            }
            return .success((customer, try row.decodeNil(column: "return_url") ? nil : try row.decode(column: "return_url", as: String.self)))
        }
    }

    struct PageError: Error { var page: Page }

    func page(token: String, notice: String? = nil) async throws -> Page {
        switch try await customer(forToken: token) {
        case .failure(let error): return error.page
        case .success(let (customer, returnURL)):
            let scope = RequestScope(actor: "customer (portal)", principal: "portal", requestId: RequestScope.newRequestId(),
                                     livemode: customer.livemode)
            let entitlements = try await RequestScope.$current.withValue(scope) {
                try await subscriptions.entitlements(userId: customer.id)
            }
            let config = subscriptions.config
            let rows = entitlements.map { entitlement in
                let display = Lifecycle.resolve(
                    entitlement, now: subscriptions.now(livemode: customer.livemode), context: .init(policy: config.billing.lifecyclePolicy)
                )
                return PortalHTML.Row(
                    productId: entitlement.productId,
                    productName: config.product(id: entitlement.productId)?.displayName ?? entitlement.productId,
                    isWeb: entitlement.source == .webCheckout, summary: display.summary,
                    canResume: entitlement.status == .paused,
                    canCancel: entitlement.source == .webCheckout && entitlement.willRenew
                        && [.active, .trialing, .paused].contains(entitlement.status)
                )
            }
            return Page(status: 200, html: PortalHTML.portal(customerName: customer.name, token: token, rows: rows,
                                                            notice: notice, returnURL: returnURL))
        }
    }

    /// A portal action (resume, cancel at period end) on one product, as the customer. A change
    /// uses the token up: the page that follows says what was done, and the link ends there.
    func act(token: String, action: String, productId: String) async throws -> Page {
        guard case .success(let (customer, returnURL)) = try await customer(forToken: token) else { return try await page(token: token) }
        let scope = RequestScope(actor: "customer (portal)", principal: "portal:" + Fingerprint.of(text: token),
                                 requestId: RequestScope.newRequestId(), livemode: customer.livemode)
        do {
            let notice: String = try await RequestScope.$current.withValue(scope) {
                switch action {
                case "resume":
                    _ = try await subscriptions.resumeSubscription(.init(userId: customer.id, productId: productId), idempotencyKey: nil)
                    return "Your subscription is running again."
                case "cancel":
                    let result = try await subscriptions.cancelSubscription(
                        .init(userId: customer.id, productId: productId, immediate: false), idempotencyKey: nil, reason: "portal")
                    return "Cancelled. You keep access until \(CalendarDays.display(result.accessUntil, in: .gmt))."
                default:
                    throw SaveDeskError.badRequest("unknown action \"\(action)\"")
                }
            }
            let now = subscriptions.now(livemode: customer.livemode).unixSeconds
            try await subscriptions.store.transaction { db in
                try await db.update("portal_sessions").set("used_at", to: now).where("token", .equal, token).run()
            }
            return Page(status: 200, html: PortalHTML.done(customerName: customer.name, notice: notice, returnURL: returnURL))
        } catch let error as SaveDeskError {
            var page = try await page(token: token, notice: error.message)
            page.status = error.status
            return page
        }
    }
}
