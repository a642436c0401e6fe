import Foundation
import RetentionDomain
import Testing

@testable import SaveDeskViewModels

/// The seed's typical cancel tree, against a real server, watched through Observation.
@Suite("CancelFlowSession")
@MainActor
struct CancelFlowSessionTests {
    typealias Page = RetentionDomain.CancelFlow.Navigator.Page

    /// Starts a flow for a customer and records its phase and page as they change.
    func start(_ demo: Demo, user: String = "cus_ava") async throws -> (CancelFlowSession, Recorder<CancelFlowSession.Phase>, Recorder<Page?>, AppModel) {
        let app = try demo.console()
        let session = app.makeCancelFlow(customerId: user, productId: "premium_monthly")
        let phases = Recorder { session.phase }
        let pages = Recorder { session.page }
        await event { await session.load() }
        return (session, phases, pages, app)
    }

    func waitForResponses(_ demo: Demo, _ app: AppModel, count: Int) async throws -> Bool {
        await eventually { (try? await demo.count("cancel_flow_responses")) == count && app.client.outbox?.pending().isEmpty == true }
    }

    @Test func acceptingTheSaveOfferRetainsTheCustomer() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let (session, phases, pages, app) = try await start(demo)
        try await event { try session.select(optionId: 13) }
        try await event { try session.proceed() }
        try await event { try session.select(optionId: 23) }
        try await event { try session.proceed() }
        try await event { try session.setFreeText("  more comics please  ") }
        try await event { try session.proceed() }
        #expect(session.page == .retention(.offer))
        try await event { try await session.acceptOffer() }
        guard case .finished(let outcome) = session.phase else { Issue.record("not finished: \(session.phase)"); return }
        #expect(outcome.outcome == .retained && outcome.message == "40% off for 3 months")
        #expect(await phases.settled() == [.loading, .inFlow, .applying("Applying the save offer…"), .finished(outcome)], "\(phases.values)")
        #expect(await pages.settled() == [nil, .question(index: 0), .question(index: 1), .question(index: 2), .retention(.offer), .finished(.retained)], "\(pages.values)")
        let response = try #require(session.submittedResponse)
        #expect(response.outcome == .retained && response.offerShown && response.offerAccepted && response.lastStepSeen == 3)
        #expect(response.answers.map(\.freeText) == [nil, nil, "more comics please"])
        #expect(try await waitForResponses(demo, app, count: 1))
        #expect(try await demo.count("discounts", where: "percent_off = 40 AND subscription_id IN (SELECT id FROM subscriptions WHERE customer_id = 'cus_ava')") == 1)
    }

    @Test func decliningTheOfferAndPausingOneMonth() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let (session, phases, pages, app) = try await start(demo)
        try await event { try session.select(optionId: 14) }
        try await event { try session.proceed() }
        try await event { try session.proceed() }  // question 2 is optional
        try await event { try session.proceed() }  // so is question 3
        try await event { try session.declineOffer() }
        #expect(session.page == .retention(.pause))
        let now = Date()
        let preview = try #require(session.resumeDatePreview(optionId: 1, now: now))
        #expect(abs(preview.timeIntervalSince(now) - 30 * 86_400) < 1)
        try await event { try await session.choosePause(optionId: 1) }
        guard case .finished(let outcome) = session.phase else { Issue.record("not finished: \(session.phase)"); return }
        #expect(outcome.outcome == .paused && outcome.pausedUntil != nil && outcome.message.hasPrefix("Paused until "))
        #expect(await phases.settled() == [.loading, .inFlow, .applying("Pausing…"), .finished(outcome)], "\(phases.values)")
        #expect(await pages.settled().suffix(3) == [.retention(.offer), .retention(.pause), .finished(.paused)], "\(pages.values)")
        let response = try #require(session.submittedResponse)
        #expect(response.offerShown && !response.offerAccepted && response.pauseShown && response.pauseAccepted && response.pauseDurationDays == 30)
        #expect(try await waitForResponses(demo, app, count: 1))
        #expect(try await demo.count("subscriptions", where: "customer_id = 'cus_ava' AND status = 'paused'") == 1)
    }

    @Test func decliningEverythingCancelsAtPeriodEnd() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let (session, phases, pages, app) = try await start(demo)
        try await event { try session.select(optionId: 13) }
        for _ in 0..<3 { try await event { try session.proceed() } }
        try await event { try session.declineOffer() }
        try await event { try session.declinePause() }
        #expect(session.page == .cancelConfirmation)
        try await event { try await session.confirmCancel() }
        guard case .finished(let outcome) = session.phase else { Issue.record("not finished: \(session.phase)"); return }
        #expect(outcome.outcome == .cancelled && outcome.accessUntil.map { $0 > Date() } == true)
        #expect(outcome.message.hasPrefix("Cancelled; access until "))
        #expect(await phases.settled() == [.loading, .inFlow, .applying("Cancelling…"), .finished(outcome)], "\(phases.values)")
        #expect(await pages.settled().suffix(4) == [.retention(.offer), .retention(.pause), .cancelConfirmation, .finished(.cancelled)], "\(pages.values)")
        #expect(session.submittedResponse?.outcome == .cancelled)
        #expect(try await waitForResponses(demo, app, count: 1))
        #expect(try await demo.count("subscriptions", where: "customer_id = 'cus_ava' AND will_renew = FALSE") == 1)
    }

    @Test func anEarlyTriggerJumpsToRetentionAndBackRestoresTheAnswer() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let (session, _, pages, _) = try await start(demo)
        try await event { try session.select(optionId: 12) }  // "I need a break": triggers the pause
        try await event { try session.proceed() }
        #expect(session.page == .retention(.pause), "the pause comes first when the pause triggered")
        try await event { try session.declinePause() }
        #expect(session.page == .retention(.offer))
        #expect(await event { session.back() })
        #expect(session.page == .retention(.pause))
        #expect(await event { session.back() })
        #expect(session.page == .question(index: 0) && session.navigator?.selection == .option(id: 12))
        try await event { try session.select(optionId: 13) }  // no trigger now: on to question 2
        try await event { try session.proceed() }
        #expect(await pages.settled() == [nil, .question(index: 0), .retention(.pause), .retention(.offer), .retention(.pause), .question(index: 0), .question(index: 1)], "\(pages.values)")
        await event { await session.abandon() }
        #expect(session.submittedResponse?.outcome == .dismissed && session.submittedResponse?.answers.count == 1)
    }

    @Test func anAppStoreSubscriptionEndsWithTheStepsToReadOut() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let (session, _, _, _) = try await start(demo, user: "cus_chloe")
        try await event { try await session.skipAndCancel() }
        guard case .finished(let outcome) = session.phase else { Issue.record("not finished: \(session.phase)"); return }
        #expect(outcome.outcome == .cancelled && outcome.message.contains("waiting for Apple to confirm") && outcome.customerSteps.count == 4)
        #expect(session.appleSide.map { if case .cancellationWaiting = $0 { true } else { false } } == true)
        #expect(session.submittedResponse?.outcome == .cancelled)
    }

    /// Diego (App Store) finds it too expensive: switch and save is the save offer, with prices;
    /// checkout → paid → the steps for Apple → auto-renew off → completed. The response and the
    /// switch are recorded once.
    @Test func anAppStoreSubscriberWhoFindsItTooExpensiveSwitchesAndSaves() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let (session, phases, _, app) = try await start(demo, user: "cus_diego")
        #expect(session.plan?.billing == .appStore && session.plan?.pauseAvailable == false)
        try await event { try session.select(optionId: 11) }
        try await event { try session.proceed() }
        #expect(session.page == .retention(.offer))
        guard case .switchAndSave(let terms)? = session.saveOffer else { Issue.record("\(String(describing: session.saveOffer))"); return }
        #expect(terms.priceLine == "$9.99/month on the App Store \u{2192} $6.39/month on the web")
        #expect(terms.bridgeLine == "The 25 days left on the App Store plan are bridged: no double charge.")
        try await event { try await session.acceptOffer() }
        #expect(session.isAwaitingSwitchPayment && session.submittedResponse == nil, "the flow waits for the customer to pay")
        let checkout = try #require(session.switchAndSave?.checkout)
        _ = try await app.client.simulateCheckout(transactionId: checkout.transactionId, outcome: .paid)
        await event { await session.confirmSwitchPayment() }
        guard case .finished(let outcome) = session.phase else { Issue.record("not finished: \(session.phase)"); return }
        #expect(outcome.outcome == .retained && outcome.customerSteps.count == 4)
        #expect(outcome.message.hasPrefix("Switched to web billing: Premium Monthly at $6.39/month, 20% off."))
        #expect(session.appleSide == .switchWaiting)
        _ = try await app.client.simulateAppStoreEvent(originalTransactionId: "2000000810000003", event: .autoRenewOff)
        await event { await session.checkApple() }
        #expect(session.appleSide == .switchCompleted)
        #expect(await phases.settled() == [.loading, .inFlow, .applying("Creating the checkout…"), .inFlow,
                                           .applying("Confirming the payment…"), .finished(outcome)], "\(phases.values)")
        let response = try #require(session.submittedResponse)
        #expect(response.outcome == .retained && response.offerShown && response.offerAccepted && !response.pauseShown)
        #expect(try await waitForResponses(demo, app, count: 1))
        #expect(await eventually { (try? await demo.count("migration_conversions", where: "customer_id = 'cus_diego'")) == 1 })
        #expect(try await demo.count("offer_impressions", where: "customer_id = 'cus_diego'") == 1, "seen once, when its page showed")
        // The customer screen: active on the web, Apple billing winding down without a double charge.
        let overview = app.makeOverview(customerId: "cus_diego")
        await overview.load()
        #expect(overview.standing?.headline.hasPrefix("Active on the web \u{00B7} Premium Monthly \u{00B7} Migration trial") == true,
                "\(overview.standing?.headline ?? "")")
        #expect(overview.standing?.detail?.hasSuffix("no double charge.") == true && overview.banners.isEmpty)
    }

    /// Diego needs a break: Apple has no pause, so the page says so and shows the switch; he
    /// declines and cancels: the steps are read out, the flow waits for Apple, and Apple's
    /// auto-renew-off notification confirms it, on the customer screen too.
    @Test func anAppStoreCancellationWaitsForAppleThenIsConfirmed() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let (session, _, _, app) = try await start(demo, user: "cus_diego")
        try await event { try session.select(optionId: 12) }
        try await event { try session.proceed() }
        #expect(session.page == .retention(.offer), "the pause cannot apply; what can is shown")
        #expect(session.unavailableNote == "Apple has no pause: Premium Monthly is billed by the App Store, so it cannot be paused.")
        try await event { try session.declineOffer() }
        #expect(session.page == .cancelConfirmation && session.isAppStoreCancellation)
        try await event { try await session.confirmCancel() }
        guard case .finished(let outcome) = session.phase, case .cancellationWaiting? = session.appleSide else {
            Issue.record("\(session.phase) \(String(describing: session.appleSide))"); return
        }
        #expect(outcome.outcome == .cancelled && outcome.customerSteps.count == 4)
        let overview = app.makeOverview(customerId: "cus_diego")
        await overview.load()
        let waiting = try #require(overview.appStoreCancellations.first)
        #expect(Display.appStoreCancellation(waiting, productName: "Premium Monthly").hasSuffix("by Marco (support), waiting for Apple to confirm"))
        _ = try await app.client.simulateAppStoreEvent(originalTransactionId: "2000000810000003", event: .autoRenewOff)
        await event { await session.checkApple() }
        guard case .cancellationConfirmed? = session.appleSide else { Issue.record("\(String(describing: session.appleSide))"); return }
        await overview.load()
        let confirmed = try #require(overview.appStoreCancellations.first)
        #expect(Display.appStoreCancellation(confirmed, productName: "Premium Monthly").contains(", confirmed by Apple on "))
        let response = try #require(session.submittedResponse)
        #expect(response.outcome == .cancelled && response.offerShown && !response.offerAccepted && !response.pauseShown && !response.pauseAccepted)
        #expect(try await waitForResponses(demo, app, count: 1))
    }

    /// Nora is too new for switch and save: her save offer is an App Store offer code.
    @Test func anAppStoreSubscriberWhoCannotSwitchGetsAnOfferCode() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let (session, _, _, app) = try await start(demo, user: "cus_nora")
        #expect(session.saveOffer?.kind == "offer_code")
        try await event { try session.select(optionId: 11) }
        try await event { try session.proceed() }
        try await event { try await session.acceptOffer() }
        guard case .finished(let outcome) = session.phase else { Issue.record("\(session.phase)"); return }
        #expect(outcome.outcome == .retained && outcome.offerCode == "READERSTAY01")
        #expect(try await waitForResponses(demo, app, count: 1))
    }

    @Test func aServerThatGoesAwayMidFlowOffersARetryAndLosesNothing() async throws {
        let demo = try await Demo.start()
        let (session, _, _, app) = try await start(demo)
        try await event { try session.select(optionId: 11) }
        try await event { try session.proceed() }
        await demo.stop()
        try await event { try await session.acceptOffer() }
        guard case .failed(let message) = session.phase else { Issue.record("expected a failure: \(session.phase)"); return }
        #expect(message.contains("could not be reached"))
        #expect(session.isMidway && session.submittedResponse == nil)
        await event { await session.giveUp() }
        #expect(session.submittedResponse?.offerAccepted == true && session.submittedResponse?.outcome == .dismissed)
        #expect(app.client.outbox?.pending().count == 1, "the response waits in the outbox")
        app.shutdown()
    }

    @Test func aFlowThatCannotLoadSaysWhy() async throws {
        let app = try AppModel(serverURL: try await deadServerURL(), key: Demo.operatorKey,
                               dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-vm-\(UUID())"), timeout: .seconds(2))
        let session = app.makeCancelFlow(customerId: "cus_ava", productId: "premium_monthly")
        await event { await session.load() }
        guard case .unavailable(let message) = session.phase else { Issue.record("\(session.phase)"); return }
        #expect(message.contains("could not be reached"))
        #expect(throws: CancelFlowSession.NavigationError.notOnQuestion) { try session.proceed() }
    }
}
