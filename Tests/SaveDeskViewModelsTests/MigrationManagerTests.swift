import Foundation
import RetentionDomain
import Testing

@testable import SaveDeskViewModels

@Suite("MigrationManager")
@MainActor
struct MigrationManagerTests {
    @Test func fromEligibleToCompleted() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let app = try demo.console()
        defer { app.shutdown() }
        let manager = app.makeMigrationManager(userId: "cus_chloe")
        let states = Recorder { manager.state }
        let loading = Recorder { manager.isLoading }
        await event { await manager.refresh() }
        #expect(manager.state == .eligible)
        let offer = try #require(manager.offerData)
        #expect(offer.prompt.productId == "premium_monthly" && offer.prompt.discountPercent == 20 && offer.freeTrialDays == 9)
        let url = try #require(await manager.startCheckout())
        #expect(url.path.contains("checkout") && manager.checkoutError == nil)
        #expect(await loading.settled() == [false, true, false])
        let checkout = try #require(manager.checkout)
        #expect(checkout.trialType == "migration" && checkout.amount == 0)

        // Not paid yet: the manager does not move on.
        await event { await manager.markCheckoutSucceeded() }
        #expect(manager.state == .presented && manager.checkoutError?.contains("not confirmed") == true)

        let device = try #require(app.makeDemoDevice())
        await device.completeCheckout(transactionId: checkout.transactionId, paid: true)
        await event { await manager.markCheckoutSucceeded() }
        #expect(manager.state == .accepted)

        // Apple still renews: the steps are shown and the manager waits.
        await event { await manager.showAppleSubscriptionManagement() }
        #expect(manager.state == .accepted && manager.waitingForAppleCancel && manager.appleCancelSteps.count == 4)
        await device.appStoreEvent(.autoRenewOff, originalTransactionId: "2000000810000001")
        await event { await manager.showAppleSubscriptionManagement() }
        #expect(manager.state == .completed && !manager.waitingForAppleCancel)
        #expect(manager.offerData?.prompt.discountPercent == 20)
        #expect(await states.settled() == [.loading, .eligible, .presented, .accepted, .completed], "\(states.values)")

        // The impression and the conversion went through the outbox.
        #expect(await eventually { app.client.outbox?.pending().isEmpty == true })
        let funnel = try await app.client.switchAndSaveAnalytics().funnel
        #expect(funnel.impressions == 1 && funnel.conversions == 1 && funnel.completed == 1)
    }

    @Test func aRefreshDoesNotMoveALockedState() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let app = try demo.console()
        defer { app.shutdown() }
        let manager = app.makeMigrationManager(userId: "cus_chloe")
        let states = Recorder { manager.state }
        await event { await manager.refresh() }
        await event { manager.present() }
        #expect(manager.state == .presented)
        await event { await manager.refresh() }  // the server still says eligible
        await event { await manager.refresh() }
        #expect(manager.state == .presented && manager.offerData != nil)
        #expect(await states.settled() == [.loading, .eligible, .presented], "\(states.values)")
    }

    @Test func aDismissedOfferStaysDismissedAfterARestartAndOnOtherConsoles() async throws {
        let demo = try await Demo.start()
        let app = try demo.console()
        let manager = app.makeMigrationManager(userId: "cus_chloe")
        let states = Recorder { manager.state }
        await event { await manager.refresh() }
        await event { await manager.dismiss() }
        #expect(manager.state == .dismissed && manager.offerData == nil)
        await event { await manager.refresh() }
        #expect(await states.settled() == [.loading, .eligible, .dismissed], "\(states.values)")
        app.shutdown()

        // The console and the server restart.
        await demo.stop()
        let again = try await demo.restarted()
        defer { Task { await again.stop() } }
        let restarted = try again.console()
        defer { restarted.shutdown() }
        let after = restarted.makeMigrationManager(userId: "cus_chloe")
        await after.refresh()
        #expect(after.state == .dismissed && after.reasons.first?.code == .dismissed)

        // Another agent's console (its own data directory) sees it too.
        let other = try AppModel(serverURL: again.url, key: "sk_test_savedesk_demo_priya_0001",
                                 dataDirectory: again.consoleDirectory.deletingLastPathComponent().appendingPathComponent("priya"))
        let theirs = other.makeMigrationManager(userId: "cus_chloe")
        await theirs.refresh()
        #expect(theirs.state == .dismissed)

        // resetDismissedState clears it everywhere.
        await theirs.resetDismissedState()
        #expect(theirs.state == .eligible)
        let mine = restarted.makeMigrationManager(userId: "cus_chloe")
        await mine.refresh()
        #expect(mine.state == .eligible, "a dismissal cleared on the server is cleared from the cache too")
    }

    @Test func aDismissalMadeWhileTheServerIsDownHoldsAndIsSentLater() async throws {
        let demo = try await Demo.start()
        let app = try demo.console()
        let manager = app.makeMigrationManager(userId: "cus_chloe")
        await event { await manager.refresh() }
        await demo.stop()
        await event { await manager.dismiss() }
        #expect(manager.state == .dismissed && manager.loadError?.contains("server will be told") == true)
        app.shutdown()

        // Restart the console while the server is still down: the cache keeps the dismissal.
        let offline = try AppModel(serverURL: demo.url, key: Demo.operatorKey, dataDirectory: demo.consoleDirectory, timeout: .seconds(2))
        let cached = offline.makeMigrationManager(userId: "cus_chloe")
        await cached.refresh()
        #expect(cached.state == .dismissed && cached.loadError != nil)

        // The server is back: the dismissal is recorded there.
        let again = try await demo.restarted()
        defer { Task { await again.stop() } }
        let online = try again.console()
        let synced = online.makeMigrationManager(userId: "cus_chloe")
        await synced.refresh()
        #expect(synced.state == .dismissed)
        #expect(try await online.client.userOffer(userId: "cus_chloe").state == .dismissed)
    }

    @Test func ineligibleCustomersCarryTheirReasons() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let app = try demo.console()
        let nora = app.makeMigrationManager(userId: "cus_nora")
        await nora.refresh()
        #expect(nora.state == .ineligible && nora.offerData == nil)
        #expect(nora.reasons.map(\.message).contains { $0.contains("this campaign starts at 30") })
        #expect(await nora.startCheckout() == nil && nora.checkoutError?.contains("not available") == true)
        let hana = app.makeMigrationManager(userId: "cus_hana")
        await hana.refresh()
        #expect(hana.state == .accepted, "mid-switch: paid on the web while Apple still renews")
        let nobody = app.makeMigrationManager(userId: "cus_nobody")
        await nobody.refresh()
        #expect(nobody.state == .ineligible && nobody.loadError == nil, "a new user has nothing to switch")
        #expect(nobody.reasons.map(\.message).contains("no active App Store subscription"))
    }
}
