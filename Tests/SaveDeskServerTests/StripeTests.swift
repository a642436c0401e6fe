import AsyncHTTPClient
import Foundation
import Logging
import OpenAPIRuntime
import RetentionDomain
import SaveDeskAPI
import SQLKit
import Testing
import TestSupport

@testable import SaveDeskServer

/// Stripe as the web billing provider, end to end: a real SaveDesk server on loopback talking to
/// the Stripe double (strict as Stripe, objects shaped by Stripe's fixtures), on the run's engine.
@Suite("Stripe billing", .serialized)
struct StripeTests {
    static let price = "price_double_premium_monthly"

    /// A server whose test mode bills through the double, and a customer with a Stripe
    /// subscription linked by the double's `customer.subscription.created` event.
    struct Setup {
        let server: TestServer
        let double: StripeDouble
        let subscription: String
        let user: String

        var now: Int64 { Int64(server.clock.now().timeIntervalSince1970) }

        func deliverAll(from index: Int = 0) async throws {
            for event in double.events.dropFirst(index) {
                let (status, body) = try await double.deliver(event, to: server.baseURL, timestamp: now)
                #expect(status == 200, "\(event.type): \(body)")
            }
        }

        func local() async throws -> SubscriptionRecord? {
            try await server.running.store.read { try await $0.ledger.subscription(providerId: subscription) }
        }

        func stop() async {
            await server.stop()
            double.stop()
        }
    }

    static func settings(_ double: StripeDouble, retries: Int = 2) -> StripeSettings {
        StripeSettings(
            apiBase: double.baseURL, timeoutSeconds: 1, maxRetries: retries, webhookToleranceSeconds: 300,
            test: .init(
                secretKey: StripeSecret(double.secretKey), webhookSecrets: [StripeSecret(double.webhookSecret)],
                prices: ["premium_monthly": price, "premium_yearly": "price_double_premium_yearly", "basic_monthly": "price_double_basic_monthly"]
            )
        )
    }

