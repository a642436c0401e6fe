import Foundation

extension CancelFlow {
    /// The cancel-flow navigator (flows.md): one page per question in `order`, then one retention
    /// page when an offer or pause is enabled, then a cancel confirmation. It only records what the
    /// customer chose; the caller performs the billing calls and always submits `response()`.
    ///
    /// - Continue is enabled when a single-select option is chosen, the free text is non-blank, or
    ///   the question is not required.
    /// - An option that triggers the offer or the pause jumps straight to the retention page; the
    ///   triggered part is shown first, then the other one if it is enabled.
    /// - Back goes to the previous retention step, then to the last question seen, then one
    ///   question back along the path taken, restoring the earlier answer as the selection.
    /// - Operations that do not fit the current page throw `NavigationError` and change nothing.
    /// - `availability` narrows the config to what can be applied for this customer (no pause for
    ///   App Store billing, `RetentionPlan`): an unavailable part is never shown, and an option that
    ///   triggers it leads to what is available, with `unavailableTrigger` saying which was asked for.
    public struct Navigator: Hashable, Sendable {
        /// Which parts of the retention page can be offered to this customer.
        public struct Availability: Hashable, Sendable {
            public var offer: Bool
            public var pause: Bool

            public init(offer: Bool, pause: Bool) {
                self.offer = offer
                self.pause = pause
            }

            /// Everything the config enables.
            public static let asConfigured = Availability(offer: true, pause: true)
        }

        /// A part of the retention page.
        public enum RetentionStep: String, Hashable, Sendable, Codable {
            case offer, pause
        }

        /// Where the flow is.
        public enum Page: Hashable, Sendable {
            case question(index: Int)
            case retention(RetentionStep)
            case cancelConfirmation
            case finished(Outcome)
        }

        /// The answer being composed on a question page.
        public enum Selection: Hashable, Sendable {
            case option(id: Int)
            case freeText(String)
        }

        /// An operation that does not fit where the flow is.
        public enum NavigationError: Error, Hashable, Sendable, CustomStringConvertible {
            case notOnQuestion
            case wrongInput(questionId: Int, expected: QuestionType)
            case unknownOption(questionId: Int, optionId: Int)
            case answerRequired(questionId: Int)
            case notShowing(RetentionStep)
            case notConfirmingCancel
            case unknownPauseOption(id: Int)
            case invalidPauseLength(days: Int)
            case alreadyFinished(Outcome)

            public var description: String {
                switch self {
                case .notOnQuestion: "the flow is not on a question"
                case .wrongInput(let id, let expected): "question \(id) takes a \(expected.wireValue) answer"
                case .unknownOption(let qid, let oid): "question \(qid) has no option \(oid)"
                case .answerRequired(let id): "question \(id) needs an answer"
                case .notShowing(let step): "the \(step.rawValue) is not being shown"
                case .notConfirmingCancel: "the flow is not asking to confirm the cancellation"
                case .unknownPauseOption(let id): "there is no pause option \(id)"
                case .invalidPauseLength(let days): CancelFlow.PauseLength.problem(days) ?? "a pause of \(days) days"
                case .alreadyFinished(let outcome): "the flow already ended (\(outcome.wireValue))"
                }
            }
        }

        public let config: Config
        public let availability: Availability
        public let productId: String
        public let userId: String
        /// The questions in display order.
        public let questions: [Question]

        public private(set) var page: Page
        /// The selection on the current question page.
        public private(set) var selection: Selection?
        /// Recorded answers, by question index.
        private var answers: [Int: Answer] = [:]
        /// The question indices visited, in order; the last is the current or most recent question.
        private var path: [Int] = []
        private var retentionSteps: [RetentionStep] = []
        private var retentionPosition = 0
        private var furthestQuestion = 0
        private var retentionSeen = false

        public private(set) var offerShown = false
        public private(set) var offerAccepted = false
        public private(set) var pauseShown = false
        public private(set) var pauseAccepted = false
        public private(set) var pauseDurationDays: Int?
        /// For a cancellation: whether it takes effect now rather than at period end.
        public private(set) var cancelImmediately = false
        /// The part of the retention page the last answer asked for that cannot be offered here.
        public private(set) var unavailableTrigger: RetentionStep?
        private var unavailableTriggerQuestion: Int?

        public init(config: Config, productId: String, userId: String, availability: Availability = .asConfigured) {
            self.config = config
            self.availability = availability
            self.productId = productId
            self.userId = userId
            self.questions = config.enabled ? config.orderedQuestions : []
            self.page = .cancelConfirmation
            if !questions.isEmpty {
                show(question: 0)
            } else if hasRetentionPage {
                enterRetention(trigger: nil)
            }
        }

        // MARK: Reading

        /// True when an enabled offer or pause follows the questions.
        public var hasRetentionPage: Bool { config.enabled && (offersSaveOffer || offersPause) }

