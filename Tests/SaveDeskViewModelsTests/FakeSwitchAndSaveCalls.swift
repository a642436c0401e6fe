import Foundation
import RetentionDomain
import SaveDeskClient
import Synchronization

@testable import SaveDeskViewModels

/// Switch and save against an in-memory server: one decision (eligible for the web plan unless a
/// test sets another), a checkout created per new Idempotency-Key (the same key gets the same
/// checkout back), and the calls it was sent. While "down", every call fails as unreachable;
/// `loseNextCheckoutAnswer` makes the next checkout happen on the server and its answer get lost.
final class FakeSwitchAndSaveCalls: SwitchAndSaveCalls {
    struct State {
        var down = false
        var loseNextCheckoutAnswer = false
        var decision: SwitchAndSaveDecision
        var checkouts: [String: Wire.Checkout] = [:]
        var checkoutKeys: [String] = []
        var dismissalKeys: [String] = []
        var impressions = 0
        var productCalls = 0
        var conversions = 0
    }

    static let offer = MigrationOffer.OfferData(
        prompt: .init(productId: "premium_monthly", discountPercent: 30, title: "Save 30% on the web",
                      message: "Same plan, billed by us", ctaText: "Switch"),
        freeTrialDays: 12, activeStoreKitProductId: "premium_monthly_ios")

    let state: Mutex<State>
    private let catalog = FakeCancelFlowCalls()

    init(userId: String = "cus_fake") {
        state = Mutex(State(decision: SwitchAndSaveDecision(
            userId: userId, state: .eligible, offerData: Self.offer,
            display: .init(prompt: Self.offer.prompt, productName: "Premium Monthly"), serverTime: Date())))
    }

    func setDown(_ down: Bool) { state.withLock { $0.down = down } }
    func loseNextCheckoutAnswer() { state.withLock { $0.loseNextCheckoutAnswer = true } }
    func setDecision(_ change: (inout SwitchAndSaveDecision) -> Void) { state.withLock { change(&$0.decision) } }
    var snapshot: State { state.withLock { $0 } }

    private func checkUp() throws(SaveDeskClientError) {
        if state.withLock({ $0.down }) { throw .fakeUnreachable }
    }

    func userOffer(userId: String) async throws(SaveDeskClientError) -> SwitchAndSaveDecision {
        try checkUp()
        return state.withLock { $0.decision }
    }

    func products() async throws(SaveDeskClientError) -> [Product] {
        try checkUp()
        state.withLock { $0.productCalls += 1 }
        return try await catalog.products()
    }

    func restoreEntitlements(userId: String) async throws(SaveDeskClientError) -> [Entitlement] {
        try checkUp()
        return []
    }

    func createCheckout(
        productId: String, userId: String, stripeCustomerId: String?, appStoreSubscriptionEnd: Date?,
        originalTransactionId: String?, idempotencyKey: String
    ) async throws(SaveDeskClientError) -> Wire.Checkout {
        try checkUp()
        let (checkout, lost) = state.withLock { state in
            state.checkoutKeys.append(idempotencyKey)
            let checkout = state.checkouts[idempotencyKey] ?? Wire.Checkout(
                transactionId: "txn_\(state.checkouts.count + 1)", checkoutUrl: "https://pay.example/txn_\(state.checkouts.count + 1)",
                callbackUrl: "https://pay.example/callback", publishableKey: "pk_test_fake", amount: 699, currency: "usd",
                productName: "Premium Monthly")
            state.checkouts[idempotencyKey] = checkout
            defer { state.loseNextCheckoutAnswer = false }
            return (checkout, state.loseNextCheckoutAnswer)
        }
        if lost { throw SaveDeskClientError(kind: .unreachable, message: "the answer was lost") }
        return checkout
    }

    func confirmTransaction(id: String, attempts: Int, interval: Duration) async throws(SaveDeskClientError) -> Wire.CheckoutTransaction {
        try checkUp()
        return Wire.CheckoutTransaction(id: id, productId: "premium_monthly", status: .completed, source: .webCheckout, purchasedAt: Date())
    }

    func storeKitSubscriptionStatus(originalTransactionId: String) async throws(SaveDeskClientError) -> Wire.StoreKitSubscriptionStatus {
        throw SaveDeskClientError(kind: .server(status: 404, code: "not_found"), message: "no App Store subscription here")
    }

    func reportAppleRenewal(transactionId: String, renewing: Bool, appStoreSubscriptionEnd: Date?) async throws(SaveDeskClientError) {
        try checkUp()
    }

    func recordOfferDismissed(userId: String, variantId: Int?, idempotencyKey: String) async throws(SaveDeskClientError) {
        try checkUp()
        state.withLock {
            $0.dismissalKeys.append(idempotencyKey)
            $0.decision.state = .dismissed
            $0.decision.offerData = nil
        }
    }

    func resetOfferDismissal(customerId: String, idempotencyKey: String) async throws(SaveDeskClientError) -> Bool {
        try checkUp()
        return true
    }

    func recordOfferViewed(userId: String, productId: String, sessionId: String, variantId: Int?) {
        state.withLock { $0.impressions += 1 }
    }

    func recordMigrationConverted(userId: String) {
        state.withLock { $0.conversions += 1 }
    }
}
