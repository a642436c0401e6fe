import Foundation

extension CancelFlow {
    /// What the customer ultimately did.
    public enum Outcome: WireEnum {
        case cancelled, retained, paused, dismissed
        case unknown(String)

        public static let knownCases: [Outcome] = [.cancelled, .retained, .paused, .dismissed]
        public var wireValue: String {
            switch self {
            case .cancelled: "cancelled"
            case .retained: "retained"
            case .paused: "paused"
            case .dismissed: "dismissed"
            case .unknown(let raw): raw
            }
        }
        public init(unknown wireValue: String) { self = .unknown(wireValue) }
    }

    /// One recorded answer: a selected option or free text (trimmed; empty → nil).
    public struct Answer: Codable, Hashable, Sendable {
        public var questionId: Int
        public var selectedOptionId: Int?
        public var freeText: String?

        public init(questionId: Int, selectedOptionId: Int? = nil, freeText: String? = nil) {
            self.questionId = questionId
            self.selectedOptionId = selectedOptionId
            self.freeText = freeText
        }

        enum CodingKeys: String, CodingKey {
            case questionId = "question_id"
            case selectedOptionId = "selected_option_id"
            case freeText = "free_text"
        }
    }

    /// The analytics record submitted at the end of every cancel flow, whatever happened.
    public struct Response: Codable, Hashable, Sendable {
        public var productId: String
        public var userId: String
        public var outcome: Outcome
        public var answers: [Answer]
        public var offerShown: Bool
        public var offerAccepted: Bool
        public var pauseShown: Bool
        public var pauseAccepted: Bool
        public var pauseDurationDays: Int?
        public var lastStepSeen: Int
        public var variantId: Int?

        public init(
            productId: String, userId: String, outcome: Outcome, answers: [Answer], offerShown: Bool = false,
            offerAccepted: Bool = false, pauseShown: Bool = false, pauseAccepted: Bool = false,
            pauseDurationDays: Int? = nil, lastStepSeen: Int = 0, variantId: Int? = nil
        ) {
            self.productId = productId
            self.userId = userId
            self.outcome = outcome
            self.answers = answers
            self.offerShown = offerShown
            self.offerAccepted = offerAccepted
            self.pauseShown = pauseShown
            self.pauseAccepted = pauseAccepted
            self.pauseDurationDays = pauseDurationDays
            self.lastStepSeen = lastStepSeen
            self.variantId = variantId
        }

        enum CodingKeys: String, CodingKey {
            case productId = "product_id"
            case userId = "user_id"
            case outcome, answers
            case offerShown = "offer_shown"
            case offerAccepted = "offer_accepted"
            case pauseShown = "pause_shown"
            case pauseAccepted = "pause_accepted"
            case pauseDurationDays = "pause_duration_days"
            case lastStepSeen = "last_step_seen"
            case variantId = "variant_id"
        }
    }
}

/// The result of `acceptSaveOffer`: a message such as "40% off for 3 months".
public struct SaveOfferResult: Codable, Hashable, Sendable {
    public var message: String
    public var discountPercent: Int?
    public var durationMonths: Int?

    public init(message: String, discountPercent: Int? = nil, durationMonths: Int? = nil) {
        self.message = message
        self.discountPercent = discountPercent
        self.durationMonths = durationMonths
    }

    enum CodingKeys: String, CodingKey {
        case message
        case discountPercent = "discount_percent"
        case durationMonths = "duration_months"
    }
}
