import Foundation

/// The switch-and-save offer: moving an App Store subscriber to discounted web billing.
/// Names follow the seed's `ZSMigrationManager` (`MigrationOffer.State`, `OfferData`, `Prompt`).
public enum MigrationOffer {
    /// Where a user is in the switch-and-save journey.
    public enum State: String, Codable, Hashable, Sendable, CaseIterable {
        case loading, ineligible, eligible, presented, accepted, completed, dismissed

        /// Mid-flow states are locked: background re-evaluation never moves them.
        public var isLocked: Bool {
            switch self {
            case .presented, .accepted, .completed, .dismissed: true
            case .loading, .ineligible, .eligible: false
            }
        }

        /// Whether `offerData` is available in this state (from `eligible` on, except `dismissed`).
        public var carriesOfferData: Bool {
            switch self {
            case .eligible, .presented, .accepted, .completed: true
            case .loading, .ineligible, .dismissed: false
            }
        }
    }

    /// The campaign's copy for one web product, `{{discount}}` already filled in.
    public struct Prompt: Codable, Hashable, Sendable {
        /// The web product offered for switch and save.
        public var productId: String
        public var discountPercent: Int
        public var title: String
        public var message: String
        public var ctaText: String

        public init(productId: String, discountPercent: Int, title: String, message: String, ctaText: String) {
            self.productId = productId
            self.discountPercent = discountPercent
            self.title = title
            self.message = message
            self.ctaText = ctaText
        }

        enum CodingKeys: String, CodingKey {
            case productId = "product_id"
            case discountPercent = "discount_percent"
            case title, message
            case ctaText = "cta_text"
        }
    }

    /// The copy of every step of the offer (`display` in a `user-offer` response): the campaign's
    /// prompt for the offer itself, and the seed's words for the later steps.
    public struct DisplayCopy: Codable, Hashable, Sendable {
        public var title: String
        public var body: String
        public var ctaText: String
        public var dismissText: String
        public var acceptedTitle: String
        public var acceptedBody: String
        public var completedTitle: String
        public var completedBody: String
        public var appleCancelInstructions: String

        /// The seed's words for the step after the checkout, and after Apple's renewal is off.
        public static let defaultAcceptedTitle = "Almost done!"
        public static let defaultAcceptedBody = "Cancel your Apple subscription to start saving."
        public static let defaultCompletedTitle = "You're all set!"

        public init(prompt: Prompt, productName: String) {
            title = prompt.title
            body = prompt.message
            ctaText = prompt.ctaText
            dismissText = "Not now"
            acceptedTitle = Self.defaultAcceptedTitle
            acceptedBody = Self.defaultAcceptedBody
            completedTitle = Self.defaultCompletedTitle
            completedBody = "Saving \(prompt.discountPercent)% forever."
            appleCancelInstructions = AppStore.cancellationSteps(productName: productName).joined(separator: "\n")
        }

        /// The steps to read out for turning off Apple's renewal, one per line of the instructions.
        public var appleCancelSteps: [String] { appleCancelInstructions.split(separator: "\n").map(String.init) }

        enum CodingKeys: String, CodingKey {
            case title, body
            case ctaText = "cta_text"
            case dismissText = "dismiss_text"
            case acceptedTitle = "accepted_title"
            case acceptedBody = "accepted_body"
            case completedTitle = "completed_title"
            case completedBody = "completed_body"
            case appleCancelInstructions = "apple_cancel_instructions"
        }
    }

    /// Everything needed to render the offer, available from `eligible` on.
    public struct OfferData: Codable, Hashable, Sendable {
        public var prompt: Prompt
        /// Days left on the App Store subscription, bridged as a migration trial on the web.
        public var freeTrialDays: Int
        public var activeStoreKitProductId: String

        public init(prompt: Prompt, freeTrialDays: Int, activeStoreKitProductId: String) {
            self.prompt = prompt
            self.freeTrialDays = freeTrialDays
            self.activeStoreKitProductId = activeStoreKitProductId
        }

        enum CodingKeys: String, CodingKey {
            case prompt
            case freeTrialDays = "free_trial_days"
            case activeStoreKitProductId = "active_store_kit_product_id"
        }
    }
}
