import Foundation

extension CancelFlow {
    /// What the retention page may offer one customer, decided by who bills them. The config says
    /// whether the flow carries a save offer and a pause; this rule says which save offer, and
    /// whether each can be applied at all:
    ///
    /// - web billing: the config's save offer (a coupon) and pause;
    /// - App Store billing, eligible for switch and save: switch and save is the save offer;
    /// - App Store billing, not eligible: an App Store offer code from the pool when one is
    ///   configured and left, else no save offer;
    /// - App Store billing never gets a pause (Apple has none), and its cancellation is the
    ///   customer's own step in Settings: the flow ends with the steps to read out;
    /// - both (mid-switch): the flow acts on the web subscription, and says what remains on Apple's side.
    public struct RetentionPlan: Hashable, Sendable {
        /// Who bills the subscription the flow is about.
        public enum Billing: String, Hashable, Sendable {
            case web, appStore = "app_store", both, none
        }

        /// The save offer of the retention page.
        public enum SaveOffer: Hashable, Sendable {
            /// The config's save offer, applied to the web subscription.
            case coupon(Offer)
            /// Move to discounted web billing; the App Store days left are bridged.
            case switchAndSave(SwitchTerms)
            /// One App Store offer code for a subscriber who stays.
            case offerCode(OfferCodePool)

            /// A short name for reports: coupon, switch_and_save or offer_code.
            public var kind: String {
                switch self {
                case .coupon: "coupon"
                case .switchAndSave: "switch_and_save"
                case .offerCode: "offer_code"
                }
            }
        }

        /// Switch and save as the save offer, with what the customer pays before and after.
        public struct SwitchTerms: Hashable, Sendable {
            /// The web product the customer moves to.
            public var productId: String
            public var productName: String
            public var discountPercent: Int
            /// What the App Store charges now, per `interval`.
            public var priceNow: Price?
            /// What the web charges with the discount, per `interval`.
            public var priceWithDiscount: Price?
            public var interval: BillingInterval?
            /// App Store days left, bridged by a migration trial on the web.
            public var bridgedDays: Int
            public var title: String
            public var message: String
            public var ctaText: String

            public init(
                productId: String, productName: String, discountPercent: Int, priceNow: Price?, priceWithDiscount: Price?,
                interval: BillingInterval?, bridgedDays: Int, title: String, message: String, ctaText: String
            ) {
                self.productId = productId
                self.productName = productName
                self.discountPercent = discountPercent
                self.priceNow = priceNow
                self.priceWithDiscount = priceWithDiscount
                self.interval = interval
                self.bridgedDays = bridgedDays
                self.title = title
                self.message = message
                self.ctaText = ctaText
            }

            /// "$9.99/month on the App Store → $6.39/month on the web".
            public var priceLine: String? {
                guard let priceNow, let priceWithDiscount else { return nil }
                return Money.format(priceNow, per: interval) + " on the App Store \u{2192} "
                    + Money.format(priceWithDiscount, per: interval) + " on the web"
            }

            /// "The 18 days left on the App Store plan are bridged: no double charge."
            public var bridgeLine: String {
                "The \(CalendarDays.phrase(bridgedDays)) left on the App Store plan \(bridgedDays == 1 ? "is" : "are") bridged: no double charge."
            }
        }

        /// The App Store offer codes kept for subscribers who stay, with their copy.
        public struct OfferCodePool: Hashable, Sendable {
            public var title: String
            public var body: String
            public var ctaText: String
            /// Whether a code can be handed out (one is left, or the customer already holds one).
            public var hasCode: Bool

            public init(title: String, body: String, ctaText: String, hasCode: Bool) {
                self.title = title
                self.body = body
                self.ctaText = ctaText
                self.hasCode = hasCode
            }
        }

        /// How the customer's cancellation is done.
        public enum Cancellation: Hashable, Sendable {
            /// SaveDesk cancels the web subscription (at period end or now).
            case web
            /// Only the customer can, in Settings: the agent reads out these steps.
            case appStore(steps: [String])
            /// There is no live subscription to cancel.
            case none
        }

        public var billing: Billing
        /// The subscription the flow acts on (the web one when there are both).
        public var productId: String
        public var saveOffer: SaveOffer?
        /// Why the config's save offer is not offered here (nil when it is, or is switched off).
        public var offerNote: String?
        public var pauseAvailable: Bool
        /// Why the config's pause is not offered here (nil when it is, or is switched off).
        public var pauseNote: String?
        public var cancellation: Cancellation
        /// What remains on Apple's side when the flow acts on the web subscription.
        public var appleNote: String?

        /// The parts of the retention page the navigator may show.
        public var availability: Navigator.Availability { .init(offer: saveOffer != nil, pause: pauseAvailable) }

        /// Why a part the customer's answer asked for is not shown.
        public func note(for step: Navigator.RetentionStep) -> String? {
            switch step {
            case .offer: offerNote
            case .pause: pauseNote
            }
        }