        /// Whether the save offer is enabled and can be offered.
        public var offersSaveOffer: Bool { config.offer?.enabled == true && availability.offer }
        /// Whether the pause is enabled and can be offered.
        public var offersPause: Bool { config.pause?.enabled == true && availability.pause }

        /// The question on screen, if any.
        public var currentQuestion: Question? {
            if case .question(let index) = page { return questions[index] }
            return nil
        }

        /// Whether Continue is enabled on the current question.
        public var canContinue: Bool {
            guard let question = currentQuestion else { return false }
            if !question.isRequired { return true }
            switch selection {
            case .option: return question.questionType == .singleSelect
            case .freeText(let text): return !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            case nil: return false
            }
        }

        /// Whether Back leads anywhere from the current page.
        public var canGoBack: Bool {
            switch page {
            case .question: path.count > 1
            case .retention: retentionPosition > 0 || !path.isEmpty
            case .cancelConfirmation: !retentionSteps.isEmpty || !path.isEmpty
            case .finished: false
            }
        }

        /// The outcome, once the flow has finished.
        public var outcome: Outcome? {
            if case .finished(let outcome) = page { return outcome }
            return nil
        }

        /// The furthest question index reached, or the question count once the retention page was shown.
        public var lastStepSeen: Int { retentionSeen ? questions.count : furthestQuestion }

        /// Progress for the dots: the current step (0-based) out of questions plus the retention page.
        public var progress: (step: Int, total: Int) {
            let total = questions.count + (hasRetentionPage ? 1 : 0)
            switch page {
            case .question(let index): return (index, total)
            case .retention: return (questions.count, total)
            case .cancelConfirmation, .finished: return (total, total)
            }
        }

        /// The answers along the path taken, in order.
        public var recordedAnswers: [Answer] { path.compactMap { answers[$0] } }

        // MARK: Questions

        /// Chooses an option of the current single-select question.
        public mutating func select(optionId: Int) throws(NavigationError) {
            let question = try requireQuestion()
            guard question.questionType == .singleSelect else {
                throw .wrongInput(questionId: question.id, expected: question.questionType)
            }
            guard config.problem(with: CancelFlow.Answer(questionId: question.id, selectedOptionId: optionId)) == nil else {
                throw .unknownOption(questionId: question.id, optionId: optionId)
            }
            selection = .option(id: optionId)
        }

        /// Sets the text of the current free-text question.
        public mutating func setFreeText(_ text: String) throws(NavigationError) {
            let question = try requireQuestion()
            guard question.questionType != .singleSelect else {
                throw .wrongInput(questionId: question.id, expected: question.questionType)
            }
            selection = .freeText(text)
        }

        /// Continue: records the answer and moves on (next question, or the retention page early when
        /// the chosen option triggers it, or the cancel confirmation after the last question).
        public mutating func proceed() throws(NavigationError) {
            let question = try requireQuestion()
            guard case .question(let index) = page else { throw .notOnQuestion }
            guard canContinue else { throw .answerRequired(questionId: question.id) }
            var chosen: Option?
            switch selection {
            case .option(let id):
                chosen = question.options.first { $0.id == id }
                answers[index] = Answer(questionId: question.id, selectedOptionId: id)
            case .freeText(let text):
                let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
                answers[index] = Answer(questionId: question.id, freeText: trimmed.isEmpty ? nil : trimmed)
            case nil:
                answers[index] = Answer(questionId: question.id)
            }
            let trigger: RetentionStep? =
                chosen?.triggersOffer == true ? .offer : chosen?.triggersPause == true ? .pause : nil
            if let trigger, hasRetentionPage {
                enterRetention(trigger: trigger)
            } else if index + 1 < questions.count {
                path.append(index + 1)
                show(question: index + 1)
            } else if hasRetentionPage {
                enterRetention(trigger: nil)
            } else {
                page = .cancelConfirmation
            }
            // Said on the pages that follow, until the agent goes back to a question.
            if let trigger, !isOffered(trigger) {
                unavailableTrigger = trigger
                unavailableTriggerQuestion = index
            }
        }

        /// Back one step. Returns false (and changes nothing) when there is nowhere to go back to.
        @discardableResult
        public mutating func back() -> Bool {
            guard canGoBack else { return false }
            switch page {
            case .question:
                path.removeLast()
                show(question: path[path.count - 1])
            case .retention:
                if retentionPosition > 0 {
                    retentionPosition -= 1
                    page = .retention(retentionSteps[retentionPosition])
                } else {
                    retentionSteps = []
                    show(question: path[path.count - 1])
                }
            case .cancelConfirmation:
                if !retentionSteps.isEmpty {
                    retentionPosition = retentionSteps.count - 1
                    page = .retention(retentionSteps[retentionPosition])
                } else {
                    show(question: path[path.count - 1])
                }
            case .finished:
                return false
            }
            return true
        }

