import Foundation
import SaveDeskClient
import Testing

@testable import SaveDeskServer
@testable import SaveDeskTUI
@testable import SaveDeskViewModels
@testable import TerminalKit

/// The console following the server's event stream: what the customer (another process) does
/// moves the agent's screen with no key pressed, and another agent on the customer is shown.
@Suite("A live console")
@MainActor
struct LiveConsoleTests {
    static let priyaKey = "sk_test_savedesk_demo_priya_0001"

    /// Polls the rendered screen (bounded) until it shows `text`; how long it took.
    @discardableResult
    func waitFor(_ text: String, on harness: Harness, sourceLocation: SourceLocation = #_sourceLocation) async -> Duration? {
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(30) {
            if harness.text().contains(text) { return ContinuousClock.now - started }
            try? await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the screen never showed \"\(text)\":\n\(harness.text())", sourceLocation: sourceLocation)
        return nil
    }

    /// The home screen's first page goes alone (`TUIApp.start`): the event stream and the session
    /// check start when it has its answer, then both come.
    @Test func theEventStreamAndTheSessionCheckWaitForTheFirstPage() async throws {
        let harness = try await Harness.start(startApp: false)
        defer { Task { await harness.stop() } }
        let app = harness.app
        app.start(live: true)
        #expect(app.model.live == .off, "the event stream waits for the home screen's first page")
        await app.settle()
        #expect(app.model.live != .off)
        #expect(app.model.operatorName != nil, "the session was checked")
        await waitFor("\u{21BB} live", on: harness)
        #expect(harness.text().contains("Ava Thompson"))
    }

    @Test func theCustomerPaysAndAppleTurnsRenewalOffWhileTheAgentPressesNothing() async throws {
        let harness = try await Harness.start(startApp: false)
        defer { Task { await harness.stop() } }
        let app = harness.app
        app.start(live: true)
        await app.settle()
        await waitFor("\u{21BB} live", on: harness)

        // Diego finds it too expensive; the agent offers the switch and sends the checkout link.
        app.open(.cancelFlow(customerId: "cus_diego", productId: "premium_monthly"))
        await app.settle()
        await harness.press(.character("1"), .enter)
        await waitFor("Save 20% by paying on the web", on: harness)
        await harness.press(.character("y"))
        await waitFor("Waiting for the customer to pay", on: harness)
        let screen = try #require(app.currentScreen as? CancelFlowScreen)
        guard case .switchOffer(let offer) = screen.session.view().content, let checkout = offer.checkout else {
            Issue.record("no checkout on the page: \(harness.text())")
            return
        }

        // The customer pays, elsewhere (another client of the server): the flow moves on by itself.
        let customer = SaveDeskClient(serverURL: URL(string: harness.running.baseURL)!, key: Self.priyaKey)
        _ = try await customer.simulateCheckout(transactionId: checkout.transactionId, outcome: .paid)
        let paid = await waitFor("Read these steps to turn off Apple billing:", on: harness)
        await waitFor("waiting for Apple", on: harness)

        // The customer turns off Apple's renewal in Settings: the App Store says so, the flow shows it.
        let original = try #require(try await customer.appStoreOriginalTransactionId(userId: "cus_diego", activeOnly: false))
        _ = try await customer.simulateAppStoreEvent(originalTransactionId: original, event: .autoRenewOff)
        let confirmed = await waitFor("switched to the web \u{00B7} completed", on: harness)
        print("live console: paid → Apple steps on screen in \(paid.map { "\($0)" } ?? "-"), renewal off → completed in \(confirmed.map { "\($0)" } ?? "-")")
    }

    @Test func anotherAgentOnTheCustomerIsShownAndLeaves() async throws {
        let harness = try await Harness.start(startApp: false)
        defer { Task { await harness.stop() } }
        let app = harness.app
        app.start(live: true)
        await app.settle()
        await waitFor("\u{21BB} live", on: harness)
        app.open(.customer(id: "cus_diego"))
        await app.settle()
        await waitFor("Diego Ram\u{00ED}rez", on: harness)

        // Priya's console opens Diego and starts his cancel flow.
        let priya = try AppModel(serverURL: URL(string: harness.running.baseURL)!, key: Self.priyaKey,
                                 dataDirectory: harness.directory.appendingPathComponent("priya"))
        priya.startLive()
        defer { priya.shutdown() }
        for _ in 0..<1500 where priya.live != .live { try? await Task.sleep(for: .milliseconds(20)) }
        priya.announce(customerId: "cus_diego", activity: .cancelFlow)
        await waitFor("Priya (support lead) is also on this customer (in a cancel flow)", on: harness)

        // She sees Marco too, viewing.
        for _ in 0..<1500 where priya.others(on: "cus_diego").isEmpty { try? await Task.sleep(for: .milliseconds(20)) }
        #expect(priya.others(on: "cus_diego").map(\.sentence) == ["Marco (support) is also on this customer"])

        // She leaves: the line goes.
        priya.announce(customerId: nil, activity: .viewing)
        let started = ContinuousClock.now
        while harness.text().contains("Priya (support lead)"), ContinuousClock.now - started < .seconds(30) {
            try? await Task.sleep(for: .milliseconds(20))
        }
        #expect(!harness.text().contains("Priya (support lead)"), "\(harness.text())")
    }

    @Test func aGapInTheStreamMakesEveryScreenReadAgain() async throws {
        let harness = try await Harness.start()
        defer { Task { await harness.stop() } }
        let app = harness.app
        app.model.onResync = { [weak app] in app?.resync() }
        app.open(.customer(id: "cus_ava"))
        await app.settle()
        await waitFor("Ava", on: harness)
        #expect(!harness.text().contains("Paused"))
        // A change the console never heard of (no stream here), then the stream says it missed some.
        let other = SaveDeskClient(serverURL: URL(string: harness.running.baseURL)!, key: Self.priyaKey)
        _ = try await other.pauseSubscription(productId: "premium_monthly", userId: "cus_ava", days: 30)
        app.model.receive(.gap(after: 1, through: 2))
        await app.settle()
        await waitFor("Paused", on: harness)
    }

    /// What the agent sees of the stream: the status bar's state and another agent's line on the
    /// customer screen (buffer snapshots, text and style, at 80×24 and 120×40).
    @Test func theCustomerScreenShowsWhoElseIsOnItAndTheBarSaysLive() async throws {
        let harness = try await Harness.start()
        defer { Task { await harness.stop() } }
        let app = harness.app
        app.model.live = .live
        app.model.receive(.presence(.init(
            customerId: "cus_ava", _operator: "Priya (support lead)", session: "console-other", activity: .cancelFlow,
            expiresAt: Harness.now.addingTimeInterval(30)
        )))
        app.open(.customer(id: "cus_ava"))
        await app.settle()
        #expect(harness.text().contains("Priya (support lead) is also on this customer (in a cancel flow)"))
        #expect(harness.text().contains("\u{21BB} live"))
        try Snapshot.check(harness, "customer-presence")
    }
}
