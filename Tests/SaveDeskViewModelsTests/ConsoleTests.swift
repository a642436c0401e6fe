import Foundation
import RetentionDomain
import Testing
import TestSupport

@testable import SaveDeskViewModels

@Suite("AppModel, directory, overview, analytics, demo device")
@MainActor
struct ConsoleTests {
    @Test func twentyResponsesSubmittedWhileTheServerIsDownArriveExactlyOnceAfterBothRestart() async throws {
        // On a port no other test's server can be given once this one stops (a loaded run once
        // had another server, with the same demo key, answer on the freed port).
        let demo = try await Demo.start(port: Loopback.portOutsideTheEphemeralRange())
        await demo.stop()
        let app = try demo.console(timeout: .seconds(10))
        await app.start()
        #expect(app.connection != .connected)
        guard case .unreachable(let message) = app.connection else { Issue.record("\(app.connection)"); return }
        #expect(message.contains("could not be reached"))
        for index in 0..<20 {
            app.client.submitCancelFlowResponse(CancelFlow.Response(
                productId: "premium_monthly", userId: "cus_ava", outcome: index.isMultiple(of: 2) ? .cancelled : .retained,
                answers: [.init(questionId: 1, selectedOptionId: 11 + index % 4)], offerShown: true,
                offerAccepted: !index.isMultiple(of: 2), lastStepSeen: 3))
        }
        app.refreshOutbox()
        #expect(app.outboxWaiting == 20, "each response is on disk before submit returns")
        app.shutdown()

        let again = try await demo.restarted()
        defer { Task { await again.stop() } }
        let restarted = try again.console()
        defer { restarted.shutdown() }
        #expect(restarted.outboxWaiting == 20)
        await restarted.start()
        #expect(restarted.connection == .connected && restarted.operatorName == "Marco (support)" && restarted.isTestMode)
        // Twenty durable deliveries, one after another: a second or two alone, up to two seconds
        // each when the PostgreSQL stage runs every suite at once on two cores beside another
        // build (a loaded run took longer than 40 s). A poll: a fast drain returns at once.
        #expect(await eventually(timeout: .seconds(180)) { restarted.outboxWaiting == 0 },
                "\(restarted.client.outbox?.pending().map { "\($0.attempts) \(String(describing: $0.nextAttempt)) \($0.lastError ?? "-")" } ?? [])")
        #expect(try await again.count("cancel_flow_responses") == 20)
        // Nothing is sent twice, however often delivery is asked for.
        restarted.retryOutbox()
        #expect(await eventually(timeout: .seconds(40)) { restarted.client.outbox?.pending().isEmpty == true })
        #expect(try await again.count("cancel_flow_responses") == 20)
    }

    @Test func aStartWithTheServerUpSendsAtOnceWhatAnEarlierRunPutOff() async throws {
        let demo = try await Demo.start()
        await demo.stop()
        // An earlier run queued a response and, three times unable to reach the server, put it
        // off for 30 seconds.
        let earlier = try demo.console(timeout: .seconds(1))
        earlier.client.submitCancelFlowResponse(CancelFlow.Response(
            productId: "premium_monthly", userId: "cus_ava", outcome: .cancelled,
            answers: [.init(questionId: 1, selectedOptionId: 11)], offerShown: false, offerAccepted: false, lastStepSeen: 1))
        earlier.shutdown()
        let outbox = try #require(earlier.client.outbox)
        for _ in 0..<3 { _ = await outbox.deliver(using: earlier.client, ignoringBackoff: true) }
        let putOff = try #require(outbox.pending().first?.nextAttempt)
        #expect(putOff > Date().addingTimeInterval(20))

        let again = try await demo.restarted()
        defer { Task { await again.stop() } }
        let console = try again.console()
        defer { console.shutdown() }
        await console.start()
        #expect(console.connection == .connected)
        // Well before the put-off (20 s and more), however busy the machine.
        #expect(await eventually(timeout: .seconds(15)) { console.client.outbox?.pending().isEmpty == true })
        #expect(try await again.count("cancel_flow_responses") == 1)
    }

    @Test func navigationAndToasts() async throws {
        let app = try AppModel(serverURL: try await deadServerURL(), key: Demo.operatorKey,
                               dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-vm-\(UUID())"), timeout: .seconds(2))
        #expect(app.currentRoute == .customers && app.pop() == nil)
        app.push(.customer(id: "cus_ava"))
        app.push(.customer(id: "cus_ava"))
        app.push(.cancelFlow(customerId: "cus_ava", productId: "premium_monthly"))
        #expect(app.stack.count == 3)
        #expect(app.pop() == .cancelFlow(customerId: "cus_ava", productId: "premium_monthly"))
        app.popToRoot()
        #expect(app.stack == [.customers])

        var retried = 0
        let directory = app.makeDirectory()
        await directory.reload()
        guard case .failed(let message) = directory.phase else { Issue.record("\(directory.phase)"); return }
        let id = app.show(message, isError: true) { retried += 1 }
        #expect(app.toasts.first?.canRetry == true && app.toasts.first?.message.contains("could not be reached") == true)
        await app.retryToast(id)
        #expect(retried == 1 && app.toasts.isEmpty)
        for index in 0..<7 { app.show("note \(index)") }
        #expect(app.toasts.map(\.message) == (2..<7).map { "note \($0)" }, "at most five toasts, oldest go first")
        #expect(app.makeDemoDevice() != nil)
        let live = try AppModel(serverURL: try await deadServerURL(), key: "sk_live_whatever_0001",
                                dataDirectory: FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-vm-\(UUID())"))
        #expect(!live.isTestMode && live.makeDemoDevice() == nil, "the demo device is for test mode only")
    }

    @Test func searchAsYouTypeShowsOnlyTheNewestAnswer() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let app = try demo.console()
        let directory = app.makeDirectory(debounce: .milliseconds(50))
        let phases = Recorder { directory.phase }
        await directory.reload()
        #expect(directory.phase == .loaded && directory.emptyMessage == nil && directory.total == 16 && directory.pageCount == 1)
        for text in ["a", "av", "ava"] { directory.setQuery(text) }
        await directory.settle()
        #expect(directory.customers.map(\.id) == ["cus_ava"] && directory.selectedCustomer?.name == "Ava Thompson")
        directory.setQuery("zzz-nobody")
        await directory.settle()
        #expect(directory.phase == .loaded && directory.emptyMessage == "No customer matches \u{201C}zzz-nobody\u{201D}.")
        #expect(await phases.settled() == [.loading, .loaded, .loading, .loaded, .loading, .loaded],
                "one search for three keystrokes")
        directory.setQuery("")
        await directory.settle()
        directory.moveSelection(by: 100)
        #expect(directory.selectedIndex == 15)
        directory.moveSelection(by: -100)
        #expect(directory.selectedIndex == 0)
    }

    @Test func pagingWalksThePages() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let app = try demo.console()
        let directory = CustomerDirectory(calls: app.client, debounce: .zero, perPage: 6)
        await directory.reload()
        #expect(directory.pageCount == 3 && directory.customers.count == 6)
        await directory.nextPage()
        await directory.nextPage()
        #expect(directory.page == 3 && directory.customers.count == 4)
        await directory.nextPage()
        #expect(directory.page == 3)
        await directory.previousPage()
        #expect(directory.page == 2)
    }

    @Test func aSearchThatMatchesMoreThanAThousandSaysSo() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        try await demo.addCustomers(1_050) { "Ava Okafor \($0)" }
        let app = try demo.console()
        let directory = CustomerDirectory(calls: app.client, debounce: .zero, perPage: 20)
        directory.setQuery("okafor")
        await directory.settle()
        #expect(directory.totalCapped && directory.totalText == "1000+" && directory.pageCount == 50)
        directory.setQuery("okafor 10")
        await directory.settle()
        #expect(!directory.totalCapped && directory.totalText == "61", "10, 100–109, 1000–1049")
    }

    @Test func theOverviewShowsLifecycleSwitchAndSaveAndTheActions() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let app = try demo.console()
        let olivia = app.makeOverview(customerId: "cus_olivia")
        await olivia.load()
        #expect(olivia.phase == .loaded && olivia.profile?.name.isEmpty == false)
        #expect(olivia.entitlements.first?.source == .storeKit)
        #expect(olivia.standing?.headline == "Payment failing on the App Store \u{00B7} Premium Monthly \u{00B7} Grace period \u{00B7} 5 days left to fix payment")
        #expect(olivia.standing?.level == .warning && olivia.banners.isEmpty, "the overall line says it; no banner repeats it")

        let chloe = app.makeOverview(customerId: "cus_chloe")
        await chloe.load()
        #expect(chloe.switchAndSave?.state == .eligible)
        let action = { (kind: CustomerActions.Kind) in chloe.actions.first { $0.kind == kind } }
        #expect(action(.switchAndSave)?.isAvailable == true)
        #expect(action(.cancelFlow)?.note?.contains("App Store") == true)
        #expect(action(.resume)?.isAvailable == false && action(.resume)?.note == "nothing is paused")

        let nora = app.makeOverview(customerId: "cus_nora")
        await nora.load()
        #expect(nora.actions.first { $0.kind == .switchAndSave }?.note?.contains("starts at 30") == true)

        let emma = app.makeOverview(customerId: "cus_emma")
        await emma.load()
        #expect(emma.standing?.headline.hasPrefix("Paused on the web \u{00B7} Premium Yearly \u{00B7} resumes ") == true)
        let resume = try #require(emma.availableActions.first { $0.kind == .resume })
        await emma.resume(productId: try #require(resume.productId))
        #expect(emma.lastMessage == "Resumed" && emma.standing?.headline.hasPrefix("Active on the web") == true)
        #expect(emma.timeline.first?.action.contains("resume") == true)

        let ivan = app.makeOverview(customerId: "cus_ivan")
        await ivan.load()
        #expect(ivan.availableActions.contains { $0.kind == .winBack })

        let ava = app.makeOverview(customerId: "cus_ava")
        await ava.load()
        #expect(ava.actions.map(\.kind) == CustomerActions.Kind.allCases, "every action once, available or not")
        #expect(ava.actions.first { $0.kind == .upgrade }?.isAvailable == false, "premium is the top tier")

        // Farah (basic, cancels at period end) can undo the cancellation and move up to premium.
        let farah = app.makeOverview(customerId: "cus_farah")
        await farah.load()
        #expect(farah.standing?.headline.hasPrefix("Cancelling on the web \u{00B7} Basic Monthly \u{00B7} Cancels on ") == true, "\(farah.actions)")
        #expect(Set(farah.availableActions.map(\.kind)).isSuperset(of: [.reactivate, .upgrade]), "\(farah.actions)")
        await farah.reactivate(productId: "basic_monthly")
        #expect(farah.lastMessage?.hasPrefix("Renews again") == true && farah.standing?.headline.hasPrefix("Active on the web") == true)
        await farah.upgrade(productId: "basic_monthly")
        #expect(farah.lastMessage?.hasPrefix("Upgraded to") == true, "\(farah.lastMessage ?? "")")

        let nobody = app.makeOverview(customerId: "cus_nobody")
        await nobody.load()
        #expect(nobody.phase == .failed("no customer with id \"cus_nobody\""))
    }

    @Test func funnelReportBothViewsWithFilters() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let app = try demo.console()
        defer { app.shutdown() }
        let session = app.makeCancelFlow(customerId: "cus_ava", productId: "premium_monthly")
        await session.load()
        try await session.skipAndCancel()
        #expect(await eventually { app.client.outbox?.pending().isEmpty == true })
        let report = app.makeFunnelReport()
        await report.load()
        let before = report.cancelFlow?.outcomes.total ?? 0
        #expect(before >= 1 && report.outcomeBars.map(\.label) == ["Retained", "Paused", "Cancelled", "Dismissed"])
        await report.apply(.init(operatorName: "Marco (support)"))
        #expect(report.cancelFlow?.operators.allSatisfy { $0._operator == "Marco (support)" } == true)
        await report.apply(.init(operatorName: "nobody at all"))
        #expect(report.cancelFlow?.outcomes.total == 0)
        await report.apply(.init())
        await report.show(.switchAndSave)
        #expect(report.phase == .loaded && report.funnelBars.count == 3)
    }

    @Test func theDemoDeviceDrivesTheClockTheAppStoreAndTheSyncQueue() async throws {
        let demo = try await Demo.start()
        let app = try demo.console()
        let device = try #require(app.makeDemoDevice())
        await device.advanceClock(days: 1)
        #expect(device.lastResult?.hasPrefix("Now ") == true && device.serverTime != nil)
        await device.appStoreEvent(.refund, originalTransactionId: "2000000810000002")
        #expect(device.lastResult == "App Store refund: applied")

        await device.purchaseOnAppStore(userId: "cus_ava", productId: "premium_monthly")
        #expect(device.lastResult?.hasPrefix("Purchased and synced") == true)
        #expect(await eventually { device.syncLog.last?.hasPrefix("synced ") == true })
        #expect(try await app.client.restoreEntitlements(userId: "cus_ava").contains { $0.source == .storeKit })

        // The sync fails while the server is away: the transaction waits, then goes when it is back.
        let signed = try await app.client.simulateStoreKitPurchase(productId: "premium_monthly")
        await demo.stop()
        let offline = try AppModel(serverURL: demo.url, key: Demo.operatorKey, dataDirectory: demo.consoleDirectory, timeout: .seconds(2))
        let away = try #require(offline.makeDemoDevice())
        await away.syncQueue.sync(jws: signed.jwsRepresentation, transactionId: signed.transactionId,
                                  originalTransactionId: signed.originalTransactionId, userId: "cus_ben", using: offline.client)
        #expect(await eventually { away.syncLog.last?.hasPrefix("sync failed") == true && away.syncWaiting == 1 })
        let again = try await demo.restarted()
        defer { Task { await again.stop() } }
        let back = try again.console()
        let device2 = try #require(back.makeDemoDevice())
        #expect(device2.syncWaiting == 1, "the queue is on disk")
        #expect(await device2.syncQueue.retryDue(using: back.client, now: Date().addingTimeInterval(10)) == 1)
        #expect(try await back.client.restoreEntitlements(userId: "cus_ben").contains { $0.storekitOriginalTransactionId == signed.originalTransactionId })
        device2.logOut()
        #expect(device2.syncQueue.pending().isEmpty)
    }
}
