extension CancelFlow {
    /// How long a pause may last: at least a day, at most what the server allows (`max_pause_days`).
    public enum PauseLength {
        public static let minimumDays = 1

        /// Why `days` is not a pause length (nil: it is one).
        public static func problem(_ days: Int, maximumDays: Int = .max) -> String? {
            guard days < minimumDays || days > maximumDays else { return nil }
            return maximumDays == .max
                ? "a pause must last at least \(minimumDays) day, got \(days)"
                : "pause_duration_days must be between \(minimumDays) and \(maximumDays), got \(days)"
        }
    }

    /// Why an answer does not fit the config's questions.
    public enum AnswerProblem: Hashable, Sendable, CustomStringConvertible {
        case unknownQuestion(Int)
        case unknownOption(questionId: Int, optionId: Int)

        public var description: String {
            switch self {
            case .unknownQuestion(let id): "there is no question \(id)"
            case .unknownOption(let question, let option): "question \(question) has no option \(option)"
            }
        }

        /// The error code the API answers with.
        public var code: String {
            switch self {
            case .unknownQuestion: "unknown_question"
            case .unknownOption: "unknown_option"
            }
        }
    }
}

extension CancelFlow.Config {
    /// Whether an answer names a question of this config and, when it chose one, an option of it.
    public func problem(with answer: CancelFlow.Answer) -> CancelFlow.AnswerProblem? {
        guard let question = questions.first(where: { $0.id == answer.questionId }) else { return .unknownQuestion(answer.questionId) }
        if let option = answer.selectedOptionId, !question.options.contains(where: { $0.id == option }) {
            return .unknownOption(questionId: question.id, optionId: option)
        }
        return nil
    }
}
