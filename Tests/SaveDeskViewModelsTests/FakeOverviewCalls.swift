import Foundation
import RetentionDomain
import SaveDeskClient
import Synchronization

@testable import SaveDeskViewModels

/// One customer's overview against an in-memory desk: the cancel-flow fake's web subscriber
/// (profile, subscriptions, catalog), no switch-and-save decision or upgrade, and a resume that
/// records its key. Calls fail while the desk is "down".
final class FakeOverviewCalls: CustomerOverviewCalls {
    struct State {
        var down = false
        var resumeKeys: [String] = []
    }

    let state = Mutex(State())
    private let subscriber = FakeCancelFlowCalls()

    var resumeKeys: [String] { state.withLock { $0.resumeKeys } }
    func setDown(_ down: Bool) { state.withLock { $0.down = down } }

    private func checkUp() throws(SaveDeskClientError) {
        if state.withLock({ $0.down }) { throw .fakeUnreachable }
    }

    private static func none(_ what: String) -> SaveDeskClientError {
        SaveDeskClientError(kind: .server(status: 404, code: "not_found"), message: "no \(what) here")
    }

    func customer(id: String) async throws(SaveDeskClientError) -> Wire.CustomerDetail {
        try checkUp()
        return try await subscriber.customer(id: id)
    }

    func products() async throws(SaveDeskClientError) -> [Product] { try await subscriber.products() }
    func userOffer(userId: String) async throws(SaveDeskClientError) -> SwitchAndSaveDecision { throw Self.none("offer") }
    func timeline(customerId: String, limit: Int) async throws(SaveDeskClientError) -> [Wire.AuditEvent] { [] }
    func upgradeOffer(userId: String, productId: String) async throws(SaveDeskClientError) -> Wire.UpgradeOffer { throw Self.none("upgrade") }

    func resumeSubscription(productId: String, userId: String, idempotencyKey: String) async throws(SaveDeskClientError) {
        try checkUp()
        state.withLock { $0.resumeKeys.append(idempotencyKey) }
    }

    func reactivateSubscription(productId: String, userId: String, idempotencyKey: String) async throws(SaveDeskClientError) -> Date? { throw Self.none("reactivation") }
    func winBack(customerId: String, productId: String, idempotencyKey: String) async throws(SaveDeskClientError) -> Wire.WinBack { throw Self.none("win-back") }
    func executeUpgrade(userId: String, from current: String, to target: String, idempotencyKey: String) async throws(SaveDeskClientError) -> Wire.UpgradeResult {
        throw Self.none("upgrade")
    }
    func respondToUpgradeOffer(
        userId: String, from current: String, to target: String, outcome: Wire.UpgradeAnswer, idempotencyKey: String
    ) async throws(SaveDeskClientError) {}
}
