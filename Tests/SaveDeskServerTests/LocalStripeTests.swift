import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import SaveDeskAPI
import Testing
import TestSupport

@testable import SaveDeskServer

/// SaveDesk against localstripe (PyPI 1.15.10: an independent, older implementation of Stripe's
/// API), for the paths it supports: a customer and a subscription made there, its signed webhook
/// delivered to SaveDesk (localstripe's own HMAC, checked by SaveDesk's verifier) and linked, and a
/// cancellation from SaveDesk made there and seen back. localstripe runs on 127.0.0.1 only, with
/// its pickle in a private folder (scripts/localstripe-loopback.py), from the tests' venv.
@Suite("localstripe", .serialized)
struct LocalStripeTests {
    static let python = ProcessInfo.processInfo.environment["SAVEDESK_TEST_PYTHON"]
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/localstripe-loopback.py")
    static let key = "sk_test_localstripe_0123456789"
    static let webhookSecret = "whsec_localstripe_0123456789"

    struct LocalStripe {
        let process: ChildProcess
        let base: String

        func call(_ method: HTTPMethod, _ path: String, _ form: [(String, String)] = []) async throws -> [String: Any] {
            var request = HTTPClientRequest(url: base + path)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(LocalStripeTests.key)")
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form.map { "\(StripeClient.Form.escape($0.0))=\(StripeClient.Form.escape($0.1))" }.joined(separator: "&")))
            let response = try await HTTPClient.shared.execute(request, timeout: TimeAmount(answerPatience))
            let body = try await response.body.collect(upTo: 1 << 20)
            guard body.readableBytes > 0 else { return [:] }  // the _config calls answer with no body
            return try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
        }
    }

    static func startLocalStripe(in directory: URL) async throws -> LocalStripe {
        let output = directory.appendingPathComponent("localstripe.port")
        let process = try ChildProcess.spawn(
            try #require(python), [script.path, directory.appendingPathComponent("localstripe").path],
            stdout: output.path, stderr: directory.appendingPathComponent("localstripe.log").path
        )
        for _ in 0..<300 {
            if let text = try? String(contentsOf: output, encoding: .utf8), let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                return LocalStripe(process: process, base: "http://127.0.0.1:\(port)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.signal(SIGKILL)
        throw CocoaError(.fileReadNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "localstripe did not start"])
    }

    @Test(.enabled(if: python != nil, "make test installs localstripe and sets SAVEDESK_TEST_PYTHON"))
    func aSubscriptionMadeInLocalstripeIsLinkedByItsSignedWebhookAndCancelledFromSaveDesk() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-localstripe-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let stripe = try await Self.startLocalStripe(in: directory)
        defer {
            stripe.process.signal(SIGKILL)
            Task { _ = await stripe.process.wait(timeout: .seconds(10)) }
        }
        let product = try await stripe.call(.POST, "/v1/products", [("name", "Premium")])
        let plan = try await stripe.call(.POST, "/v1/plans", [
            ("id", "price_ls_premium"), ("product", try #require(product["id"] as? String)), ("amount", "799"), ("currency", "usd"),
            ("interval", "month"),
        ])
        #expect(plan["id"] as? String == "price_ls_premium")

        var config = try TestServer.demoConfig()
        config.billing.stripe = StripeSettings(
            apiBase: stripe.base, timeoutSeconds: 5, maxRetries: 1,
            test: .init(secretKey: StripeSecret(Self.key), webhookSecrets: [StripeSecret(Self.webhookSecret)],
                        prices: ["premium_monthly": "price_ls_premium", "premium_yearly": "price_ls_yearly", "basic_monthly": "price_ls_basic"])
        )
        // localstripe signs with the real time: the server's clock is the real time too.
        let server = try await TestServer.start(directory: directory, clock: ManualClock(Date()), config: config)
        defer { Task { await server.stop() } }
        _ = try await stripe.call(.POST, "/_config/webhooks/savedesk", [("url", server.baseURL + "/v1/stripe/webhook"), ("secret", Self.webhookSecret)])

        // A customer and a subscription made in localstripe, as Stripe's dashboard would.
        let method = try await stripe.call(.POST, "/v1/payment_methods", [
            ("type", "card"), ("card[number]", "4242424242424242"), ("card[exp_month]", "12"), ("card[exp_year]", "2030"), ("card[cvc]", "123"),
        ])
        let methodId = try #require(method["id"] as? String)
        let customer = try await stripe.call(.POST, "/v1/customers", [
            ("email", "ls@example.com"), ("payment_method", methodId), ("invoice_settings[default_payment_method]", methodId),
            ("metadata[savedesk_customer_id]", "ls_user_1"),
        ])
        let subscription = try await stripe.call(.POST, "/v1/subscriptions", [
            ("customer", try #require(customer["id"] as? String)), ("items[0][plan]", "price_ls_premium"), ("metadata[savedesk_customer_id]", "ls_user_1"),
        ])
        let id = try #require(subscription["id"] as? String)

        // localstripe delivers customer.subscription.created, signed; SaveDesk links it.
        var linked: SubscriptionRecord?
        for _ in 0..<300 where linked == nil {
            linked = try await server.running.store.read { try await $0.ledger.subscription(providerId: id) }
            if linked == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let record = try #require(linked, "localstripe's signed webhook reached SaveDesk and was applied")
        #expect(record.customerId == "ls_user_1" && record.productId == "premium_monthly" && record.status == "active")
        #expect(record.currentPeriodEnd == (subscription["current_period_end"] as? Int64))

        // Cancelled now from SaveDesk: made in localstripe, recorded here.
        let cancelled = try await server.app.cancelSubscription(body: .json(.init(userId: "ls_user_1", productId: "premium_monthly", immediate: true))).ok.body.json
        #expect(cancelled.status == "cancelled")
        let after = try await stripe.call(.GET, "/v1/subscriptions/\(id)")
        #expect(after["status"] as? String == "canceled")
        // Its deleted event arrives too, and changes nothing more.
        var events = 0
        for _ in 0..<300 where events < 2 {
            events = try await server.running.store.sqlRead { db in
                try await db.select().column("id").from("stripe_events").all().count
            }
            if events < 2 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(events >= 2)
        #expect(try await server.running.store.read { try await $0.ledger.subscription(providerId: id) }?.status == "cancelled")

        // A checkout's finalize: the Stripe customer is made there (SaveDesk's customer call), and
        // the subscription call, in today's API shape (payment_behavior, the invoice's
        // confirmation_secret), is refused by localstripe's older one: a clean 422 with its
        // reason, nothing paid or recorded but the customer kept for the next try.
        let checkout = try await server.app.createCheckout(body: .json(.init(productId: "premium_monthly", userId: "ls_user_2"))).ok.body.json
        let refused = try await server.app.finalizeCheckout(path: .init(transactionId: checkout.transactionId))
        expectFailure(refused, status: 422, code: "stripe_refused")
        let kept = try await server.running.store.read { try await $0.customers.find(id: "ls_user_2") }
        let stripeCustomer = try #require(kept?.billingCustomerId)
        let there = try await stripe.call(.GET, "/v1/customers/\(stripeCustomer)")
        #expect((there["metadata"] as? [String: String])?["savedesk_customer_id"] == "ls_user_2")
        #expect(try await server.app.getTransaction(path: .init(transactionId: checkout.transactionId)).ok.body.json.status.rawValue == "pending")
    }
}
