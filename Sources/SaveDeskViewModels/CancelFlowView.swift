import Foundation
import RetentionDomain

/// What the cancel flow's screen shows, as plain values: no model, no client behind them. The
/// session builds one (`CancelFlowSession.view(now:)`); the screen draws it; a test can draw one
/// made by hand.
public struct CancelFlowView: Hashable, Sendable {
    public enum Content: Hashable, Sendable {
        case loading
        /// The flow could not be loaded.
        case unavailable(message: String)
        /// The customer's choice is being applied.
        case applying(label: String)
        /// The choice did not go through; it is kept for a retry.
        case failed(message: String)
        case question(Question)
        /// The save offer when it is a coupon or an App Store offer code.
        case offer(Offer)
        case switchOffer(SwitchOffer)
        case pause(Pause)
        /// A web cancellation: at the end of the period, or now.
        case confirmation(Confirmation)
        /// An App Store cancellation: the steps the agent reads out.
        case appStoreSteps(AppStoreSteps)
        case ending(Ending)
    }

    public struct Progress: Hashable, Sendable {
        public var step: Int
        public var total: Int
        public init(step: Int, total: Int) { (self.step, self.total) = (step, total) }
    }

    public struct Choice: Hashable, Sendable {
        public var id: Int
        public var label: String
        public init(id: Int, label: String) { (self.id, self.label) = (id, label) }
    }

    public struct Question: Hashable, Sendable {
        public var text: String
        public var isRequired: Bool
        /// The customer's own words rather than a choice.
        public var isFreeText: Bool
        public var options: [Choice]
        public var chosenOptionId: Int?
        public var freeText: String?

        public init(text: String, isRequired: Bool, isFreeText: Bool, options: [Choice], chosenOptionId: Int? = nil, freeText: String? = nil) {
            self.text = text
            self.isRequired = isRequired
            self.isFreeText = isFreeText
            self.options = options
            self.chosenOptionId = chosenOptionId
            self.freeText = freeText
        }

        /// The position of the chosen option, if any.
        public var chosenIndex: Int? { options.firstIndex { $0.id == chosenOptionId } }
    }

    public struct Offer: Hashable, Sendable {
        public var title: String
        public var body: String
        public var ctaText: String
        /// A coupon's prices as read out ("$9.99/month"), now and with the offer; nil for an offer
        /// code, which has none.
        public var prices: Prices?

        public struct Prices: Hashable, Sendable {
            public var now: String?
            public var withOffer: String?
            public init(now: String?, withOffer: String?) { (self.now, self.withOffer) = (now, withOffer) }
        }

        public init(title: String, body: String, ctaText: String, prices: Prices?) {
            self.title = title
            self.body = body
            self.ctaText = ctaText
            self.prices = prices
        }
    }

    public struct SwitchOffer: Hashable, Sendable {
        public var terms: CancelFlowSwitchTerms
        /// The checkout the customer is paying, while the flow waits for it.
        public var checkout: Checkout?
        /// Why the checkout could not be made or confirmed.
        public var message: String?

        public struct Checkout: Hashable, Sendable {
            public var url: String
            public var transactionId: String
            public init(url: String, transactionId: String) { (self.url, self.transactionId) = (url, transactionId) }
        }

        public init(terms: CancelFlowSwitchTerms, checkout: Checkout? = nil, message: String? = nil) {
            self.terms = terms
            self.checkout = checkout
            self.message = message
        }

        public var isAwaitingPayment: Bool { checkout != nil }
    }

    public struct Pause: Hashable, Sendable {
        public var title: String
        public var body: String
        public var ctaText: String
        public var options: [Option]

        public struct Option: Hashable, Sendable {
            public var id: Int
            public var label: String
            public var resumesOn: Date?
            public init(id: Int, label: String, resumesOn: Date?) { (self.id, self.label, self.resumesOn) = (id, label, resumesOn) }
        }

        public init(title: String, body: String, ctaText: String, options: [Option]) {
            self.title = title
            self.body = body
            self.ctaText = ctaText
            self.options = options
        }
    }

    public struct Confirmation: Hashable, Sendable {
        public var periodEnd: Date?
        /// Billed by the App Store too: what happens to that half.
        public var appleNote: String?
        public init(periodEnd: Date?, appleNote: String?) { (self.periodEnd, self.appleNote) = (periodEnd, appleNote) }
    }

    public struct AppStoreSteps: Hashable, Sendable {
        public var productName: String
        public var steps: [String]
        public var periodEnd: Date?
        public init(productName: String, steps: [String], periodEnd: Date?) {
            (self.productName, self.steps, self.periodEnd) = (productName, steps, periodEnd)
        }
    }

    /// How the flow ended, and Apple's side of it.
    public struct Ending: Hashable, Sendable {
        public var outcome: CancelFlowSession.Outcome
        public var appleSide: AppleWait.Side?
        /// The App Store cancellation as read out ("Premium Monthly: cancellation read out on …").
        public var appleCancellation: String?
        public var appleMessage: String?
        /// Billed by both the web and the App Store: what happens to the App Store half.
        public var appleNote: String?
        public var isRecorded: Bool

        public init(
            outcome: CancelFlowSession.Outcome, appleSide: AppleWait.Side? = nil, appleCancellation: String? = nil,
            appleMessage: String? = nil, appleNote: String? = nil, isRecorded: Bool = true
        ) {
            self.outcome = outcome
            self.appleSide = appleSide
            self.appleCancellation = appleCancellation
            self.appleMessage = appleMessage
            self.appleNote = appleNote
            self.isRecorded = isRecorded
        }
    }

    public var content: Content
    /// The navigator's page (the screen keeps its focus and typing with it).
    public var page: CancelFlowPage?
    /// Where the flow is (pages of the flow only).
    public var progress: Progress?
    /// Why a part the customer's answer asked for is not offered ("Apple has no pause…").
    public var unavailableNote: String?
    public var canGoBack: Bool

    public init(content: Content, page: CancelFlowPage? = nil, progress: Progress? = nil, unavailableNote: String? = nil, canGoBack: Bool = false) {
        self.content = content
        self.page = page
        self.progress = progress
        self.unavailableNote = unavailableNote
        self.canGoBack = canGoBack
    }
}
