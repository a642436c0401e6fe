import Foundation

/// The namespace of the headless cancel flow, as the seed names it (`CancelFlow.Config`,
/// `CancelFlow.Response`, `CancelFlow.Answer`).
public enum CancelFlow {}

extension CancelFlow {
    /// The backend-driven questionnaire with its save offer and pause options. A disabled flow
    /// still sends `questions: []`.
    public struct Config: Codable, Hashable, Sendable {
        public var enabled: Bool
        public var questions: [Question]
        public var offer: Offer?
        public var pause: PauseConfig?
        public var variantId: Int?

        public init(
            enabled: Bool, questions: [Question], offer: Offer? = nil, pause: PauseConfig? = nil, variantId: Int? = nil
        ) {
            self.enabled = enabled
            self.questions = questions
            self.offer = offer
            self.pause = pause
            self.variantId = variantId
        }

        /// Questions in display `order` (ties keep config order), each with its options in order.
        public var orderedQuestions: [Question] {
            questions.enumerated()
                .sorted { ($0.element.order, $0.offset) < ($1.element.order, $1.offset) }
                .map { $0.element.withOrderedOptions() }
        }

        /// True when the flow ends on a retention page (an enabled offer or pause).
        public var hasRetentionPage: Bool { offer?.enabled == true || pause?.enabled == true }

        enum CodingKeys: String, CodingKey {
            case enabled, questions, offer, pause
            case variantId = "variant_id"
        }
    }

    /// How a question is answered.
    public enum QuestionType: WireEnum {
        case singleSelect, freeText
        case unknown(String)

        public static let knownCases: [QuestionType] = [.singleSelect, .freeText]
        public var wireValue: String {
            switch self {
            case .singleSelect: "single_select"
            case .freeText: "free_text"
            case .unknown(let raw): raw
            }
        }
        public init(unknown wireValue: String) { self = .unknown(wireValue) }
    }

    /// One page of the questionnaire.
    public struct Question: Codable, Hashable, Sendable, Identifiable {
        public var id: Int
        public var order: Int
        public var questionText: String
        public var questionType: QuestionType
        public var isRequired: Bool
        public var options: [Option]

        public init(
            id: Int, order: Int, questionText: String, questionType: QuestionType, isRequired: Bool, options: [Option] = []
        ) {
            self.id = id
            self.order = order
            self.questionText = questionText
            self.questionType = questionType
            self.isRequired = isRequired
            self.options = options
        }

        func withOrderedOptions() -> Question {
            var copy = self
            copy.options = options.enumerated()
                .sorted { ($0.element.order, $0.offset) < ($1.element.order, $1.offset) }
                .map(\.element)
            return copy
        }

        enum CodingKeys: String, CodingKey {
            case id, order
            case questionText = "question_text"
            case questionType = "question_type"
            case isRequired = "is_required"
            case options
        }
    }

    /// An answer option of a single-select question. At most one trigger per option.
    public struct Option: Codable, Hashable, Sendable, Identifiable {
        public var id: Int
        public var order: Int
        public var label: String
        public var triggersOffer: Bool
        public var triggersPause: Bool

        public init(id: Int, order: Int, label: String, triggersOffer: Bool = false, triggersPause: Bool = false) {
            self.id = id
            self.order = order
            self.label = label
            self.triggersOffer = triggersOffer
            self.triggersPause = triggersPause
        }

        enum CodingKeys: String, CodingKey {
            case id, order, label
            case triggersOffer = "triggers_offer"
            case triggersPause = "triggers_pause"
        }
    }
}