        /// "Skip and cancel": ends the flow as cancelled from any page before the end.
        public mutating func skipAndCancel(immediately: Bool = false) throws(NavigationError) {
            try requireUnfinished()
            cancelImmediately = immediately
            page = .finished(.cancelled)
        }

        /// The agent closes the flow without a decision.
        public mutating func dismiss() throws(NavigationError) {
            try requireUnfinished()
            page = .finished(.dismissed)
        }

        // MARK: Retention

        /// The customer accepts the save offer.
        public mutating func acceptOffer() throws(NavigationError) {
            try requireRetention(.offer)
            offerAccepted = true
            page = .finished(.retained)
        }

        /// The customer declines the save offer: the pause follows if enabled, else the confirmation.
        public mutating func declineOffer() throws(NavigationError) {
            try requireRetention(.offer)
            advanceRetention()
        }

        /// The customer picks a pause option.
        public mutating func acceptPause(optionId: Int, now: Date) throws(NavigationError) {
            try requireRetention(.pause)
            guard let option = config.pause?.options.first(where: { $0.id == optionId }) else {
                throw .unknownPauseOption(id: optionId)
            }
            guard let days = option.durationDays(from: now) else { throw .invalidPauseLength(days: 0) }
            recordPause(days: days)
        }

        /// The customer asks for a pause of a number of days.
        public mutating func acceptPause(days: Int) throws(NavigationError) {
            try requireRetention(.pause)
            guard CancelFlow.PauseLength.problem(days) == nil else { throw .invalidPauseLength(days: days) }
            recordPause(days: days)
        }

        /// The customer declines the pause: the offer follows if not yet shown, else the confirmation.
        public mutating func declinePause() throws(NavigationError) {
            try requireRetention(.pause)
            advanceRetention()
        }

        /// The customer confirms the cancellation (at period end by default).
        public mutating func confirmCancel(immediately: Bool = false) throws(NavigationError) {
            guard page == .cancelConfirmation else {
                if case .finished(let outcome) = page { throw .alreadyFinished(outcome) }
                throw .notConfirmingCancel
            }
            cancelImmediately = immediately
            page = .finished(.cancelled)
        }

        // MARK: Result

        /// The response to submit. `outcome` overrides the navigator's (for example `dismissed`
        /// when the agent leaves mid-way); unfinished flows report `dismissed`.
        public func response(outcome override: Outcome? = nil) -> Response {
            Response(
                productId: productId, userId: userId, outcome: override ?? outcome ?? .dismissed,
                answers: recordedAnswers, offerShown: offerShown, offerAccepted: offerAccepted,
                pauseShown: pauseShown, pauseAccepted: pauseAccepted,
                pauseDurationDays: pauseAccepted ? pauseDurationDays : nil, lastStepSeen: lastStepSeen,
                variantId: config.variantId
            )
        }

        // MARK: Private

        private mutating func show(question index: Int) {
            if path.isEmpty { path = [index] }
            page = .question(index: index)
            if let asked = unavailableTriggerQuestion, index <= asked {
                unavailableTrigger = nil
                unavailableTriggerQuestion = nil
            }
            furthestQuestion = max(furthestQuestion, index)
            selection = answers[index].flatMap { answer in
                if let id = answer.selectedOptionId { return .option(id: id) }
                return answer.freeText.map(Selection.freeText)
            }
        }

        private func isOffered(_ step: RetentionStep) -> Bool {
            switch step {
            case .offer: offersSaveOffer
            case .pause: offersPause
            }
        }

        private mutating func enterRetention(trigger: RetentionStep?) {
            let offer = offersSaveOffer
            let pause = offersPause
            var steps: [RetentionStep] = []
            if trigger == .pause, pause {
                steps = [.pause] + (offer ? [.offer] : [])
            } else {
                steps = (offer ? [.offer] : []) + (pause ? [.pause] : [])
            }
            retentionSteps = steps
            retentionPosition = 0
            retentionSeen = true
            selection = nil
            showRetentionStep()
        }

        private mutating func showRetentionStep() {
            let step = retentionSteps[retentionPosition]
            page = .retention(step)
            switch step {
            case .offer: offerShown = true
            case .pause: pauseShown = true
            }
        }

        private mutating func advanceRetention() {
            if retentionPosition + 1 < retentionSteps.count {
                retentionPosition += 1
                showRetentionStep()
            } else {
                page = .cancelConfirmation
            }
        }

        private mutating func recordPause(days: Int) {
            pauseAccepted = true
            pauseDurationDays = days
            page = .finished(.paused)
        }

        private func requireQuestion() throws(NavigationError) -> Question {
            try requireUnfinished()
            guard let question = currentQuestion else { throw .notOnQuestion }
            return question
        }

        private func requireRetention(_ step: RetentionStep) throws(NavigationError) {
            try requireUnfinished()
            guard page == .retention(step) else { throw .notShowing(step) }
        }

        private func requireUnfinished() throws(NavigationError) {
            if case .finished(let outcome) = page { throw .alreadyFinished(outcome) }
        }
    }
}