    static func start(retries: Int = 2, reconcile: Bool = false, log: CapturedLog? = nil) async throws -> Setup {
        let double = try await StripeDouble.start()
        var config = try TestServer.demoConfig()
        config.billing.stripe = settings(double, retries: retries)
        let server = try await TestServer.start(config: config, logger: log?.logger ?? Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }) { options in
            options.stripeRetryDelay = .milliseconds(10)
            options.stripeReconcileInterval = reconcile ? .milliseconds(100) : .seconds(3_600)
            options.stripeReconcileAge = 0
        }
        let user = "stripe_user_1"
        let end = Int64(server.clock.now().timeIntervalSince1970) + 30 * 86_400
        let subscription = double.dashboardSubscription(savedeskCustomer: user, price: price, periodEnd: end)
        let setup = Setup(server: server, double: double, subscription: subscription, user: user)
        try await setup.deliverAll()
        return setup
    }

    @Test func aSubscriptionMadeInStripeIsLinkedByItsWebhookAndTheFlowsActThere() async throws {
        let log = CapturedLog()
        let setup = try await Self.start(log: log)
        defer { Task { await setup.stop() } }
        let app = setup.server.app
        let linked = try #require(try await setup.local())
        #expect(linked.customerId == setup.user && linked.productId == "premium_monthly" && linked.status == "active")
        let stripeCustomer = try #require(setup.double.object(setup.subscription)?["customer"] as? String)

        // The save offer: a coupon made once, applied with `discounts`.
        let offer = try await app.acceptSaveOffer(body: .json(.init(userId: setup.user, productId: "premium_monthly"))).ok.body.json
        #expect(offer.discountPercent != nil)
        let afterOffer = try #require(setup.double.object(setup.subscription))
        let discounts = try #require(afterOffer["discounts"] as? [String])
        #expect(discounts.count == 1)
        let discount = try #require(setup.double.object(discounts[0]))
        let coupon = try #require((discount["source"] as? [String: Any])?["coupon"] as? String)
        let couponObject = try #require(setup.double.object(coupon))
        #expect(couponObject["duration"] as? String == "repeating")

        // Pause with the configured behavior and the chosen resume date; resume clears it.
        let paused = try await app.pauseSubscription(body: .json(.init(userId: setup.user, productId: "premium_monthly", pauseDurationDays: 14))).ok.body.json
        let pause = try #require(setup.double.object(setup.subscription)?["pause_collection"] as? [String: Any])
        #expect(pause["behavior"] as? String == "void")
        #expect(pause["resumes_at"] as? Int64 == paused.resumesAt.map { Int64($0.timeIntervalSince1970) })
        #expect(try await setup.local()?.status == "paused")
        _ = try await app.resumeSubscription(body: .json(.init(userId: setup.user, productId: "premium_monthly"))).ok
        #expect(setup.double.object(setup.subscription)?["pause_collection"] is NSNull)
        #expect(try await setup.local()?.status == "active")

        // Cancel at period end with the questionnaire's answer, then undo it.
        _ = try await app.submitCancelFlowResponse(body: .json(.init(
            userId: setup.user, productId: "premium_monthly", outcome: .cancelled, offerShown: false, offerAccepted: false,
            pauseShown: false, pauseAccepted: false, lastStepSeen: 1, answers: [.init(questionId: 1, selectedOptionId: 11)]
        )))
        _ = try await app.cancelSubscription(body: .json(.init(userId: setup.user, productId: "premium_monthly"))).ok
        var stripe = try #require(setup.double.object(setup.subscription))
        #expect(stripe["cancel_at_period_end"] as? Bool == true)
        let comment = (stripe["cancellation_details"] as? [String: Any])?["comment"] as? String
        #expect(comment?.isEmpty == false)
        #expect(try await setup.local()?.willRenew == false)
        _ = try await app.reactivateSubscription(body: .json(.init(userId: setup.user, productId: "premium_monthly"))).ok
        #expect(setup.double.object(setup.subscription)?["cancel_at_period_end"] as? Bool == false)

        // The portal is Stripe's billing portal for the customer Stripe bills.
        let portal = try await app.createCustomerPortalSession(body: .json(.init(userId: setup.user, returnUrl: "https://example.com/back"))).ok.body.json
        #expect(portal.portalUrl.hasPrefix("https://billing.stripe.com/"))
        let portalCall = try #require(setup.double.requests.last { $0.path == "/v1/billing_portal/sessions" })
        #expect(portalCall.form.contains { $0.0 == "customer" && $0.1 == stripeCustomer })

                // Cancel now.
        _ = try await app.cancelSubscription(body: .json(.init(userId: setup.user, productId: "premium_monthly", immediate: true))).ok
        stripe = try #require(setup.double.object(setup.subscription))
        #expect(stripe["status"] as? String == "canceled")
        #expect(try await setup.local()?.status == "cancelled")

        // Every change carried an Idempotency-Key; the events of SaveDesk's own changes change nothing more.
        #expect(setup.double.requests.filter { $0.method != "GET" }.allSatisfy { $0.key != nil })
        let before = try await setup.local()
        try await setup.deliverAll(from: 1)
        #expect(try await setup.local()?.status == before?.status)
        // Nothing here bills it: settlement leaves Stripe's subscriptions to Stripe.
        let charges = try await setup.server.running.store.sqlRead { db in
            try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("charges")
                .where("subscription_id", .equal, before?.id ?? "").first()?.decode(column: "n", as: Int.self)
        }
        #expect(charges == 0)
        // The keys never reach a log line, whatever was logged on the way.
        #expect(!log.lines.isEmpty)
        #expect(!log.lines.contains { $0.contains(setup.double.secretKey) || $0.contains(setup.double.webhookSecret) })
    }

    @Test func aSwitchAndSaveCheckoutStartsATrialToTheAppStoreEndWithTheDiscountAndIsPaidByTheWebhook() async throws {
        let setup = try await Self.start()
        defer { Task { await setup.stop() } }
        let server = setup.server
        let appleEnd = TestServer.start.addingTimeInterval(9 * 86_400)
        let checkout = try await server.app.createCheckout(body: .json(.init(
            productId: "premium_monthly", userId: "cus_chloe", storekitSubscriptionEnd: appleEnd,
            storekitOriginalTransactionId: "2000000810000001", checkoutMode: .native, platform: "ios"
        ))).ok.body.json
        #expect(checkout.trialType == "migration" && checkout.amount == 0)
        // The simulator does not pay a Stripe checkout: Stripe does.
        expectFailure(
            try await server.desk.simulateCheckout(body: .json(.init(transactionId: checkout.transactionId, outcome: .paid))),
            status: 422, code: "stripe_not_simulated"
        )
        let secret = try await server.app.finalizeCheckout(path: .init(transactionId: checkout.transactionId)).ok.body.json.clientSecret
        #expect(secret.hasPrefix("seti_"), "a trial saves the card: nothing is charged while Apple is paid")
        #expect(try await server.app.finalizeCheckout(path: .init(transactionId: checkout.transactionId)).ok.body.json.clientSecret == secret)
        let created = try #require(setup.double.requests.last { $0.method == "POST" && $0.path == "/v1/subscriptions" })
        let form = Dictionary(created.form, uniquingKeysWith: { $1 })
        #expect(form["trial_end"] == String(Int64(appleEnd.timeIntervalSince1970)), "trial_end is the bridged App Store end")
        #expect(form["trial_settings[end_behavior][missing_payment_method]"] == "cancel", "abandoned before the card is saved: never billed")
        #expect(form["discounts[0][coupon]"] == "savedesk_20pct_forever")
        #expect(form["metadata[savedesk_checkout_id]"] == checkout.transactionId)
        #expect(setup.double.requests.filter { $0.path == "/v1/subscriptions" }.count == 1, "made once, whatever the repeats")
        let stripeId = try #require(setup.double.events.last { $0.type == "customer.subscription.created" }.flatMap { event in
            (try? JSONSerialization.jsonObject(with: event.body) as? [String: Any]).flatMap { (($0["data"] as? [String: Any])?["object"] as? [String: Any])?["id"] as? String }
        })
        // Not paid yet: its events change nothing here.
        try await setup.deliverAll()
        #expect(try await server.running.store.read { try await $0.ledger.subscription(providerId: stripeId) } == nil)
        #expect(try await server.app.getTransaction(path: .init(transactionId: checkout.transactionId)).ok.body.json.status.rawValue == "pending")
        // The customer confirms the sheet: the webhook records the trialing web subscription.
        let index = setup.double.events.count
        setup.double.confirmPayment(stripeId)
        try await setup.deliverAll(from: index)
        #expect(try await server.app.getTransaction(path: .init(transactionId: checkout.transactionId)).ok.body.json.status.rawValue == "completed")
        let web = try #require(try await server.app.getEntitlements(query: .init(userId: "cus_chloe")).ok.body.json.entitlements.first { $0.source.rawValue == "web_checkout" })
        #expect(web.status == .active && web.isTrial && web.trialEndsAt == appleEnd)
        let record = try #require(try await server.running.store.read { try await $0.ledger.subscription(providerId: stripeId) })
        #expect(record.trialType == "migration" && record.customerId == "cus_chloe")
        let customer = try await server.running.store.read { try await $0.customers.find(id: "cus_chloe") }
        #expect(customer?.billingCustomerId == form["customer"], "the Stripe customer is kept, reused next time")
    }

    @Test func aPlainCheckoutIsChargedByStripeAndRecordedWhenItsInvoiceIsPaid() async throws {
        let setup = try await Self.start()
        defer { Task { await setup.stop() } }
        let server = setup.server
        let plain = try await server.app.createCheckout(body: .json(.init(productId: "basic_monthly", userId: "cus_ivan"))).ok.body.json
        let secret = try await server.app.finalizeCheckout(path: .init(transactionId: plain.transactionId)).ok.body.json.clientSecret
        #expect(secret.hasPrefix("pi_"), "the first invoice's PaymentIntent")
        let stripeId = try #require(setup.double.requests.last { $0.path == "/v1/subscriptions" }.flatMap { _ in
            setup.double.events.last { $0.type == "customer.subscription.created" }
        }.flatMap { event in
            (try? JSONSerialization.jsonObject(with: event.body) as? [String: Any]).flatMap { (($0["data"] as? [String: Any])?["object"] as? [String: Any])?["id"] as? String }
        })
        let index = setup.double.events.count
        setup.double.confirmPayment(stripeId)
        // The invoice first, then the subscription's event: either way one subscription, active.
        for event in setup.double.events.dropFirst(index).reversed() {
            let (status, _) = try await setup.double.deliver(event, to: server.baseURL, timestamp: setup.now)
            #expect(status == 200)
        }
        let record = try #require(try await server.running.store.read { try await $0.ledger.subscription(providerId: stripeId) })
        #expect(record.status == "active" && record.productId == "basic_monthly")
        let charges = try await server.running.store.read { try await $0.ledger.subscriptions(customerId: "cus_ivan") }.filter { $0.providerId == stripeId }
        #expect(charges.count == 1)
    }

    @Test func aBrowserCheckoutIsAStripeCheckoutSessionRecordedWhenItsPageIsPaid() async throws {
        let setup = try await Self.start()
        defer { Task { await setup.stop() } }
        let server = setup.server
        let session = try await server.app.createCheckoutSession(body: .json(.init(productId: "premium_yearly", userId: "cus_ivan"))).ok.body.json
        let transactionId = try #require(session.transactionId)
        #expect(session.checkoutUrl.hasPrefix("https://checkout.stripe.com/"))
        let made = try #require(setup.double.requests.last { $0.path == "/v1/checkout/sessions" })
        let form = Dictionary(made.form, uniquingKeysWith: { $1 })
        #expect(form["mode"] == "subscription" && form["line_items[0][price]"] == "price_double_premium_yearly")
        #expect(form["subscription_data[metadata][savedesk_checkout_id]"] == transactionId)
        #expect(made.key == "savedesk_checkout_session_\(transactionId)")
        // Paid on Stripe's page: only the session's completion is delivered; the subscription is read from Stripe.
        let index = setup.double.events.count
        setup.double.completeCheckoutSession(url: session.checkoutUrl)
        let completed = try #require(setup.double.events.dropFirst(index).first { $0.type == "checkout.session.completed" })
        let answer = try await setup.double.deliver(completed, to: server.baseURL, timestamp: setup.now)
        #expect(answer.0 == 200 && answer.1.contains("applied"), "\(answer.1)")
        #expect(try await server.app.getTransaction(path: .init(transactionId: transactionId)).ok.body.json.status.rawValue == "completed")
        let ivan = try await server.app.getEntitlements(query: .init(userId: "cus_ivan")).ok.body.json.entitlements
        #expect(ivan.contains { $0.productId == "premium_yearly" && $0.source.rawValue == "web_checkout" && $0.isActive })
        // The subscription's own event, afterwards, is the same state: nothing more.
        for event in setup.double.events.dropFirst(index) where event.type != "checkout.session.completed" {
            #expect(try await setup.double.deliver(event, to: server.baseURL, timestamp: setup.now).0 == 200)
        }
        let records = try await server.running.store.read { try await $0.ledger.subscriptions(customerId: "cus_ivan") }
        #expect(records.filter { $0.productId == "premium_yearly" && $0.source == .web }.count == 1)
    }

    @Test func anUpgradeMovesTheStripeItemWithProration() async throws {
        let setup = try await Self.start()
        defer { Task { await setup.stop() } }
        let index = setup.double.events.count
        let basic = setup.double.dashboardSubscription(
            savedeskCustomer: "stripe_user_2", price: "price_double_basic_monthly", periodEnd: setup.now + 20 * 86_400
        )
        try await setup.deliverAll(from: index)
        let done = try await setup.server.app.executeUpgrade(body: .json(.init(
            userId: "stripe_user_2", currentProductId: "basic_monthly", targetProductId: "premium_monthly"
        ))).ok.body.json
        #expect(done.success)
        let post = try #require(setup.double.requests.last { $0.method == "POST" && $0.path == "/v1/subscriptions/\(basic)" })
        let form = Dictionary(post.form, uniquingKeysWith: { $1 })
        #expect(form["items[0][price]"] == Self.price && form["proration_behavior"] == "always_invoice" && form["items[0][id]"] != nil)
        let record = try #require(try await setup.server.running.store.read { try await $0.ledger.subscription(providerId: basic) })
        #expect(record.productId == "premium_monthly" && record.status == "active")
        let charges = try await setup.server.running.store.sqlRead { db in
            try await db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("charges")
                .where("subscription_id", .equal, record.id).first()?.decode(column: "n", as: Int.self)
        }
        #expect(charges == 0, "Stripe charges the proration, not the ledger")
    }

    @Test func aForgedStaleReplayedOrOutOfOrderWebhookChangesNothing() async throws {
        let setup = try await Self.start()
        defer { Task { await setup.stop() } }
        let index = setup.double.events.count
        // Two changes in Stripe's dashboard: a cancellation at period end, then its undo.
        setup.double.dashboardChange(setup.subscription) { $0["cancel_at_period_end"] = true }
        setup.double.dashboardChange(setup.subscription) { $0["cancel_at_period_end"] = false }
        let events = Array(setup.double.events.dropFirst(index))
        #expect(events.count == 2)

        // Forged (another secret), stale (outside the tolerance), malformed: 400, nothing applied.
        let forged = try await setup.double.deliver(events[0], to: setup.server.baseURL, timestamp: setup.now, secret: "whsec_not_this_endpoint")
        #expect(forged.0 == 400 && forged.1.contains("invalid_signature"))
        let stale = try await setup.double.deliver(events[0], to: setup.server.baseURL, timestamp: setup.now - 301)
        #expect(stale.0 == 400 && stale.1.contains("invalid_signature"))
        let garbled = try await setup.double.deliver(events[0], to: setup.server.baseURL, timestamp: setup.now, signature: "t=abc,v1=zz")
        #expect(garbled.0 == 400)
        #expect(try await setup.local()?.willRenew == true)

        // The newer first, then the older: the older is stale and changes nothing.
        let newer = try await setup.double.deliver(events[1], to: setup.server.baseURL, timestamp: setup.now)
        #expect(newer.0 == 200)
        let older = try await setup.double.deliver(events[0], to: setup.server.baseURL, timestamp: setup.now)
        #expect(older.0 == 200 && older.1.contains("refreshed"), "within the clocks' skew: Stripe is asked, and says the newer state")
        #expect(try await setup.local()?.willRenew == true)
        // Older than any skew: stale, and Stripe is not even asked.
        let gets = setup.double.requests.filter { $0.method == "GET" }.count
        setup.double.advance(-1_000)
        setup.double.dashboardChange(setup.subscription) { $0["cancel_at_period_end"] = true }
        let ancient = try #require(setup.double.events.last)
        setup.double.advance(1_000)
        let staleAnswer = try await setup.double.deliver(ancient, to: setup.server.baseURL, timestamp: setup.now)
        #expect(staleAnswer.1.contains("stale"))
        #expect(setup.double.requests.filter { $0.method == "GET" }.count == gets)
        #expect(try await setup.local()?.willRenew == true)
        setup.double.dashboardChange(setup.subscription) { $0["cancel_at_period_end"] = false }
        // Signed, but its object is not a subscription SaveDesk can read: 422, nothing applied.
        let garbledObject = Data(#"{"id":"evt_garbled","object":"event","type":"customer.subscription.updated","created":\#(setup.now),"livemode":false,"data":{"object":{"object":"subscription","id":"sub_x"}}}"#.utf8)
        let unreadable = try await setup.double.deliver(
            StripeDouble.Event(id: "evt_garbled", type: "customer.subscription.updated", body: garbledObject, created: setup.now),
            to: setup.server.baseURL, timestamp: setup.now
        )
        #expect(unreadable.0 == 422 && unreadable.1.contains("stripe_event_unreadable"), "\(unreadable.1)")
        // A replay of an applied event: a duplicate.
        let replay = try await setup.double.deliver(events[1], to: setup.server.baseURL, timestamp: setup.now)
        #expect(replay.1.contains("duplicate"))

        // During rotation, the previous secret's signature is still accepted (several v1 values).
        let rotated = StripeSignature.header(body: Data("{}".utf8), secrets: ["whsec_new", setup.double.webhookSecret], timestamp: setup.now)
        #expect(throws: Never.self) {
            try StripeSignature.verify(header: rotated, body: Data("{}".utf8), secrets: [StripeSecret(setup.double.webhookSecret)], now: setup.now, tolerance: 300)
        }

        // A downgrade made in Stripe's billing portal (a plan switch): the product follows the price.
        let planIndex = setup.double.events.count
        setup.double.dashboardChange(setup.subscription) { subscription in
            var items = subscription["items"] as! [String: Any]
            var item = (items["data"] as! [[String: Any]])[0]
            var price = item["price"] as! [String: Any]
            price["id"] = "price_double_basic_monthly"
            item["price"] = price
            items["data"] = [item]
            subscription["items"] = items
        }
        try await setup.deliverAll(from: planIndex)
        let downgraded = try await setup.local()
        #expect(downgraded?.productId == "basic_monthly" && downgraded?.priceMicros == 3_990_000)

        // A renewal that fails: the invoice's event reads the subscription from Stripe (past due).
        let failIndex = setup.double.events.count
        setup.double.failRenewal(setup.subscription)
        let failed = try #require(setup.double.events.dropFirst(failIndex).first { $0.type == "invoice.payment_failed" })
        let delivered = try await setup.double.deliver(failed, to: setup.server.baseURL, timestamp: setup.now)
        #expect(delivered.0 == 200 && delivered.1.contains("refreshed"))
        #expect(try await setup.local()?.status == "past_due")
        setup.double.dashboardChange(setup.subscription) { $0["status"] = "active" }

        // A cancellation from the dashboard reaches the record and the audit trail.
        let cancelIndex = setup.double.events.count
        setup.double.dashboardChange(setup.subscription, type: "customer.subscription.deleted") {
            $0["status"] = "canceled"
            $0["ended_at"] = setup.now
        }
        try await setup.deliverAll(from: cancelIndex)
        #expect(try await setup.local()?.status == "cancelled")
        let audited = try await setup.server.running.store.read { try await $0.audit.timeline(customerId: setup.user, limit: 100) }
        #expect(audited.contains { $0.action == "stripe.customer.subscription.deleted" && $0.actor == "stripe" })
        #expect(audited.contains { $0.action == "stripe.invoice.payment_failed" })
        // The timeline says it in words.
        #expect(DeskEvents.sentence(actor: "stripe", type: "stripe.customer.subscription.deleted") == "Stripe ended the subscription")
    }

    @Test func aStripeFailureInTheMiddleOfAnActionIsSettledByTheRetryOrTheReconcileJob() async throws {
        // A 500 before anything is done, and an answer lost after the change was made: the
        // client's retries send the same Idempotency-Key, so Stripe makes the change once.
        let setup = try await Self.start()
        defer { Task { await setup.stop() } }
        let app = setup.server.app
        let path = "/v1/subscriptions/\(setup.subscription)"
        setup.double.inject(.serverError, method: "POST", path: path)
        setup.double.inject(.stallAfter(.seconds(2)), method: "POST", path: path)
        let updates = setup.double.events.count
        _ = try await app.pauseSubscription(body: .json(.init(userId: setup.user, productId: "premium_monthly", pauseDurationDays: 7))).ok
        let posts = setup.double.requests.filter { $0.method == "POST" && $0.path == path }
        #expect(posts.count == 3 && Set(posts.map(\.key)).count == 1)
        #expect(setup.double.events.count == updates + 1, "the pause was made once")
        #expect(try await setup.local()?.status == "paused")

        // Stripe unreachable: a clear error, nothing recorded, the agent's retry works.
        setup.double.inject(.serverError, method: "POST", path: path)
        setup.double.inject(.serverError, method: "POST", path: path)
        setup.double.inject(.serverError, method: "POST", path: path)
        let failed = try await app.resumeSubscription(body: .json(.init(userId: setup.user, productId: "premium_monthly")))
        let body = expectFailure(failed, status: 503, code: "stripe_unreachable")
        #expect(body?.error.contains("Stripe") == true)
        #expect(try await setup.local()?.status == "paused")
        _ = try await app.resumeSubscription(body: .json(.init(userId: setup.user, productId: "premium_monthly"))).ok
        #expect(try await setup.local()?.status == "active")
    }

    enum Action: String, CaseIterable, Sendable {
        case saveOffer, pause, resume, cancelAtPeriodEnd, reactivate, cancelNow, upgrade, checkout
    }

    enum Failure: String, CaseIterable, Sendable {
        /// Stripe answers 500 and changes nothing.
        case serverError
        /// Stripe makes the change and its answer arrives after the timeout.
        case lostAnswer
    }

    /// For each action and each failure (no retries in the server here, so the request fails with
    /// 503 and nothing is recorded): the agent's retry sends the same Idempotency-Key; Stripe makes
    /// the change, or answers as it did when it already had; both sides agree, the change made once.
    @Test(arguments: Action.allCases, Failure.allCases)
    func aStripeFailureInTheMiddleOfEachActionIsMadeOnceAndAgreedAfterTheRetry(_ action: Action, _ kind: Failure) async throws {
        let setup = try await Self.start(retries: 0)
        defer { Task { await setup.stop() } }
        let app = setup.server.app
        let user = setup.user
        var subscription = setup.subscription
        switch action {
        case .resume:
            _ = try await app.pauseSubscription(body: .json(.init(userId: user, productId: "premium_monthly", pauseDurationDays: 7))).ok
        case .reactivate:
            _ = try await app.cancelSubscription(body: .json(.init(userId: user, productId: "premium_monthly"))).ok
        case .upgrade:
            let index = setup.double.events.count
            subscription = setup.double.dashboardSubscription(savedeskCustomer: "stripe_user_2", price: "price_double_basic_monthly", periodEnd: setup.now + 9 * 86_400)
            try await setup.deliverAll(from: index)
        default:
            break
        }
        var checkoutId = ""
        if action == .checkout {
            checkoutId = try await app.createCheckout(body: .json(.init(productId: "basic_monthly", userId: "cus_ivan"))).ok.body.json.transactionId
        }
        let path = action == .checkout ? "/v1/subscriptions" : "/v1/subscriptions/\(subscription)"
        setup.double.inject(kind == .lostAnswer ? .stallAfter(.seconds(2)) : .serverError, method: action == .cancelNow ? "DELETE" : "POST", path: path)
        let before = setup.double.events.count
        func attempt() async throws -> Any {
            switch action {
            case .saveOffer: return try await app.acceptSaveOffer(body: .json(.init(userId: user, productId: "premium_monthly")))
            case .pause: return try await app.pauseSubscription(body: .json(.init(userId: user, productId: "premium_monthly", pauseDurationDays: 7)))
            case .resume: return try await app.resumeSubscription(body: .json(.init(userId: user, productId: "premium_monthly")))
            case .cancelAtPeriodEnd: return try await app.cancelSubscription(body: .json(.init(userId: user, productId: "premium_monthly")))
            case .reactivate: return try await app.reactivateSubscription(body: .json(.init(userId: user, productId: "premium_monthly")))
            case .cancelNow: return try await app.cancelSubscription(body: .json(.init(userId: user, productId: "premium_monthly", immediate: true)))
            case .upgrade:
                return try await app.executeUpgrade(body: .json(.init(userId: "stripe_user_2", currentProductId: "basic_monthly", targetProductId: "premium_monthly")))
            case .checkout: return try await app.finalizeCheckout(path: .init(transactionId: checkoutId))
            }
        }
        let localBefore = try await setup.local()
        expectFailure(try await attempt(), status: 503, code: "stripe_unreachable")
        #expect(setup.double.events.count == before + (kind == .lostAnswer ? 1 : 0), "Stripe made the change, or nothing")
        if action != .upgrade && action != .checkout {
            let unchanged = try await setup.local()
            #expect(unchanged?.status == localBefore?.status && unchanged?.willRenew == localBefore?.willRenew, "nothing recorded here")
        }
        let retried = try await attempt()
        #expect(failure(retried) == nil, "the retry succeeds: \(retried)")
        #expect(setup.double.events.count == before + 1, "made once (a lost answer's retry is answered from Stripe's idempotency record)")

        // Both sides agree.
        if action == .checkout {
            #expect(setup.double.requests.filter { $0.method == "POST" && $0.path == "/v1/subscriptions" }.count == 2)
            #expect(setup.double.requests.filter { $0.method == "POST" && $0.path == "/v1/subscriptions" }.compactMap(\.key).count == 2)
            #expect(Set(setup.double.requests.filter { $0.path == "/v1/subscriptions" }.compactMap(\.key)).count == 1)
            #expect(setup.double.requests.filter { $0.path == "/v1/customers" }.count == 1, "the Stripe customer made first is kept and reused")
            return
        }
        let stripe = try #require(setup.double.object(subscription))
        let local = try #require(try await setup.server.running.store.read { try await $0.ledger.subscription(providerId: subscription) })
        #expect((stripe["status"] as? String == "canceled") == (local.status == "cancelled"))
        #expect((stripe["pause_collection"] is NSNull) == (local.status != "paused"))
        if stripe["status"] as? String != "canceled" {
            #expect((stripe["cancel_at_period_end"] as? Bool) == !local.willRenew)
        }
        let price = (((stripe["items"] as? [String: Any])?["data"] as? [[String: Any]])?.first?["price"] as? [String: Any])?["id"] as? String
        #expect(price == setup.server.config.billing.stripe?.test?.prices[local.productId])
        if action == .saveOffer {
            let discounts = try await setup.server.running.store.read { try await $0.ledger.discounts(subscriptionId: local.id) }
            #expect((stripe["discounts"] as? [String])?.count == 1 && discounts.count == 1)
        }
    }

    @Test func anActionLeftOpenByAFailureIsClosedByTheReconcileJob() async throws {
        // No retries: Stripe makes the change, its answer is lost, the request fails; the record
        // here is unchanged until the reconcile job reads Stripe back.
        let setup = try await Self.start(retries: 0, reconcile: true)
        defer { Task { await setup.stop() } }
        let path = "/v1/subscriptions/\(setup.subscription)"
        setup.double.inject(.stallAfter(.seconds(2)), method: "POST", path: path)
        let failed = try await setup.server.app.cancelSubscription(body: .json(.init(userId: setup.user, productId: "premium_monthly")))
        expectFailure(failed, status: 503, code: "stripe_unreachable")
        #expect(setup.double.object(setup.subscription)?["cancel_at_period_end"] as? Bool == true)
        var reconciled = false
        for _ in 0..<200 where !reconciled {
            reconciled = try await setup.local()?.willRenew == false
            if !reconciled { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(reconciled)
        let open = try await setup.server.running.store.read { try await $0.stripe.openActions(livemode: false, startedBefore: .max, limit: 10) }
        #expect(open.isEmpty)
    }

    @Test func stripesEventsAndFinishedActionsArePurgedAfterThirtyDays() async throws {
        let setup = try await Self.start()
        defer { Task { await setup.stop() } }
        _ = try await setup.server.app.pauseSubscription(body: .json(.init(userId: setup.user, productId: "premium_monthly", pauseDurationDays: 7))).ok
        let store = setup.server.running.store
        func count(_ table: String) async throws -> Int {
            try await store.sqlRead { try await $0.select().column("*").from(table).all().count }
        }
        let (events, actions) = (try await count("stripe_events"), try await count("stripe_actions"))
        #expect(events == 1 && actions == 1)
        let purge = PurgeJob(store: store, clock: DataClock(server: setup.server.clock, isAdjustable: false))
        #expect(try await purge.purge(.job("purge", livemode: false)).stripeRecords == 0, "kept while Stripe may still retry")
        setup.server.clock.advance(by: 31 * 86_400)
        #expect(try await purge.purge(.job("purge", livemode: false)).stripeRecords == 2)
        let (eventsAfter, actionsAfter) = (try await count("stripe_events"), try await count("stripe_actions"))
        #expect(eventsAfter == 0 && actionsAfter == 0)
    }

    @Test func theConfigTakesStripesKeysOnlyFromTheEnvironmentOrAPrivateFileAndChecksTheirMode() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-stripe-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let key = directory.appendingPathComponent("key"), hook = directory.appendingPathComponent("hook")
        try PrivateFile.write(Data("sk_live_wrongmode_secret_123\n".utf8), to: key, mode: 0o600)
        try PrivateFile.write(Data("whsec_abc\n".utf8), to: hook, mode: 0o644)
        let base = try String(contentsOfFile: try #require(DemoSeed.demoConfigPath), encoding: .utf8)
        let text = base.replacingOccurrences(of: "[billing]", with: """
            [billing]
            provider = "stripe"
            [billing.stripe.test]
            secret_key_file = "\(key.path)"
            webhook_secret_file = "\(hook.path)"
            prices = { premium_monthly = "price_1", premium_yearly = "price_2" }
            """)
        #expect(text != base)
        do {
            _ = try ConfigReader.parse(text)
            Issue.record("a live key for test mode, a readable secret file and a missing price were accepted")
        } catch {
            let messages = error.issues.map { "\($0.path): \($0.message)" }.joined(separator: "\n")
            #expect(messages.contains("billing.stripe.test.secret_key: must be a test-mode key"))
            #expect(messages.contains("can be read by others"))
            #expect(messages.contains("basic_monthly"))
            // The key itself is never echoed.
            #expect(!messages.contains("wrongmode_secret"))
        }
        // One signing secret for both modes would let a test event pass for a live one.
        let shared = directory.appendingPathComponent("shared"), testKey = directory.appendingPathComponent("test"),
            liveKey = directory.appendingPathComponent("live")
        try PrivateFile.write(Data("whsec_shared\n".utf8), to: shared, mode: 0o600)
        try PrivateFile.write(Data("sk_test_stripe_000000001\n".utf8), to: testKey, mode: 0o600)
        try PrivateFile.write(Data("sk_live_stripe_000000001\n".utf8), to: liveKey, mode: 0o600)
        let both = base.replacingOccurrences(of: "[billing]", with: """
            [billing]
            provider = "stripe"
            [billing.stripe.test]
            secret_key_file = "\(testKey.path)"
            webhook_secret_file = "\(shared.path)"
            prices = { premium_monthly = "price_1", premium_yearly = "price_2", basic_monthly = "price_3" }
            [billing.stripe.live]
            secret_key_file = "\(liveKey.path)"
            webhook_secret_file = "\(shared.path)"
            prices = { premium_monthly = "price_4", premium_yearly = "price_5", basic_monthly = "price_6" }
            """)
        do {
            _ = try ConfigReader.parse(both)
            Issue.record("one signing secret for both modes was accepted")
        } catch {
            #expect(error.issues.contains { $0.path == "billing.stripe.live.webhook_secret" })
        }
    }
}
