import Foundation
import RetentionDomain
import SaveDeskAPI
import Synchronization

/// The customer portal: a short-lived URL bound to one customer, served by SaveDesk itself as a
/// plain HTML page with resume and cancel-at-period-end actions that go through the same ledger
/// and audit as every other change.
final class PortalService: Sendable {
    typealias Schemas = Components.Schemas
    let store: Store
    let changes: ChangeTransaction
    let clock: DataClock
    let config: ServerConfig
    /// The operations the portal's actions take (resume, cancel at period end).
    let subscriptions: SubscriptionService
    /// Where portal and checkout links start: the configured public base URL, or
    /// "http://127.0.0.1:PORT" once the server is bound.
    let baseURL: Mutex<String>

    init(store: Store, changes: ChangeTransaction, clock: DataClock, config: ServerConfig, subscriptions: SubscriptionService) {
        self.store = store
        self.changes = changes
        self.clock = clock
        self.config = config
        self.subscriptions = subscriptions
        baseURL = Mutex(config.server.publicBaseURL ?? "http://127.0.0.1")
    }

    /// Called once the server is bound; a configured public base URL wins.
    func bound(host: String, port: Int) {
        guard config.server.publicBaseURL == nil else { return }
        baseURL.withLock { $0 = "http://\(host):\(port)" }
    }

    /// Where the portal may send the customer back to: https, or an app scheme the config lists;
    /// never text with spaces or control characters (a raw CR or LF is never stored). Empty is
    /// the same as none.
    func returnURL(_ text: String?) throws(SaveDeskError) -> String? {
        guard let text, !text.isEmpty else { return nil }
        let allowed = ["https"] + config.server.returnURLSchemes
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw .unprocessable("return_url must not hold spaces or control characters; percent-encode them", code: "invalid_return_url")
        }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), allowed.contains(scheme),
            scheme != "https" || url.host?.isEmpty == false
        else {
            throw .unprocessable(
                "return_url must be an https URL or use one of the app schemes \(config.server.returnURLSchemes); got \"\(RequestValidator.quote(text))\"",
                code: "invalid_return_url"
            )
        }
        return text
    }

    func createSession(_ request: Schemas.PortalSessionRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.PortalSessionResponse {
        let minutes = config.billing.portalSessionMinutes
        let base = baseURL.withLock { $0 }
        let returnURL = try returnURL(request.returnUrl)
        if let stripe = subscriptions.stripe, let session = try await stripePortal(stripe, request, returnURL: returnURL, scope: scope) {
            // Stripe keeps this customer's subscription: its own billing portal, audited here.
            return try await changes.mutate(
                scope, operation: "createCustomerPortalSession", request: request, idempotencyKey: idempotencyKey,
                customerId: request.userId, action: "portal.session_created"
            ) { _, now in
                ChangeTransaction.Change(
                    output: Schemas.PortalSessionResponse(portalUrl: session.url, expiresAt: Date(unixSeconds: now + Int64(minutes) * 60)),
                    before: nil, after: nil
                )
            }
        }
        return try await changes.mutate(
            scope, operation: "createCustomerPortalSession", request: request, idempotencyKey: idempotencyKey,
            customerId: request.userId, action: "portal.session_created"
        ) { data, now in
            try await changes.customer(data, id: request.userId, scope: scope, now: now)
            let token = Self.newToken()
            let expires = now + Int64(minutes) * 60
            try await data.portalSessions.insert(.init(
                token: token, customerId: request.userId, expiresAt: expires, returnUrl: returnURL, usedAt: nil, livemode: scope.livemode
            ))
            return ChangeTransaction.Change(
                output: Schemas.PortalSessionResponse(portalUrl: "\(base)/portal/\(token)", expiresAt: Date(unixSeconds: expires)),
                before: nil, after: nil
            )
        }
    }

    /// A Stripe billing-portal session for a customer whose subscription Stripe keeps (nil: not one).
    private func stripePortal(
        _ stripe: StripeBilling, _ request: Schemas.PortalSessionRequest, returnURL: String?, scope: RequestScope
    ) async throws -> StripePortalSession? {
        let stripeCustomer = try await store.read { data -> String? in
            guard let customer = try await data.customers.lookup(request.userId, scope), let id = customer.billingCustomerId,
                try await data.ledger.subscriptions(customerId: customer.id).contains(where: { $0.providerId != nil })
            else { return nil }
            return id
        }
        guard let stripeCustomer else { return nil }
        return try await stripe.portalSession(customer: stripeCustomer, returnURL: returnURL, scope: scope)
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
        return try await store.read { data in
            guard token.count == 64, token.allSatisfy(\.isHexDigit),
                let session = try await data.portalSessions.find(token: token)
            else {
                return .failure(PageError(page: Page(status: 404, html: PortalHTML.message(
                    title: "Link not recognised", body: "This billing link is not valid. Ask support for a new one."))))
            }
            guard let customer = try await data.customers.find(id: session.customerId) else {
                return .failure(PageError(page: Page(status: 404, html: PortalHTML.message(title: "Not found", body: "No such customer."))))
            }
            let now = clock.now(livemode: customer.livemode).unixSeconds
            guard session.expiresAt > now else {
                return .failure(PageError(page: Page(status: 410, html: PortalHTML.message(
                    title: "Link expired", body: "This billing link has expired. Ask support for a new one."))))
            }
            guard session.usedAt == nil else {
                return .failure(PageError(page: Page(status: 410, html: PortalHTML.message(
                    title: "Link used", body: "This billing link was already used for a change. Ask support for a new one."))))
            }
            return .success((customer, session.returnUrl))
        }
    }

    struct PageError: Error { var page: Page }

    /// The portal's page. The token is the credential: the page acts in its customer's mode, as
    /// the customer.
    func page(token: String, notice: String? = nil) async throws -> Page {
        switch try await customer(forToken: token) {
        case .failure(let error): return error.page
        case .success(let (customer, returnURL)):
            let scope = RequestScope(actor: "customer (portal)", principal: "portal", requestId: RequestScope.newRequestId(),
                                     livemode: customer.livemode)
            let entitlements = try await subscriptions.entitlements(userId: customer.id, scope: scope)
            let rows = entitlements.map { entitlement in
                let display = Lifecycle.resolve(
                    entitlement, now: clock.now(livemode: customer.livemode), context: .init(policy: config.billing.lifecyclePolicy)
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
            let notice: String
            switch action {
            case "resume":
                _ = try await subscriptions.resumeSubscription(.init(userId: customer.id, productId: productId), scope: scope, idempotencyKey: nil)
                notice = "Your subscription is running again."
            case "cancel":
                let result = try await subscriptions.cancelSubscription(
                    .init(userId: customer.id, productId: productId, immediate: false), scope: scope, idempotencyKey: nil, reason: "portal")
                notice = "Cancelled. You keep access until \(CalendarDays.display(result.accessUntil, in: .gmt))."
            default:
                throw SaveDeskError.badRequest("unknown action \"\(action)\"")
            }
            let now = clock.now(livemode: customer.livemode).unixSeconds
            try await store.transaction { data in
                try await data.portalSessions.markUsed(token: token, at: now)
            }
            return Page(status: 200, html: PortalHTML.done(customerName: customer.name, notice: notice, returnURL: returnURL))
        } catch let error as SaveDeskError {
            var page = try await page(token: token, notice: error.message)
            page.status = error.status
            return page
        }
    }
}
