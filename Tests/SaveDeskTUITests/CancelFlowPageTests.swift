import Foundation
import RetentionDomain
import Testing

@testable import SaveDeskTUI
@testable import SaveDeskViewModels
@testable import TerminalKit

/// The cancel flow's pages drawn from values alone: no server, no session, no client. The screen
/// draws the session's view the same way.
@MainActor
@Suite("Cancel-flow pages from values")
struct CancelFlowPageTests {
    func draw(_ view: CancelFlowView, ui: CancelFlowPageUI? = nil, device: Bool = false, width: Int = 80, height: Int = 20) -> [String] {
        let ui = CancelFlowScreen.ui(for: view, stored: ui ?? CancelFlowPageUI(page: nil))
        var frame = Frame(width: width, height: height)
        CancelFlowDrawing(
            view: view, ui: ui, buttons: CancelFlowScreen.buttons(for: view, device: device).map(\.label),
            isTyping: CancelFlowScreen.isTyping(view, ui: ui), tick: 0, theme: .builtInDefault
        ).render(into: &frame, area: Rect(x: 0, y: 0, width: width, height: height))
        return frame.buffer.lines
    }

    static let terms = CancelFlowSwitchTerms(
        productId: "premium_monthly", productName: "Premium Monthly", discountPercent: 20,
        priceNow: Price(amountMicros: 9_990_000, currencyCode: "USD"), priceWithDiscount: Price(amountMicros: 7_990_000, currencyCode: "USD"),
        interval: .month, bridgedDays: 18, title: "Switch and save", message: "Pay 20% less on the web.", ctaText: "Switch & save 20%"
    )

    @Test func aQuestionWithItsChosenOption() {
        let view = CancelFlowView(
            content: .question(.init(text: "Why are you leaving?", isRequired: true, isFreeText: false,
                                     options: [.init(id: 11, label: "Too expensive"), .init(id: 12, label: "Not enough comics")],
                                     chosenOptionId: 12)),
            page: .question(index: 0), progress: .init(step: 0, total: 3), canGoBack: false
        )
        let lines = draw(view)
        #expect(lines[0].contains("step 1 of 3"))
        #expect(lines.contains { $0.contains("Why are you leaving? *") })
        #expect(lines.contains { $0.contains("Not enough comics") })
        #expect(lines.contains { $0.contains("Continue") && $0.contains("Skip and cancel") })
        // The chosen option is the highlighted one when the page is new.
        #expect(CancelFlowScreen.ui(for: view, stored: CancelFlowPageUI(page: nil)).highlighted == 1)
    }

    @Test func theSwitchOfferWhileTheCustomerPays() {
        let view = CancelFlowView(
            content: .switchOffer(.init(terms: Self.terms, checkout: .init(url: "http://127.0.0.1:9/checkout/txn_1", transactionId: "txn_1"))),
            page: .retention(.offer), progress: .init(step: 2, total: 3)
        )
        let text = draw(view, device: true).joined(separator: "\n")
        #expect(text.contains("Premium Monthly: $9.99/month on the App Store \u{2192} $7.99/month on the web"), "\(text)")
        #expect(text.contains("The 18 days left on the App Store plan are bridged: no double charge."))
        #expect(text.contains("http://127.0.0.1:9/checkout/txn_1"))
        #expect(text.contains("Waiting for the customer to pay"))
        #expect(text.contains("Customer paid") && text.contains("Simulate payment") && text.contains("No thanks"))
        #expect(!draw(view, device: false).joined().contains("Simulate payment"))
    }

    @Test func anEndingWaitingForApple() {
        let ending = CancelFlowView.Ending(
            outcome: .init(outcome: .cancelled, message: "Cancellation read out", customerSteps: ["Open Settings", "Tap your name"]),
            appleSide: .cancellationWaiting(readOutAt: Date(timeIntervalSince1970: 1_795_348_800)),
            appleMessage: CancelFlow.AgentCopy.appleHasNotConfirmed
        )
        let text = draw(CancelFlowView(content: .ending(ending))).joined(separator: "\n")
        #expect(text.contains("Cancelled \u{00B7} waiting for Apple"))
        #expect(text.contains("1. Open Settings") && text.contains("2. Tap your name"))
        #expect(text.contains("Apple has not reported renewal off yet."))
        #expect(text.contains("Check Apple again") && text.contains("Done"))
        let confirmed = CancelFlowView.Ending(
            outcome: ending.outcome, appleSide: .cancellationConfirmed(readOutAt: .distantPast, confirmedAt: .distantPast)
        )
        let done = draw(CancelFlowView(content: .ending(confirmed))).joined(separator: "\n")
        #expect(done.contains("confirmed by Apple") && !done.contains("Open Settings") && !done.contains("Check Apple again"))
    }

    @Test func thePausePickerShowsEachResumeDate() {
        let view = CancelFlowView(
            content: .pause(.init(title: "Take a break", body: "Pause instead.", ctaText: "Pause", options: [
                .init(id: 1, label: "1 month", resumesOn: Date(timeIntervalSince1970: 1_797_940_800)),
                .init(id: 2, label: "2 months", resumesOn: nil),
            ])),
            page: .retention(.pause), progress: .init(step: 2, total: 3)
        )
        let text = draw(view).joined(separator: "\n")
        #expect(text.contains("1 month \u{2014} resumes Dec 22, 2026"))
        #expect(text.contains("2 months \u{2014} resumes \u{2014}"))
        #expect(CancelFlowScreen.choiceCount(view) == 2)
    }
}
