import Foundation
import Testing
import TestSupport

@testable import SaveDeskServer

/// The calls SaveDesk makes to Stripe, and the strictness it relies on, checked the same way
/// against the Stripe double and, when `STRIPE_TEST_SECRET_KEY` holds a test-mode key
/// (`sk_test_…` or `rk_test_…`), against Stripe's own test mode (api.stripe.com; nothing live is
/// touched: the key's prefix is checked first). Without the variable the Stripe run is skipped
/// with one line.
@Suite("Stripe contract", .serialized)
struct StripeContractTests {
    enum Target: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case double, stripe
        var testDescription: String { rawValue }
    }

    static let realKey: String? = ProcessInfo.processInfo.environment["STRIPE_TEST_SECRET_KEY"].flatMap {
        $0.hasPrefix("sk_test_") || $0.hasPrefix("rk_test_") ? $0 : nil
    }

    /// A client of the target, and what to stop afterwards.
    static func client(_ target: Target) async throws -> (StripeClient, StripeDouble?) {
        switch target {
        case .double:
            let double = try await StripeDouble.start()
            let settings = StripeSettings(apiBase: double.baseURL, timeoutSeconds: 5, maxRetries: 1, retryBaseDelay: .milliseconds(10))
            let account = StripeSettings.Account(secretKey: StripeSecret(double.secretKey), webhookSecrets: [], prices: [:])
            return (StripeClient(settings: settings, account: account, livemode: false), double)
        case .stripe:
            let key = try #require(realKey)
            let settings = StripeSettings(apiBase: "https://api.stripe.com", timeoutSeconds: 30, maxRetries: 2)
            let account = StripeSettings.Account(secretKey: StripeSecret(key), webhookSecrets: [], prices: [:])
            return (StripeClient(settings: settings, account: account, livemode: false), nil)
        }
    }

    @Test(arguments: Target.allCases)
    func stripeRefusesWhatSaveDeskMustNeverSendAndReplaysAnIdempotentRequest(_ target: Target) async throws {
        guard target == .double || Self.realKey != nil else {
            print("Stripe contract (real test mode): skipped; set STRIPE_TEST_SECRET_KEY to a sk_test_ key to run it")
            return
        }
        let (client, double) = try await Self.client(target)
        defer { double?.stop() }
        let run = UUID().uuidString.prefix(8)
        // An unknown parameter is refused, naming it.
        var unknown = StripeClient.Form()
        unknown.add("not_a_parameter", "1")
        do {
            let _: StripeCustomer = try await client.post("/v1/customers", unknown, idempotencyKey: "savedesk_contract_unknown_\(run)")
            Issue.record("an unknown parameter was accepted")
        } catch {
            guard case .refused(400, let refusal) = error else { Issue.record("\(error)"); return }
            #expect(refusal.code == "parameter_unknown" && refusal.param == "not_a_parameter")
        }
        // The same key with the same parameters: the same object; with others: refused.
        var form = StripeClient.Form()
        form.add("email", "contract-\(run)@example.com")
        form.add("metadata[savedesk_customer_id]", "contract_\(run)")
        let key = "savedesk_contract_customer_\(run)"
        let first: StripeCustomer = try await client.post("/v1/customers", form, idempotencyKey: key)
        let again: StripeCustomer = try await client.post("/v1/customers", form, idempotencyKey: key)
        #expect(first.id == again.id && first.metadata["savedesk_customer_id"] == "contract_\(run)")
        var other = StripeClient.Form()
        other.add("email", "someone-else-\(run)@example.com")
        do {
            let _: StripeCustomer = try await client.post("/v1/customers", other, idempotencyKey: key)
            Issue.record("an Idempotency-Key was reused with other parameters")
        } catch {
            guard case .refused(400, let refusal) = error else { Issue.record("\(error)"); return }
            #expect(refusal.type == "idempotency_error")
        }
        // A missing object: 404 resource_missing.
        do {
            let _: StripeSubscription = try await client.get("/v1/subscriptions/sub_savedesk_missing_\(run)")
            Issue.record("a missing subscription was found")
        } catch {
            guard case .refused(404, let refusal) = error else { Issue.record("\(error)"); return }
            #expect(refusal.code == "resource_missing")
        }
    }

    @Test(arguments: Target.allCases)
    func aSubscriptionIsStartedDiscountedPausedCancelledAndEndedAsSaveDeskAsks(_ target: Target) async throws {
        guard target == .double || Self.realKey != nil else {
            return  // (the first test said so)
            return
        }
        let (client, double) = try await Self.client(target)
        defer { double?.stop() }
        let run = UUID().uuidString.prefix(8)
        var priceForm = StripeClient.Form()
        priceForm.add("currency", "usd")
        priceForm.add("unit_amount", Int64(799))
        priceForm.add("recurring[interval]", "month")
        priceForm.add("product_data[name]", "SaveDesk contract \(run)")
        struct Price: Decodable { var id: String }
        let price: Price = try await client.post("/v1/prices", priceForm, idempotencyKey: "savedesk_contract_price_\(run)")
        var customerForm = StripeClient.Form()
        customerForm.add("email", "contract-\(run)@example.com")
        let customer: StripeCustomer = try await client.post("/v1/customers", customerForm, idempotencyKey: "savedesk_contract_cus_\(run)")

        // Made once, whatever the repeats: the save offer's coupon.
        let coupon = try await StripeBilling.coupon(percent: 20, duration: .repeating(months: 3), client: client)
        #expect(try await StripeBilling.coupon(percent: 20, duration: .repeating(months: 3), client: client) == coupon)

        // Started as a switch's checkout starts it: a trial to the App Store's end, nothing charged.
        let trialEnd = Int64(Date().timeIntervalSince1970) + 5 * 86_400
        var start = StripeClient.Form()
        start.add("customer", customer.id)
        start.add("items[0][price]", price.id)
        start.add("payment_behavior", "default_incomplete")
        start.add("payment_settings[save_default_payment_method]", "on_subscription")
        start.add("trial_end", trialEnd)
        start.add("trial_settings[end_behavior][missing_payment_method]", "cancel")
        start.add("metadata[savedesk_customer_id]", "contract_\(run)")
        start.add("expand[0]", "latest_invoice.confirmation_secret")
        start.add("expand[1]", "pending_setup_intent")
        struct Started: Decodable {
            struct Intent: Decodable { var client_secret: String? }
            var id: String
            var status: String
            var pending_setup_intent: Intent?
        }
        let started: Started = try await client.post("/v1/subscriptions", start, idempotencyKey: "savedesk_contract_sub_\(run)")
        #expect(started.status == "trialing" && started.pending_setup_intent?.client_secret?.hasPrefix("seti_") == true)

        func send(_ change: StripeBilling.Change, _ name: String) async throws -> StripeSubscription {
            try await StripeBilling.send(change, providerId: started.id, key: "savedesk_contract_\(name)_\(run)", client: client)
        }
        var offer = StripeBilling.Change()
        offer.coupon = (20, .repeating(months: 3))
        #expect(try await send(offer, "offer").discounts?.count == 1)
        var pause = StripeBilling.Change()
        pause.form.add("pause_collection[behavior]", "void")
        pause.form.add("pause_collection[resumes_at]", trialEnd + 86_400)
        #expect(try await send(pause, "pause").pause_collection?.behavior == "void")
        var resume = StripeBilling.Change()
        resume.form.add("pause_collection", "")
        #expect(try await send(resume, "resume").pause_collection == nil)
        var cancel = StripeBilling.Change()
        cancel.form.add("cancel_at_period_end", true)
        cancel.form.add("cancellation_details[comment]", "Too expensive")
        let scheduled = try await send(cancel, "cancel")
        #expect(scheduled.cancel_at_period_end && scheduled.cancellation_details?.comment == "Too expensive")
        var now = StripeBilling.Change()
        now.cancelNow = true
        #expect(try await send(now, "end").status == "canceled")
    }

    /// Stripe's retry headers are obeyed: a 429 is tried again, a 500 that says
    /// `Stripe-Should-Retry: false` is not (the caller hears Stripe is unreachable).
    @Test func theClientRetriesAsStripesHeadersSay() async throws {
        let (client, double) = try await Self.client(.double)
        let stripe = try #require(double)
        defer { stripe.stop() }
        var form = StripeClient.Form()
        form.add("email", "retry@example.com")
        stripe.inject(.answer(status: 429, headers: ["Retry-After": "0"]), method: "POST", path: "/v1/customers")
        let made: StripeCustomer = try await client.post("/v1/customers", form, idempotencyKey: "savedesk_retry_1")
        #expect(made.email == "retry@example.com")
        #expect(stripe.requests.filter { $0.path == "/v1/customers" }.count == 2)
        stripe.inject(.answer(status: 500, headers: ["Stripe-Should-Retry": "false"]), method: "POST", path: "/v1/customers")
        do {
            let _: StripeCustomer = try await client.post("/v1/customers", form, idempotencyKey: "savedesk_retry_2")
            Issue.record("a 500 that says not to retry was retried into a success")
        } catch {
            guard case .unreachable = error else { Issue.record("\(error)"); return }
        }
        #expect(stripe.requests.filter { $0.path == "/v1/customers" }.count == 3, "not retried")
    }
}
