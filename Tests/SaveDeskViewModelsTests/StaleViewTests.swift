import Foundation
import SaveDeskClient
import Testing

@testable import SaveDeskViewModels

/// Two agents on one customer: an action built on a view someone else changed since is refused,
/// the screen shows what is there now and says what changed, and the agent's second try goes
/// through.
@Suite("A stale view")
@MainActor
struct StaleViewTests {
    @Test func anActionOnAStaleViewIsRefusedShownAgainAndConfirmedOnTheSecondTry() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let marco = try demo.console()
        let overview = marco.makeOverview(customerId: "cus_ava")
        await overview.load()
        let loaded = try #require(overview.version)

        // Priya, in her own console, cancels Ava's subscription at the period's end.
        let priya = SaveDeskClient(serverURL: demo.url, key: "sk_test_savedesk_demo_priya_0001")
        try await priya.cancelSubscription(productId: "premium_monthly", userId: "cus_ava")

        // Marco, on the view from before, turns renewal back on: refused, naming what changed.
        await overview.reactivate(productId: "premium_monthly")
        #expect(overview.lastMessage?.contains("Priya (support lead) cancelled the subscription at the period's end") == true, "\(overview.lastMessage ?? "")")
        #expect(overview.lastMessage?.contains("Look again and confirm") == true)
        #expect((overview.version ?? 0) > loaded, "the screen shows what is there now")
        #expect(overview.entitlements.first { $0.productId == "premium_monthly" }?.summary.contains("Cancels") == true,
                "\(overview.entitlements.map(\.summary))")

        // Looked again, he confirms: it goes through.
        await overview.reactivate(productId: "premium_monthly")
        #expect(overview.lastMessage?.hasPrefix("Renews again") == true, "\(overview.lastMessage ?? "")")
    }

    @Test func aCancelFlowOvertakenByAnotherAgentSaysWhatChangedAndTheRetryConfirms() async throws {
        let demo = try await Demo.start()
        defer { Task { await demo.stop() } }
        let marco = try demo.console()
        let flow = marco.makeCancelFlow(customerId: "cus_ava", productId: "premium_monthly")
        await flow.load()
        try flow.select(optionId: 13)
        try flow.proceed()
        try flow.select(optionId: 23)
        try flow.proceed()
        try flow.proceed()
        #expect(flow.page == .retention(.offer))

        // Meanwhile Priya gives Ava the save offer from her own console.
        let priya = SaveDeskClient(serverURL: demo.url, key: "sk_test_savedesk_demo_priya_0001")
        _ = try await priya.acceptSaveOffer(productId: "premium_monthly", userId: "cus_ava")

        try await flow.acceptOffer()
        guard case .failed(let message) = flow.phase else { Issue.record("not refused: \(flow.phase)"); return }
        #expect(message.contains("Priya (support lead) accepted the save offer"), "\(message)")
        // The agent confirms on what is there now: the retry goes through (the offer was already on: a repeat).
        await flow.retry()
        guard case .finished(let outcome) = flow.phase else { Issue.record("not finished: \(flow.phase)"); return }
        #expect(outcome.outcome == .retained)
    }
}
