import Foundation
import SaveDeskClient
import Testing

@testable import SaveDeskViewModels

/// One customer's overview against an in-memory desk (no server). ConsoleTests runs it against
/// the real server, with every lifecycle state of the demo customers.
@MainActor
@Suite("Customer overview (fakes)")
struct CustomerOverviewFakeTests {
    @Test func aFirstLoadThatFailsSaysWhyAndARefreshThatFailsKeepsTheScreen() async {
        let calls = FakeOverviewCalls()
        let overview = CustomerOverview(customerId: "cus_ada", calls: calls)
        calls.setDown(true)
        await overview.load()
        #expect(overview.phase == .failed("the SaveDesk server could not be reached") && overview.entitlements.isEmpty)
        calls.setDown(false)
        await overview.load()
        #expect(overview.phase == .loaded && overview.profile?.name == "Ada Fake")
        #expect(overview.entitlements.map(\.productName) == ["Premium Monthly"] && overview.entitlements.first?.source == .webCheckout, "\(overview.entitlements)")
        calls.setDown(true)
        await overview.load()
        #expect(overview.phase == .loaded && overview.entitlements.count == 1, "what is on screen stays")
        #expect(overview.lastMessage == "the SaveDesk server could not be reached")
    }

    @Test func eachActionIsOneKeyAndSaysHowItWent() async {
        let calls = FakeOverviewCalls()
        let overview = CustomerOverview(customerId: "cus_ada", calls: calls)
        await overview.load()
        await overview.resume(productId: "premium_monthly")
        await overview.resume(productId: "premium_monthly")
        #expect(overview.lastMessage == "Resumed" && Set(calls.resumeKeys).count == 2, "two actions, two keys")
        await overview.winBack(productId: "premium_monthly")
        #expect(overview.lastMessage == "no win-back here" && !overview.isWorking)
    }
}
