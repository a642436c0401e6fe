import Foundation
import Testing

@testable import RetentionDomain

@Suite("Cancel-flow navigator")
struct CancelFlowNavigatorTests {
    typealias Navigator = CancelFlow.Navigator
    static let now = WireFormat.parseDate("2026-11-22T12:00:00Z")!

    /// The seed's typical flow: Q1 "Why?" (3 = offer trigger, 4 = pause trigger, 5 = none),
    /// Q2 optional free text, Q3 required free text; 40 % offer; pause 30 days or until Jan 1.
    static func config(offer: Bool = true, pause: Bool = true, thirdQuestion: Bool = true) -> CancelFlow.Config {
        var questions = [
            CancelFlow.Question(id: 2, order: 1, questionText: "Anything else?", questionType: .freeText, isRequired: false),
            CancelFlow.Question(id: 1, order: 0, questionText: "Why are you cancelling?", questionType: .singleSelect,
                                isRequired: true, options: [
                                    .init(id: 5, order: 2, label: "Missing a feature"),
                                    .init(id: 3, order: 0, label: "Too expensive", triggersOffer: true),
                                    .init(id: 4, order: 1, label: "Taking a break", triggersPause: true),
                                ]),
        ]
        if thirdQuestion {
            questions.append(.init(id: 7, order: 2, questionText: "What would bring you back?", questionType: .freeText,
                                   isRequired: true))
        }
        return CancelFlow.Config(
            enabled: true, questions: questions,
            offer: .init(enabled: offer, title: "Wait", body: "40% off", ctaText: "Stay", type: .discount, value: "40"),
            pause: .init(enabled: pause, title: "Pause", body: "Take a break", ctaText: "Pause", options: [
                .init(id: 1, order: 0, label: "1 month", durationType: .days, durationDays: 30),
                .init(id: 2, order: 1, label: "Until the new year", durationType: .fixedDate,
                      resumeDate: WireFormat.parseDate("2027-01-01T00:00:00Z")),
            ]),
            variantId: 11
        )
    }

    func navigator(_ config: CancelFlow.Config = config()) -> Navigator {
        Navigator(config: config, productId: "premium_monthly", userId: "user_42")
    }

    @Test func questionsAreShownInOrderWithOrderedOptions() {
        let nav = navigator()
        #expect(nav.page == .question(index: 0))
        #expect(nav.currentQuestion?.id == 1)
        #expect(nav.currentQuestion?.options.map(\.id) == [3, 4, 5])
        #expect(nav.questions.map(\.id) == [1, 2, 7])
        #expect(nav.progress == (0, 4))
        #expect(!nav.canGoBack)
    }

