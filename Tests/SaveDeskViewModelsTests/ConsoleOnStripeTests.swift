import Foundation
import RetentionDomain
import Testing
import TestSupport

@testable import SaveDeskServer
@testable import SaveDeskViewModels

/// The console on a server whose web billing Stripe keeps (the Stripe double), through an outage.
@Suite("Console on Stripe")
@MainActor
struct ConsoleOnStripeTests {
    @Test func aStripeOutageIsSaidToTheAgentWhoKeepsTheirPlaceAndTheRetryAppliesTheOfferOnce() async throws {
        let double = try await StripeDouble.start()
        defer { double.stop() }
        let settings = StripeSettings(
            apiBase: double.baseURL, timeoutSeconds: 30, maxRetries: 1, retryBaseDelay: .milliseconds(10),
            test: .init(secretKey: StripeSecret(double.secretKey), webhookSecrets: [StripeSecret(double.webhookSecret)],
                        prices: ["premium_monthly": "price_vm_premium", "premium_yearly": "price_vm_yearly", "basic_monthly": "price_vm_basic"])
        )
        let demo = try await Demo.start(stripe: settings)
        defer { Task { await demo.stop() } }
        let now = Int64(Date().timeIntervalSince1970)
        let subscription = double.dashboardSubscription(savedeskCustomer: "stripe_vm_1", price: "price_vm_premium", periodEnd: now + 30 * 86_400)
        for event in double.events {
            #expect(try await double.deliver(event, to: demo.running.baseURL, timestamp: now).0 == 200)
        }

        let app = try demo.console()
        let session = app.makeCancelFlow(customerId: "stripe_vm_1", productId: "premium_monthly")
        await event { await session.load() }
        try await event { try session.select(optionId: 13) }
        try await event { try session.proceed() }
        try await event { try session.proceed() }
        try await event { try session.proceed() }
        #expect(session.page == .retention(.offer))

        // Stripe answers 500 to every attempt (the server's two, for each of the client's two): the
        // agent is told, and stays on the offer.
        let path = "/v1/subscriptions/\(subscription)"
        for _ in 0..<4 { double.inject(.serverError, method: "POST", path: path) }
        try await event { try await session.acceptOffer() }
        guard case .failed(let message) = session.phase else { Issue.record("not failed: \(session.phase)"); return }
        #expect(message.contains("Stripe did not answer"), "\(message)")
        #expect(session.submittedResponse == nil, "the flow is not over: the agent's choice is kept for Retry")

        // Stripe is back: Retry applies the offer, once.
        await event { await session.retry() }
        guard case .finished(let outcome) = session.phase else { Issue.record("not finished: \(session.phase)"); return }
        #expect(outcome.outcome == .retained)
        let discounts = double.object(subscription)?["discounts"] as? [String]
        #expect(discounts?.count == 1)
    }
}
