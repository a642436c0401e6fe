import Foundation
import RetentionDomain
import SaveDeskClient

/// The server calls the switch-and-save flow makes (the decision, the checkout, Apple's side);
/// `SaveDeskClient` is the live one.
public protocol SwitchAndSaveCalls: Sendable {
    func userOffer(userId: String) async throws(SaveDeskClientError) -> SwitchAndSaveDecision
    func products() async throws(SaveDeskClientError) -> [Product]
    func restoreEntitlements(userId: String) async throws(SaveDeskClientError) -> [Entitlement]
    func createCheckout(
        productId: String, userId: String, stripeCustomerId: String?, appStoreSubscriptionEnd: Date?,
        originalTransactionId: String?, idempotencyKey: String
    ) async throws(SaveDeskClientError) -> Wire.Checkout
    func confirmTransaction(id: String, attempts: Int, interval: Duration) async throws(SaveDeskClientError) -> Wire.CheckoutTransaction
    func storeKitSubscriptionStatus(originalTransactionId: String) async throws(SaveDeskClientError) -> Wire.StoreKitSubscriptionStatus
    func reportAppleRenewal(transactionId: String, renewing: Bool, appStoreSubscriptionEnd: Date?) async throws(SaveDeskClientError)
    func recordOfferDismissed(userId: String, variantId: Int?, idempotencyKey: String) async throws(SaveDeskClientError)
    func resetOfferDismissal(customerId: String, idempotencyKey: String) async throws(SaveDeskClientError) -> Bool
    /// Fire-and-forget (through the outbox).
    func recordOfferViewed(userId: String, productId: String, sessionId: String, variantId: Int?)
    /// Fire-and-forget (through the outbox).
    func recordMigrationConverted(userId: String)
}

extension SaveDeskClient: SwitchAndSaveCalls {}