    @Test func acceptOfferAfterEarlyTrigger() throws {
        var nav = navigator()
        #expect(!nav.canContinue, "required single-select needs a choice")
        try nav.select(optionId: 3)
        #expect(nav.canContinue)
        try nav.proceed()
        #expect(nav.page == .retention(.offer), "option 3 triggers the offer: questions 2 and 3 are skipped")
        try nav.acceptOffer()
        #expect(nav.outcome == .retained)
        #expect(nav.response() == CancelFlow.Response(
            productId: "premium_monthly", userId: "user_42", outcome: .retained,
            answers: [.init(questionId: 1, selectedOptionId: 3)], offerShown: true, offerAccepted: true,
            pauseShown: false, pauseAccepted: false, pauseDurationDays: nil, lastStepSeen: 3, variantId: 11))
    }

    @Test func declineOfferThenPause() throws {
        var nav = navigator()
        try nav.select(optionId: 3)
        try nav.proceed()
        try nav.declineOffer()
        #expect(nav.page == .retention(.pause))
        try nav.acceptPause(optionId: 1, now: Self.now)
        let response = nav.response()
        #expect(response.outcome == .paused)
        #expect(response.offerShown && !response.offerAccepted)
        #expect(response.pauseShown && response.pauseAccepted)
        #expect(response.pauseDurationDays == 30)
    }

    @Test func pauseTriggerShowsPauseFirstThenOffer() throws {
        var nav = navigator()
        try nav.select(optionId: 4)
        try nav.proceed()
        #expect(nav.page == .retention(.pause))
        try nav.declinePause()
        #expect(nav.page == .retention(.offer))
        try nav.declineOffer()
        #expect(nav.page == .cancelConfirmation)
    }

    @Test func pauseUntilAFixedDateCountsDays() throws {
        var nav = navigator()
        try nav.select(optionId: 4)
        try nav.proceed()
        try nav.acceptPause(optionId: 2, now: Self.now)
        #expect(nav.pauseDurationDays == 40, "Nov 22 12:00 → Jan 1 00:00 is 39.5 days, rounded up")
    }

    @Test func declineEverythingThenCancelAtPeriodEnd() throws {
        var nav = navigator()
        try nav.select(optionId: 5)
        try nav.proceed()
        #expect(nav.page == .question(index: 1), "no trigger: next question")
        #expect(nav.canContinue, "optional free text may be blank")
        try nav.setFreeText("   ")
        try nav.proceed()
        #expect(nav.page == .question(index: 2))
        try nav.setFreeText("  ")
        #expect(!nav.canContinue, "required free text must not be blank")
        #expect(throws: Navigator.NavigationError.answerRequired(questionId: 7)) { try nav.proceed() }
        try nav.setFreeText("  A cheaper plan  ")
        try nav.proceed()
        #expect(nav.page == .retention(.offer))
        try nav.declineOffer()
        try nav.declinePause()
        #expect(nav.page == .cancelConfirmation)
        try nav.confirmCancel()
        #expect(!nav.cancelImmediately)
        let response = nav.response()
        #expect(response.outcome == .cancelled)
        #expect(response.answers == [
            .init(questionId: 1, selectedOptionId: 5), .init(questionId: 2, freeText: nil),
            .init(questionId: 7, freeText: "A cheaper plan"),
        ])
        #expect(response.offerShown && response.pauseShown && !response.offerAccepted && !response.pauseAccepted)
        #expect(response.lastStepSeen == 3)
    }

    @Test func backRestoresThePreviousAnswer() throws {
        var nav = navigator()
        try nav.select(optionId: 5)
        try nav.proceed()
        try nav.setFreeText("hello")
        do { let moved = nav.back(); #expect(moved) }
        #expect(nav.page == .question(index: 0))
        #expect(nav.selection == .option(id: 5))
        do { let moved = nav.back(); #expect(!moved, "nothing before the first question") }
        try nav.select(optionId: 3)
        try nav.proceed()
        #expect(nav.page == .retention(.offer))
        do { let moved = nav.back(); #expect(moved) }
        #expect(nav.page == .question(index: 0), "from the retention page back to the last question")
        #expect(nav.selection == .option(id: 3))
        #expect(nav.lastStepSeen == 3, "the retention page was seen")
    }

    @Test func backWithinRetentionAndFromConfirmation() throws {
        var nav = navigator()
        try nav.select(optionId: 3)
        try nav.proceed()
        try nav.declineOffer()
        try nav.declinePause()
        do { let moved = nav.back(); #expect(moved) }
        #expect(nav.page == .retention(.pause))
        do { let moved = nav.back(); #expect(moved) }
        #expect(nav.page == .retention(.offer))
        do { let moved = nav.back(); #expect(moved) }
        #expect(nav.page == .question(index: 0))
    }

    @Test func answersOffThePathAreDropped() throws {
        var nav = navigator()
        try nav.select(optionId: 5)
        try nav.proceed()
        try nav.setFreeText("note")
        try nav.proceed()
        do { let moved = nav.back(); #expect(moved) }
        do { let moved = nav.back(); #expect(moved) }
        try nav.select(optionId: 3)
        try nav.proceed()
        try nav.acceptOffer()
        #expect(nav.response().answers == [.init(questionId: 1, selectedOptionId: 3)])
    }

    @Test func skipAndCancelEndsAsCancelled() throws {
        var nav = navigator()
        try nav.skipAndCancel()
        let response = nav.response()
        #expect(response.outcome == .cancelled)
        #expect(response.answers.isEmpty)
        #expect(!response.offerShown && !response.pauseShown)
        #expect(response.lastStepSeen == 0)
        #expect(throws: Navigator.NavigationError.alreadyFinished(.cancelled)) { try nav.select(optionId: 3) }
        do { let moved = nav.back(); #expect(!moved) }
    }

    @Test func lastStepSeenIsTheFurthestQuestion() throws {
        var nav = navigator()
        try nav.select(optionId: 5)
        try nav.proceed()
        try nav.proceed()
        #expect(nav.lastStepSeen == 2)
        nav.back()
        nav.back()
        #expect(nav.lastStepSeen == 2, "going back does not lower the furthest step")
        try nav.dismiss()
        #expect(nav.response().outcome == .dismissed)
    }

    @Test func withoutRetentionTheQuestionsLeadToConfirmation() throws {
        var nav = navigator(Self.config(offer: false, pause: false, thirdQuestion: false))
        #expect(!nav.hasRetentionPage)
        try nav.select(optionId: 3)
        try nav.proceed()
        #expect(nav.page == .question(index: 1), "a trigger without a retention page goes to the next question")
        try nav.proceed()
        #expect(nav.page == .cancelConfirmation)
        try nav.confirmCancel(immediately: true)
        #expect(nav.cancelImmediately)
        #expect(nav.response().lastStepSeen == 1)
    }

    @Test func offerTriggerWithOnlyPauseEnabledShowsPause() throws {
        var nav = navigator(Self.config(offer: false, pause: true))
        try nav.select(optionId: 3)
        try nav.proceed()
        #expect(nav.page == .retention(.pause))
    }

    @Test func disabledFlowGoesStraightToConfirmation() {
        let nav = navigator(CancelFlow.Config(enabled: false, questions: []))
        #expect(nav.page == .cancelConfirmation)
        #expect(nav.progress == (0, 0))
    }

    @Test func wrongOperationsThrowAndChangeNothing() throws {
        var nav = navigator()
        let before = nav
        #expect(throws: Navigator.NavigationError.unknownOption(questionId: 1, optionId: 99)) { try nav.select(optionId: 99) }
        #expect(throws: Navigator.NavigationError.wrongInput(questionId: 1, expected: .singleSelect)) { try nav.setFreeText("x") }
        #expect(throws: Navigator.NavigationError.notShowing(.offer)) { try nav.acceptOffer() }
        #expect(throws: Navigator.NavigationError.notShowing(.pause)) { try nav.acceptPause(days: 10) }
        #expect(throws: Navigator.NavigationError.notConfirmingCancel) { try nav.confirmCancel() }
        #expect(nav == before)
        try nav.select(optionId: 4)
        try nav.proceed()
        #expect(throws: Navigator.NavigationError.invalidPauseLength(days: 0)) { try nav.acceptPause(days: 0) }
        #expect(throws: Navigator.NavigationError.unknownPauseOption(id: 9)) { try nav.acceptPause(optionId: 9, now: Self.now) }
        #expect(throws: Navigator.NavigationError.notOnQuestion) { try nav.proceed() }
        try nav.acceptPause(days: 14)
        #expect(nav.response().pauseDurationDays == 14)
    }

    @Test func responseOutcomeCanBeOverridden() throws {
        var nav = navigator()
        try nav.select(optionId: 4)
        try nav.proceed()
        try nav.acceptPause(optionId: 1, now: Self.now)
        // The pause call failed; the customer still chose to pause, and the record says so.
        let response = nav.response(outcome: .cancelled)
        #expect(response.outcome == .cancelled)
        #expect(response.pauseAccepted && response.pauseDurationDays == 30)
    }
}
