import Foundation
import RetentionDomain
import SaveDeskClient

/// The server calls one customer's overview makes (what it shows, and the actions taken from
/// it); `SaveDeskClient` is the live one.
public protocol CustomerOverviewCalls: Sendable {
    func customer(id: String) async throws(SaveDeskClientError) -> Wire.CustomerDetail
    func userOffer(userId: String) async throws(SaveDeskClientError) -> SwitchAndSaveDecision
    func timeline(customerId: String, limit: Int) async throws(SaveDeskClientError) -> [Wire.AuditEvent]
    func products() async throws(SaveDeskClientError) -> [Product]
    func upgradeOffer(userId: String, productId: String) async throws(SaveDeskClientError) -> Wire.UpgradeOffer
    func resumeSubscription(productId: String, userId: String, idempotencyKey: String) async throws(SaveDeskClientError)
    func reactivateSubscription(productId: String, userId: String, idempotencyKey: String) async throws(SaveDeskClientError) -> Date?
    func winBack(customerId: String, productId: String, idempotencyKey: String) async throws(SaveDeskClientError) -> Wire.WinBack
    func executeUpgrade(userId: String, from current: String, to target: String, idempotencyKey: String) async throws(SaveDeskClientError) -> Wire.UpgradeResult
    func respondToUpgradeOffer(
        userId: String, from current: String, to target: String, outcome: Wire.UpgradeAnswer, idempotencyKey: String
    ) async throws(SaveDeskClientError)
}

extension SaveDeskClient: CustomerOverviewCalls {}
