import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

@testable import SaveDeskServer

/// A Stripe test double on loopback, keeping state for exactly the calls SaveDesk makes, and as
/// strict as Stripe: a wrong key is 401, an unknown parameter is 400 `parameter_unknown`, an
/// Idempotency-Key used again with other parameters is 400 `idempotency_error` (used again with the
/// same ones, the first answer is replayed with `Idempotent-Replayed: true`), a missing object is
/// 404 `resource_missing`, a coupon id taken is 400 `resource_already_exists`, all in Stripe's error
/// envelope. Objects start from Stripe's published fixtures (Fixtures/stripe) with only the fields
/// it keeps state for overwritten. It also refuses what SaveDesk promises never to do: a POST or a
/// DELETE without an Idempotency-Key, a request without the pinned Stripe-Version.
///
/// Faults are queued per path: a 500 before anything is applied, a stall before applying (a
/// timeout), or a stall after applying (the change is made and its answer arrives too late: the
/// failure in the middle of an action). Every change makes an event, kept for the test to deliver,
/// signed, in any order, as often as it likes.
public final class StripeDouble: Sendable {
    public enum Fault: Sendable {
        /// An error answer with these headers, before anything is applied (429 with Retry-After,
        /// 500 with Stripe-Should-Retry: false…).
        case answer(status: Int, headers: [String: String])
        case serverError
        case stallBefore(Duration)
        case stallAfter(Duration)
    }

    public struct Event: Sendable {
        public let id: String
        public let type: String
        public let body: Data
        public let created: Int64

        public init(id: String, type: String, body: Data, created: Int64) {
            self.id = id
            self.type = type
            self.body = body
            self.created = created
        }
    }

    public let secretKey: String
    public let webhookSecret: String
    private let state = Mutex(State())
    private let running: Task<Void, any Error>
    public let port: Int

    struct State {
        var objects: [String: [String: Any]] = [:]
        var idempotency: [String: (fingerprint: String, status: Int, body: Data)] = [:]
        var faults: [(method: String, prefix: String, fault: Fault)] = []
        var events: [Event] = []
        public var requests: [(method: String, path: String, key: String?, form: [(String, String)])] = []
        var now: Int64 = 1_795_348_800
        var counter = 0
        /// What each Checkout Session was made with (its page, when paid, makes the subscription).
        var sessions: [String: [(String, String)]] = [:]
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    public static func fixture(_ name: String) -> [String: Any] {
        let url = Bundle.module.url(forResource: "Fixtures/stripe/\(name)", withExtension: "json")!
        return try! JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
    }