        /// Everything the rule looks at. Nothing is read from a clock or a store.
        public struct Input: Sendable {
            /// The product of the flow.
            public var productId: String
            /// The customer's merged entitlements (web and App Store, each with its `source`).
            public var entitlements: [Entitlement]
            public var config: Config
            /// The switch-and-save decision for the customer (nil when it could not be evaluated).
            public var switchAndSave: SwitchAndSaveEligibility.Decision?
            public var catalog: [Product]
            /// What the App Store charges the customer now, when known (else the catalog's price).
            public var appStorePrice: Price?
            /// The offer-code pool for subscribers who stay, when one is configured.
            public var offerCodes: OfferCodePool?

            public init(
                productId: String, entitlements: [Entitlement], config: Config, switchAndSave: SwitchAndSaveEligibility.Decision?,
                catalog: [Product], appStorePrice: Price? = nil, offerCodes: OfferCodePool? = nil
            ) {
                self.productId = productId
                self.entitlements = entitlements
                self.config = config
                self.switchAndSave = switchAndSave
                self.catalog = catalog
                self.appStorePrice = appStorePrice
                self.offerCodes = offerCodes
            }
        }

        public static func plan(_ input: Input) -> RetentionPlan {
            let live = input.entitlements.filter { $0.status.isLive }
            let forProduct = live.filter { $0.productId == input.productId }
            let relevant = forProduct.isEmpty ? live : forProduct
            let web = relevant.first { $0.source == .webCheckout }
            let store = relevant.first { $0.source.isStore }
            let configOffer = input.config.offer.flatMap { $0.enabled ? $0 : nil }
            let configPause = input.config.pause?.enabled == true
            func name(_ productId: String) -> String { input.catalog.first { $0.id == productId }?.displayName ?? productId }

            switch (web, store) {
            case (let web?, let store):
                var appleNote: String?
                if let store {
                    appleNote = store.willRenew
                        ? "\(name(store.productId)) is still billed by the App Store: only the customer can turn it off, in Settings."
                        : "App Store billing for \(name(store.productId)) is off; it ends \(store.expiresAt.map { "on " + CalendarDays.display($0, in: .gmt) } ?? "at the period end") with no further charge."
                }
                return RetentionPlan(
                    billing: store == nil ? .web : .both, productId: web.productId, saveOffer: configOffer.map(SaveOffer.coupon),
                    offerNote: nil, pauseAvailable: configPause, pauseNote: nil, cancellation: .web, appleNote: appleNote
                )
            case (nil, let store?):
                let product = name(store.productId)
                var saveOffer: SaveOffer?
                var offerNote: String?
                if configOffer != nil {
                    if case .offer(let data)? = input.switchAndSave {
                        saveOffer = .switchAndSave(switchTerms(data, input: input))
                    } else if let pool = input.offerCodes, pool.hasCode {
                        saveOffer = .offerCode(pool)
                    } else {
                        let why = input.switchAndSave?.reasons.first?.message ?? "switch and save could not be evaluated"
                        let codes = input.offerCodes == nil ? "no App Store offer codes are configured" : "the App Store offer codes are all handed out"
                        offerNote = "No save offer fits \(product), billed by the App Store: switch and save is not offered (\(why)), and \(codes)."
                    }
                }
                return RetentionPlan(
                    billing: .appStore, productId: store.productId, saveOffer: saveOffer, offerNote: offerNote,
                    pauseAvailable: false,
                    pauseNote: configPause ? "Apple has no pause: \(product) is billed by the App Store, so it cannot be paused." : nil,
                    cancellation: .appStore(steps: AppStore.cancellationSteps(productName: product)), appleNote: nil
                )
            case (nil, nil):
                return RetentionPlan(
                    billing: .none, productId: input.productId, saveOffer: nil,
                    offerNote: configOffer == nil ? nil : "there is no live subscription to keep", pauseAvailable: false,
                    pauseNote: configPause ? "there is no live subscription to pause" : nil, cancellation: .none, appleNote: nil
                )
            }
        }

        static func switchTerms(_ data: MigrationOffer.OfferData, input: Input) -> SwitchTerms {
            SwitchTerms(offer: data, catalog: input.catalog, appStorePrice: input.appStorePrice)
        }
    }
}

extension CancelFlow.RetentionPlan.SwitchTerms {
    /// The terms of a switch-and-save offer, priced from the catalog: the App Store price now (the
    /// customer's own when known) and the web price with the campaign's discount.
    public init(offer data: MigrationOffer.OfferData, catalog: [Product], appStorePrice: Price? = nil) {
        let web = catalog.first { $0.id == data.prompt.productId }
        let apple = catalog.first { $0.id == data.activeStoreKitProductId } ?? web
        let discounted = web?.webPrice.map {
            Price(amountMicros: Money.discounted(micros: $0.amountMicros, percentOff: data.prompt.discountPercent, currencyCode: $0.currencyCode),
                  currencyCode: $0.currencyCode)
        }
        self.init(
            productId: data.prompt.productId, productName: web?.displayName ?? data.prompt.productId,
            discountPercent: data.prompt.discountPercent, priceNow: appStorePrice ?? apple?.storekitPrice,
            priceWithDiscount: discounted, interval: web?.billingInterval, bridgedDays: data.freeTrialDays,
            title: data.prompt.title, message: data.prompt.message, ctaText: data.prompt.ctaText
        )
    }
}
