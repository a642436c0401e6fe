import Foundation
import RetentionDomain
import SaveDeskClient
import Testing

@testable import SaveDeskViewModels

/// The switch-and-save flow's view model on an in-memory server (FakeSwitchAndSaveCalls): no
/// server, milliseconds. MigrationManagerTests keeps the same flow end to end on the real one.
@Suite("MigrationManager on fakes")
@MainActor
struct MigrationManagerFakeTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-migration-fake-\(UUID())")

    func manager(_ calls: FakeSwitchAndSaveCalls) throws -> MigrationManager {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return MigrationManager(userId: "cus_fake", stripeCustomerId: nil, calls: calls,
                                dismissals: DismissalCache(file: directory.appendingPathComponent("dismissals.json")))
    }

    @Test func anEligibleOfferIsShownPricedAndCountedOncePerSession() async throws {
        let calls = FakeSwitchAndSaveCalls()
        let manager = try manager(calls)
        await manager.refresh()
        await manager.refresh()
        #expect(manager.state == .eligible)
        #expect(manager.offerData == FakeSwitchAndSaveCalls.offer)
        #expect(manager.terms != nil)
        #expect(calls.snapshot.impressions == 1, "one impression per session")
        #expect(calls.snapshot.productCalls == 1, "the catalog is read once")
    }

    /// The first checkout is created on the server but its answer is lost: starting again sends
    /// the same Idempotency-Key and gets that checkout back instead of making a second one.
    @Test func startingACheckoutAgainAfterALostAnswerGetsTheSameCheckout() async throws {
        let calls = FakeSwitchAndSaveCalls()
        let manager = try manager(calls)
        await manager.refresh()
        calls.loseNextCheckoutAnswer()
        #expect(await manager.startCheckout() == nil)
        #expect(manager.checkoutError != nil && manager.state == .eligible)
        let url = await manager.startCheckout()
        #expect(url?.absoluteString == "https://pay.example/txn_1")
        let sent = calls.snapshot
        #expect(sent.checkoutKeys.count == 2 && Set(sent.checkoutKeys).count == 1, "one key for the one action: \(sent.checkoutKeys)")
        #expect(sent.checkouts.count == 1, "no second checkout")
        #expect(manager.state == .presented)
        await manager.markCheckoutSucceeded()
        #expect(manager.state == .accepted && calls.snapshot.conversions == 1)
    }

    @Test func aFailedCheckoutThenASuccessThenANewOneUseTwoKeys() async throws {
        let calls = FakeSwitchAndSaveCalls()
        let manager = try manager(calls)
        await manager.refresh()
        calls.setDown(true)
        #expect(await manager.startCheckout() == nil)
        calls.setDown(false)
        #expect(await manager.startCheckout() != nil)
        #expect(await manager.startCheckout() != nil, "presented: the agent may start again")
        let keys = calls.snapshot.checkoutKeys
        #expect(keys.count == 2 && keys[0] != keys[1], "a created checkout ends the action: \(keys)")
    }

    @Test func aDismissalWhileTheServerIsDownHoldsAndIsSentLater() async throws {
        let calls = FakeSwitchAndSaveCalls()
        let manager = try manager(calls)
        await manager.refresh()
        calls.setDown(true)
        await manager.dismiss()
        #expect(manager.state == .dismissed && manager.offerData == nil)
        #expect(manager.loadError?.contains("server will be told") == true)
        #expect(DismissalCache(file: directory.appendingPathComponent("dismissals.json")).entry(for: "cus_fake")?.synced == false)
        await manager.refresh()
        #expect(manager.state == .dismissed, "the cached dismissal holds while the server is away")
        calls.setDown(false)
        await manager.refresh()
        #expect(manager.state == .dismissed)
        #expect(calls.snapshot.dismissalKeys.count == 1, "sent once the server answers")
        #expect(DismissalCache(file: directory.appendingPathComponent("dismissals.json")).entry(for: "cus_fake")?.synced == true)
    }

    @Test func anAcceptedSwitchDoesNotMoveWhenTheDecisionChanges() async throws {
        let calls = FakeSwitchAndSaveCalls()
        let manager = try manager(calls)
        await manager.refresh()
        _ = await manager.startCheckout()
        await manager.markCheckoutSucceeded()
        #expect(manager.state == .accepted)
        calls.setDecision { $0.state = .ineligible; $0.offerData = nil }
        await manager.refresh()
        #expect(manager.state == .accepted, "a locked state keeps its place")
    }
}
