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
}