    public static func start(secretKey: String = "sk_test_double_0123456789", webhookSecret: String = "whsec_double_0123456789") async throws -> StripeDouble {
        let (bound, continuation) = AsyncStream<Int>.makeStream()
        let box = Mutex<StripeDouble?>(nil)
        let router = Router()
        router.on("**", method: .get) { request, _ in try await box.withLock { $0! }.handle(request) }
        router.on("**", method: .post) { request, _ in try await box.withLock { $0! }.handle(request) }
        router.on("**", method: .delete) { request, _ in try await box.withLock { $0! }.handle(request) }
        let app = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            },
            logger: Logger(label: "stripe-double") { _ in SwiftLogNoOpLogHandler() }
        )
        // No signal handlers (a test process is not the double's), and a double that cannot start
        // ends the wait for its port rather than leaving it forever.
        let task = Task {
            do { try await app.runService(gracefulShutdownSignals: []) } catch { continuation.finish(); throw error }
        }
        var port = 0
        for await value in bound { port = value }
        guard port != 0 else {
            task.cancel()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "the Stripe double did not start"])
        }
        let double = StripeDouble(secretKey: secretKey, webhookSecret: webhookSecret, running: task, port: port)
        box.withLock { $0 = double }
        return double
    }

    private init(secretKey: String, webhookSecret: String, running: Task<Void, any Error>, port: Int) {
        self.secretKey = secretKey
        self.webhookSecret = webhookSecret
        self.running = running
        self.port = port
    }

    public func stop() { running.cancel() }

    // MARK: What tests set and read

    public func inject(_ fault: Fault, method: String, path prefix: String) { state.withLock { $0.faults.append((method, prefix, fault)) } }

    public func object(_ id: String) -> [String: Any]? { state.withLock { $0.objects[id] } }

    public var events: [Event] { state.withLock { $0.events } }

    /// The requests SaveDesk made: method, path, Idempotency-Key, parameters.
    public var requests: [(method: String, path: String, key: String?, form: [(String, String)])] { state.withLock { $0.requests } }

    /// Moves the double's clock (the `created` of the events it makes next).
    public func advance(_ seconds: Int64) { state.withLock { $0.now += seconds } }

    /// A subscription made as Stripe's dashboard would (no SaveDesk request): for `customerId`,
    /// at `price`, linked to SaveDesk's customer by its metadata.
    public func dashboardSubscription(savedeskCustomer: String, price: String, status: String = "active", periodEnd: Int64) -> String {
        state.withLock { state in
            let customer = makeCustomer(&state, email: "\(savedeskCustomer)@example.com", metadata: ["savedesk_customer_id": savedeskCustomer])
            let subscription = makeSubscription(&state, customer: customer, price: price, status: status, periodEnd: periodEnd,
                                                metadata: ["savedesk_customer_id": savedeskCustomer])
            emit(&state, "customer.subscription.created", subscription)
            return subscription["id"] as! String
        }
    }

    /// The customer confirms the payment sheet with a test card: a trialing subscription gets its
    /// card saved (the SetupIntent succeeds); an incomplete one's first invoice is paid.
    public func confirmPayment(_ id: String) {
        state.withLock { state in
            guard var subscription = state.objects[id] else { return }
            if subscription["status"] as? String == "trialing" {
                subscription["default_payment_method"] = "pm_card_visa"
                subscription["pending_setup_intent"] = NSNull()
                state.objects[id] = subscription
                emit(&state, "customer.subscription.updated", subscription)
            } else {
                subscription["status"] = "active"
                subscription["default_payment_method"] = "pm_card_visa"
                state.objects[id] = subscription
                emit(&state, "customer.subscription.updated", subscription)
                if let invoiceId = subscription["latest_invoice"] as? String, var invoice = state.objects[invoiceId] {
                    invoice["status"] = "paid"
                    state.objects[invoiceId] = invoice
                    emit(&state, "invoice.paid", invoice)
                }
            }
        }
    }

    /// A renewal whose payment fails: the subscription goes past due, and its invoice's
    /// `invoice.payment_failed` event is kept (with the subscription's update).
    public func failRenewal(_ id: String) {
        state.withLock { state in
            guard var subscription = state.objects[id] else { return }
            subscription["status"] = "past_due"
            state.objects[id] = subscription
            var invoice = Self.fixture("invoice")
            let invoiceId = nextId(&state, "in")
            invoice["id"] = invoiceId
            invoice["status"] = "open"
            invoice["customer"] = subscription["customer"]
            invoice["parent"] = ["type": "subscription_details", "quote_details": NSNull(),
                                 "subscription_details": ["subscription": id, "metadata": [String: String](), "subscription_proration_date": NSNull()]]
            state.objects[invoiceId] = invoice
            emit(&state, "invoice.payment_failed", invoice)
            emit(&state, "customer.subscription.updated", subscription)
        }
    }

    /// The customer pays on a Checkout Session's page: Stripe makes the customer (if the session
    /// had none) and the subscription, card saved, and sends its events.
    public func completeCheckoutSession(url: String) {
        state.withLock { state in
            let id = String(url.split(separator: "/").last ?? "")
            guard var session = state.objects[id], let form = state.sessions[id] else { return }
            let values = Dictionary(form, uniquingKeysWith: { $1 })
            let customer = values["customer"] ?? makeCustomer(&state, email: values["customer_email"], metadata: [:])
            var metadata: [String: String] = [:]
            let prefix = "subscription_data[metadata]["
            for (name, value) in form where name.hasPrefix(prefix) { metadata[String(name.dropFirst(prefix.count).dropLast())] = value }
            let trialEnd = values["subscription_data[trial_end]"].flatMap(Int64.init)
            var subscription = makeSubscription(
                &state, customer: customer, price: values["line_items[0][price]"] ?? "", status: trialEnd == nil ? "active" : "trialing",
                periodEnd: trialEnd ?? state.now + 30 * 86_400, metadata: metadata
            )
            let subscriptionId = subscription["id"] as! String
            subscription["trial_end"] = trialEnd ?? NSNull()
            subscription["default_payment_method"] = "pm_card_visa"
            if let coupon = values["discounts[0][coupon]"] { subscription["discounts"] = [attach(&state, coupon: coupon, to: subscriptionId)] }
            state.objects[subscriptionId] = subscription
            session["status"] = "complete"
            session["payment_status"] = trialEnd == nil ? "paid" : "no_payment_required"
            session["customer"] = customer
            session["subscription"] = subscriptionId
            state.objects[id] = session
            emit(&state, "customer.subscription.created", subscription)
            emit(&state, "checkout.session.completed", session)
        }
    }

    private func makeSubscription(
        _ state: inout State, customer: String, price: String, status: String, periodEnd: Int64, metadata: [String: String]
    ) -> [String: Any] {
        var subscription = Self.fixture("subscription")
        let id = nextId(&state, "sub")
        subscription["id"] = id
        subscription["customer"] = customer
        subscription["status"] = status
        subscription["created"] = state.now
        subscription["start_date"] = state.now
        subscription["cancel_at_period_end"] = false
        subscription["default_payment_method"] = NSNull()
        subscription["pending_setup_intent"] = NSNull()
        subscription["latest_invoice"] = NSNull()
        subscription["cancel_at"] = NSNull()
        subscription["canceled_at"] = NSNull()
        subscription["ended_at"] = NSNull()
        subscription["trial_end"] = NSNull()
        subscription["trial_start"] = NSNull()
        subscription["pause_collection"] = NSNull()
        subscription["discounts"] = [Any]()
        subscription["livemode"] = false
        subscription["metadata"] = metadata
        subscription["cancellation_details"] = ["comment": NSNull(), "feedback": NSNull(), "reason": NSNull()]
        var items = subscription["items"] as! [String: Any]
        var item = (items["data"] as! [[String: Any]])[0]
        var priceObject = item["price"] as! [String: Any]
        priceObject["id"] = price
        item["price"] = priceObject
        item["id"] = nextId(&state, "si")
        item["subscription"] = id
        item["current_period_start"] = state.now
        item["current_period_end"] = periodEnd
        items["data"] = [item]
        items["url"] = "/v1/subscription_items?subscription=\(id)"
        subscription["items"] = items
        state.objects[id] = subscription
        return subscription
    }

    /// A change made in Stripe's dashboard (no SaveDesk request), with its event.
    public func dashboardChange(_ id: String, type: String = "customer.subscription.updated", _ change: (inout [String: Any]) -> Void) {
        state.withLock { state in
            guard var object = state.objects[id] else { return }
            change(&object)
            state.objects[id] = object
            emit(&state, type, object)
        }
    }

    /// POSTs an event to SaveDesk's webhook, signed with `secret` (the double's own by default) at
    /// `timestamp`. Answers the status and body.
    public func deliver(_ event: Event, to baseURL: String, timestamp: Int64, secret: String? = nil, signature: String? = nil) async throws -> (Int, String) {
        var request = HTTPClientRequest(url: baseURL + "/v1/stripe/webhook")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json; charset=utf-8")
        request.headers.add(
            name: "Stripe-Signature",
            value: signature ?? StripeSignature.header(body: event.body, secrets: [secret ?? webhookSecret], timestamp: timestamp)
        )
        request.body = .bytes(ByteBuffer(data: event.body))
        let response = try await HTTPClient.shared.execute(request, timeout: TimeAmount(answerPatience))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: body))
    }

    // MARK: The API

    private static let allowed: [String: Set<String>] = [
        "POST /v1/coupons": ["id", "percent_off", "duration", "duration_in_months", "name", "metadata[*]"],
        "POST /v1/customers": ["email", "name", "metadata[*]"],
        "POST /v1/prices": ["currency", "unit_amount", "recurring[interval]", "product_data[name]"],
        "POST /v1/subscriptions": [
            "customer", "items[0][price]", "payment_behavior", "payment_settings[save_default_payment_method]", "trial_end",
            "trial_settings[end_behavior][missing_payment_method]", "discounts[0][coupon]", "metadata[*]", "expand[*]",
        ],
        "POST /v1/subscriptions/:id": [
            "cancel_at_period_end", "cancellation_details[comment]", "cancellation_details[feedback]", "pause_collection",
            "pause_collection[behavior]", "pause_collection[resumes_at]", "discounts[0][coupon]", "trial_end", "proration_behavior",
            "metadata[*]", "items[0][id]", "items[0][price]",
        ],
        "DELETE /v1/subscriptions/:id": ["cancellation_details[comment]", "cancellation_details[feedback]", "invoice_now", "prorate"],
        "POST /v1/billing_portal/sessions": ["customer", "return_url"],
        "POST /v1/checkout/sessions": [
            "mode", "customer", "customer_email", "client_reference_id", "line_items[0][price]", "line_items[0][quantity]",
            "subscription_data[trial_end]", "subscription_data[metadata][*]", "discounts[0][coupon]", "success_url", "cancel_url",
        ],
        "GET /v1/coupons/:id": [],
        "GET /v1/subscriptions/:id": [],
    ]

    private func handle(_ request: Request) async throws -> Response {
        let method = request.method.rawValue
        let path = request.uri.path
        var body = try await request.body.collect(upTo: 1 << 20)
        let text = body.readString(length: body.readableBytes) ?? ""
        let form = Self.parse(method == "GET" ? (request.uri.query ?? "") : text)
        let key = request.headers[HTTPField.Name("Idempotency-Key")!]
        let fault: Fault? = state.withLock { state in
            state.requests.append((method, path, key, form))
            guard let index = state.faults.firstIndex(where: { $0.method == method && path.hasPrefix($0.prefix) }) else { return nil }
            return state.faults.remove(at: index).fault
        }
        guard request.headers[.authorization] == "Bearer \(secretKey)" else {
            return Self.error(401, type: "invalid_request_error", code: nil, "Invalid API Key provided")
        }
        guard request.headers[HTTPField.Name("Stripe-Version")!] == StripeSettings.apiVersion else {
            return Self.error(400, type: "invalid_request_error", code: "invalid_stripe_version", "SaveDesk pins its Stripe-Version")
        }
        let parts = path.split(separator: "/").map(String.init)  // v1, resource, id
        let collections: Set<String> = ["/v1/billing_portal/sessions", "/v1/checkout/sessions"]
        let route = "\(method) " + (parts.count > 2 && !collections.contains(path) ? "/" + parts[0...1].joined(separator: "/") + "/:id" : path)
        guard let allowed = Self.allowed[route] else {
            return Self.error(404, type: "invalid_request_error", code: "resource_missing", "Unrecognized request URL (\(method): \(path))")
        }
        let prefixes = allowed.filter { $0.hasSuffix("[*]") }.map { String($0.dropLast(2)) }
        for (name, _) in form where !allowed.contains(name) && !prefixes.contains(where: { name.hasPrefix($0) }) {
            return Self.error(400, type: "invalid_request_error", code: "parameter_unknown", "Received unknown parameter: \(name)", param: name)
        }
        if method != "GET" {
            guard let key else {
                return Self.error(400, type: "invalid_request_error", code: nil, "SaveDesk sends an Idempotency-Key with every change")
            }
            let fingerprint = "\(method) \(path) \(text)"
            if let stored = state.withLock({ $0.idempotency[key] }) {
                guard stored.fingerprint == fingerprint else {
                    return Self.error(400, type: "idempotency_error", code: nil,
                        "Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '\(key)' if you meant to execute a different request.")
                }
                var response = Response(status: .init(code: stored.status), body: .init(byteBuffer: ByteBuffer(data: stored.body)))
                response.headers[.contentType] = "application/json"
                response.headers[HTTPField.Name("Idempotent-Replayed")!] = "true"
                return response
            }
        }
        switch fault {
        case .serverError?:
            return Self.error(500, type: "api_error", code: nil, "An unknown error occurred")
        case .answer(let status, let headers)?:
            var response = Self.error(status, type: status == 429 ? "invalid_request_error" : "api_error",
                                      code: status == 429 ? "rate_limit" : nil, "injected")
            for (name, value) in headers { response.headers[HTTPField.Name(name)!] = value }
            return response
        case .stallBefore(let duration)?:
            try await Task.sleep(for: duration)
            return Self.error(500, type: "api_error", code: nil, "stalled")
        default:
            break
        }
        let (status, object) = state.withLock { state in apply(&state, method: method, route: route, id: parts.count > 2 ? parts[2] : nil, form: form) }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        if method != "GET", let key, status < 500 {
            state.withLock { $0.idempotency[key] = ("\(method) \(path) \(text)", status, data) }
        }
        if case .stallAfter(let duration)? = fault { try await Task.sleep(for: duration) }
        var response = Response(status: .init(code: status), body: .init(byteBuffer: ByteBuffer(data: data)))
        response.headers[.contentType] = "application/json"
        return response
    }

    private func apply(_ state: inout State, method: String, route: String, id: String?, form: [(String, String)]) -> (Int, [String: Any]) {
        let values = Dictionary(form, uniquingKeysWith: { $1 })
        switch route {
        case "GET /v1/coupons/:id", "GET /v1/subscriptions/:id":
            guard let id, let object = state.objects[id] else { return Self.missing(id ?? "") }
            return (200, object)
        case "POST /v1/coupons":
            let id = values["id"] ?? nextId(&state, "coupon")
            if state.objects[id] != nil {
                return (400, Self.envelope(type: "invalid_request_error", code: "resource_already_exists", "Coupon already exists.", param: "id"))
            }
            guard let duration = values["duration"], ["once", "repeating", "forever"].contains(duration) else {
                return (400, Self.envelope(type: "invalid_request_error", code: "parameter_invalid_empty", "duration is required", param: "duration"))
            }
            var coupon = Self.fixture("coupon")
            coupon["id"] = id
            coupon["percent_off"] = values["percent_off"].flatMap(Double.init) ?? NSNull()
            coupon["duration"] = duration
            coupon["duration_in_months"] = duration == "repeating" ? (values["duration_in_months"].flatMap(Int.init) ?? NSNull()) : NSNull()
            coupon["name"] = values["name"] ?? NSNull()
            coupon["created"] = state.now
            coupon["redeem_by"] = NSNull()
            coupon["metadata"] = Self.metadata(form)
            state.objects[id] = coupon
            return (200, coupon)
        case "POST /v1/subscriptions":
            guard let customer = values["customer"], state.objects[customer] != nil else { return Self.missing(values["customer"] ?? "") }
            guard let price = values["items[0][price]"] else {
                return (400, Self.envelope(type: "invalid_request_error", code: "parameter_missing", "Missing required param: items.", param: "items"))
            }
            let trialEnd = values["trial_end"].flatMap(Int64.init)
            var subscription = makeSubscription(
                &state, customer: customer, price: price, status: trialEnd == nil ? "incomplete" : "trialing",
                periodEnd: trialEnd ?? state.now + 30 * 86_400, metadata: Self.metadata(form)
            )
            let id = subscription["id"] as! String
            var setupIntent: [String: Any]?
            var invoice: [String: Any]?
            if let trialEnd {
                subscription["trial_end"] = trialEnd
                subscription["trial_start"] = state.now
                let setupId = nextId(&state, "seti")
                setupIntent = ["id": setupId, "object": "setup_intent", "client_secret": "\(setupId)_secret_double", "status": "requires_payment_method"]
                state.objects[setupId] = setupIntent
                subscription["pending_setup_intent"] = setupId
            } else {
                var made = Self.fixture("invoice")
                let invoiceId = nextId(&state, "in")
                made["id"] = invoiceId
                made["status"] = "open"
                made["customer"] = customer
                made["parent"] = ["type": "subscription_details", "quote_details": NSNull(),
                                  "subscription_details": ["subscription": id, "metadata": [String: String](), "subscription_proration_date": NSNull()]]
                made["confirmation_secret"] = ["client_secret": "pi_\(invoiceId)_secret_double", "type": "payment_intent"]
                state.objects[invoiceId] = made
                invoice = made
                subscription["latest_invoice"] = invoiceId
            }
            if let coupon = values["discounts[0][coupon]"] {
                guard state.objects[coupon] != nil else { return Self.missing(coupon) }
                subscription["discounts"] = [attach(&state, coupon: coupon, to: id)]
            }
            state.objects[id] = subscription
            emit(&state, "customer.subscription.created", subscription)
            let expand = form.filter { $0.0.hasPrefix("expand[") }.map(\.1)
            var answer = subscription
            if expand.contains("latest_invoice.confirmation_secret") || expand.contains("latest_invoice"), let invoice { answer["latest_invoice"] = invoice }
            if expand.contains("pending_setup_intent"), let setupIntent { answer["pending_setup_intent"] = setupIntent }
            return (200, answer)
                case "POST /v1/prices":
            var price = (Self.fixture("subscription")["items"] as! [String: Any])["data"].flatMap { ($0 as? [[String: Any]])?.first?["price"] as? [String: Any] } ?? [:]
            price["id"] = nextId(&state, "price")
            price["currency"] = values["currency"] ?? "usd"
            price["unit_amount"] = values["unit_amount"].flatMap(Int64.init) ?? 0
            price["unit_amount_decimal"] = values["unit_amount"] ?? "0"
            price["created"] = state.now
            state.objects[price["id"] as! String] = price
            return (200, price)
        case "POST /v1/customers":
            let id = makeCustomer(&state, email: values["email"], metadata: Self.metadata(form))
            return (200, state.objects[id]!)
        case "POST /v1/checkout/sessions":
            guard values["mode"] == "subscription", values["line_items[0][price]"] != nil else {
                return (400, Self.envelope(type: "invalid_request_error", code: "parameter_missing", "mode and line_items are required"))
            }
            if let customer = values["customer"], state.objects[customer] == nil { return Self.missing(customer) }
            var session = Self.fixture("checkout.session")
            let id = "cs_test_" + nextId(&state, "double")
            session["id"] = id
            session["mode"] = "subscription"
            session["status"] = "open"
            session["payment_status"] = "unpaid"
            session["customer"] = values["customer"] ?? NSNull()
            session["client_reference_id"] = values["client_reference_id"] ?? NSNull()
            session["success_url"] = values["success_url"] ?? NSNull()
            session["cancel_url"] = values["cancel_url"] ?? NSNull()
            session["subscription"] = NSNull()
            session["url"] = "https://checkout.stripe.com/c/pay/\(id)"
            session["livemode"] = false
            session["created"] = state.now
            state.objects[id] = session
            state.sessions[id] = form
            return (200, session)
                case "POST /v1/billing_portal/sessions":
            guard let customer = values["customer"], state.objects[customer] != nil else { return Self.missing(values["customer"] ?? "") }
            var session = Self.fixture("billing_portal.session")
            session["id"] = nextId(&state, "bps")
            session["customer"] = customer
            session["return_url"] = values["return_url"] ?? NSNull()
            session["url"] = "https://billing.stripe.com/p/session/test_\(state.counter)"
            session["livemode"] = false
            return (200, session)
        case "POST /v1/subscriptions/:id", "DELETE /v1/subscriptions/:id":
            guard let id, var subscription = state.objects[id] else { return Self.missing(id ?? "") }
            if subscription["status"] as? String == "canceled" {
                return (400, Self.envelope(type: "invalid_request_error", code: "resource_missing",
                                           "A canceled subscription can only update its cancellation_details and metadata."))
            }
            var details = subscription["cancellation_details"] as? [String: Any] ?? [:]
            if let comment = values["cancellation_details[comment]"] { details["comment"] = comment }
            if let feedback = values["cancellation_details[feedback]"] { details["feedback"] = feedback }
            subscription["cancellation_details"] = details
            if method == "DELETE" {
                subscription["status"] = "canceled"
                subscription["canceled_at"] = state.now
                subscription["ended_at"] = state.now
                details["reason"] = "cancellation_requested"
                subscription["cancellation_details"] = details
                state.objects[id] = subscription
                emit(&state, "customer.subscription.deleted", subscription)
                return (200, subscription)
            }
            if let flag = values["cancel_at_period_end"] {
                subscription["cancel_at_period_end"] = flag == "true"
                subscription["canceled_at"] = flag == "true" ? state.now : NSNull()
            }
            if values["pause_collection"] == "" {
                subscription["pause_collection"] = NSNull()
            } else if let behavior = values["pause_collection[behavior]"] {
                guard ["void", "keep_as_draft", "mark_uncollectible"].contains(behavior) else {
                    return (400, Self.envelope(type: "invalid_request_error", code: "parameter_invalid_string", "Invalid behavior", param: "pause_collection[behavior]"))
                }
                subscription["pause_collection"] = ["behavior": behavior, "resumes_at": values["pause_collection[resumes_at]"].flatMap(Int64.init) ?? NSNull()]
            }
            if let coupon = values["discounts[0][coupon]"] {
                guard state.objects[coupon] != nil else { return Self.missing(coupon) }
                subscription["discounts"] = [attach(&state, coupon: coupon, to: id)]
            }
            if let trialEnd = values["trial_end"].flatMap(Int64.init) {
                subscription["trial_end"] = trialEnd
                subscription["status"] = "trialing"
            }
            if let price = values["items[0][price]"] {
                var items = subscription["items"] as! [String: Any]
                var item = (items["data"] as! [[String: Any]])[0]
                guard values["items[0][id]"] == item["id"] as? String else {
                    return (400, Self.envelope(type: "invalid_request_error", code: "resource_missing", "No such subscription item", param: "items[0][id]"))
                }
                var priceObject = item["price"] as! [String: Any]
                priceObject["id"] = price
                item["price"] = priceObject
                item["current_period_start"] = state.now
                item["current_period_end"] = state.now + 365 * 86_400
                items["data"] = [item]
                subscription["items"] = items
            }
            state.objects[id] = subscription
            emit(&state, "customer.subscription.updated", subscription)
            return (200, subscription)
        default:
            return Self.missing(id ?? "")
        }
    }

    private func attach(_ state: inout State, coupon: String, to subscription: String) -> String {
        var discount = Self.fixture("discount")
        let id = nextId(&state, "di")
        discount["id"] = id
        discount["subscription"] = subscription
        discount["start"] = state.now
        discount["source"] = ["coupon": coupon, "type": "coupon"]
        state.objects[id] = discount
        return id
    }

    private func nextId(_ state: inout State, _ prefix: String) -> String {
        state.counter += 1
        return "\(prefix)_double\(String(format: "%06d", state.counter))"
    }

    private func makeCustomer(_ state: inout State, email: String?, metadata: [String: String]) -> String {
        var customer = Self.fixture("customer")
        let id = nextId(&state, "cus")
        customer["id"] = id
        customer["email"] = email ?? NSNull()
        customer["metadata"] = metadata
        customer["created"] = state.now
        customer["livemode"] = false
        state.objects[id] = customer
        return id
    }

    /// An event of a change, created now; the clock moves a second so the next one is newer.
    private func emit(_ state: inout State, _ type: String, _ object: [String: Any]) {
        var event = Self.fixture("event")
        let id = nextId(&state, "evt")
        event["id"] = id
        event["type"] = type
        event["created"] = state.now
        event["livemode"] = false
        event["api_version"] = StripeSettings.apiVersion
        event["data"] = ["object": object]
        let body = try! JSONSerialization.data(withJSONObject: event, options: [.sortedKeys])
        state.events.append(Event(id: id, type: type, body: body, created: state.now))
        state.now += 1
    }

    private static func metadata(_ form: [(String, String)]) -> [String: String] {
        var result: [String: String] = [:]
        for (name, value) in form where name.hasPrefix("metadata[") && name.hasSuffix("]") {
            result[String(name.dropFirst(9).dropLast())] = value
        }
        return result
    }

    private static func parse(_ text: String) -> [(String, String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    private static func missing(_ id: String) -> (Int, [String: Any]) {
        (404, envelope(type: "invalid_request_error", code: "resource_missing", "No such object: '\(id)'", param: "id"))
    }

    private static func envelope(type: String, code: String?, _ message: String, param: String? = nil) -> [String: Any] {
        var error: [String: Any] = ["type": type, "message": message]
        if let code { error["code"] = code }
        if let param { error["param"] = param }
        return ["error": error]
    }

    private static func error(_ status: Int, type: String, code: String?, _ message: String, param: String? = nil) -> Response {
        let data = try! JSONSerialization.data(withJSONObject: envelope(type: type, code: code, message, param: param))
        var response = Response(status: .init(code: status), body: .init(byteBuffer: ByteBuffer(data: data)))
        response.headers[.contentType] = "application/json"
        return response
    }
}
