import Foundation
import RetentionDomain
import SaveDeskClient
import Testing

@testable import SaveDeskViewModels

/// The cancel flow's view model against an in-memory server: no process, no database, no port.
@Suite("Cancel flow session (in memory)")
@MainActor
struct CancelFlowSessionFakeTests {
    func session(_ calls: FakeCancelFlowCalls) -> CancelFlowSession {
        CancelFlowSession(userId: "cus_fake", productId: "premium_monthly", calls: calls) { _ in
            Issue.record("a web subscriber's flow needs no switch and save")
            fatalError("unreachable")
        }
    }

    @Test func aRetriedPauseWhoseAnswerWasLostGetsTheStoredAnswer() async throws {
        let calls = FakeCancelFlowCalls()
        let flow = session(calls)
        await flow.load()
        #expect(flow.phase == .inFlow)
        try flow.select(optionId: 4)
        try flow.proceed()
        #expect(flow.page == .retention(.pause))
        calls.loseAnswers(1)
        try await flow.choosePause(days: 30)
        guard case .failed = flow.phase else { Issue.record("the lost answer should fail the call, got \(flow.phase)"); return }

        await flow.retry()
        guard case .finished(let outcome) = flow.phase else { Issue.record("retry should finish the flow, got \(flow.phase)"); return }
        #expect(outcome.outcome == .paused, "the retry is the same call: the stored answer, not already_paused")
        #expect(outcome.pausedUntil == FakeCancelFlowCalls.now.addingTimeInterval(30 * 86_400))
        #expect(calls.keys.count == 2 && Set(calls.keys).count == 1, "one Idempotency-Key for the action and its retry: \(calls.keys)")
        #expect(calls.responses.map(\.outcome) == [.paused], "one response, submitted once")
    }

    @Test func twoActionsAreTwoKeys() async throws {
        let calls = FakeCancelFlowCalls()
        for _ in 0..<2 {
            let flow = session(calls)
            await flow.load()
            try await flow.skipAndCancel()
            guard case .finished(let outcome) = flow.phase else { Issue.record("\(flow.phase)"); return }
            #expect(outcome.outcome == .cancelled)
        }
        #expect(Set(calls.keys).count == 2, "separate actions never share a key: \(calls.keys)")
    }

    /// The price on the offer page is the live web subscription's (web first, as the server's
    /// target), discounted by the offer's terms: 40% off 9.99 is 5.99, never the expired 5.99 one's.
    @Test func theOfferIsPricedOnTheSubscriptionTheServerWouldChange() async throws {
        let calls = FakeCancelFlowCalls()
        let flow = session(calls)
        await flow.load()
        #expect(flow.currentPrice == Price(amountMicros: 9_990_000, currencyCode: "USD"))
        #expect(flow.offerPrice == Price(amountMicros: 5_990_000, currencyCode: "USD"))
        #expect(flow.periodEnd == WireFormat.parseDate("2026-12-01T00:00:00Z"))
    }
}
