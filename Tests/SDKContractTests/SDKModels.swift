import Foundation

// Mirror models of what the seed's iOS SDK decodes, written from the shapes its source declares
// (docs/wire-protocol.md says what matters of them) and nothing else: required keys are non-optional,
// integers are Int (a string or 4.99 fails), booleans are Bool (0/1 fail), closed enums are Swift
// enums (any other string fails), lenient fields (`~`) are plain strings. Decoded with the SDK's
// settings: convertFromSnakeCase and ISO-8601 dates without fractions (`SDKDecoder`).
enum SDK {
    struct Price: Decodable { var amountMicros: Int; var currencyCode: String }

    enum ProductType: String, Decodable { case autoRenewableSubscription = "auto_renewable_subscription", nonRenewingSubscription = "non_renewing_subscription", consumable, nonConsumable = "non_consumable" }
    enum PromotionType: String, Decodable { case percentOff = "percent_off", fixedAmount = "fixed_amount", freeTrial = "free_trial" }
    struct Promotion: Decodable { var id: String; var displayName: String; var promotionalPrice: Price; var expiresAt: Date?; var type: PromotionType }

    struct Product: Decodable {
        var id: String
        var storekitProductId: String?
        var displayName: String
        var productDescription: String
        var type: ProductType
        var webPrice: Price?
        var storekitPrice: Price?
        var syncedToAsc: Bool?
        var promotion: Promotion?
        var billingInterval: String?
        var subscriptionGroupId: Int?
        var freeTrialDuration: String?
        var isTrialEligible: Bool?
        var checkoutRoute: String?
    }

    struct JurisdictionConfig: Decodable { var sheetType: String; var isEnabled: Bool }
    struct CheckoutFlowConfig: Decodable {
        var sheetType: String
        var isEnabled: Bool
        var jurisdictions: [String: JurisdictionConfig]?
        var appleMerchantId: String?
        var paymentMethods: [String]?
    }
    struct MigrationPromptOverride: Decodable { var discountPercent: Int; var title: String; var message: String; var ctaText: String? }
    struct MigrationPrompt: Decodable {
        var shouldShow: Bool
        var eligibleProductIds: [String]?
        var discountPercent: Int?
        var minSubscriptionDays: Int?
        var maxSubscriptionDays: Int?
        var freeTrialDays: Int?
        var title: String?
        var message: String?
        var ctaText: String?
        var rolloutPercent: Int?
        var perProductPrompts: [String: MigrationPromptOverride]?
    }
    struct OfferDisplay: Decodable {
        var offerTitle: String, offerMessage: String, offerCta: String, acceptedTitle: String, acceptedMessage: String
        var acceptedCta: String, completedTitle: String, completedMessage: String
    }
    enum FlowType: String, Decodable { case migration, upgrade }
    enum UpgradeType: String, Decodable { case storekitToWeb = "storekit_to_web", webToWeb = "web_to_web" }
    enum TipPresentation: String, Decodable { case inline, sheet }
    struct TipProductPrompt: Decodable { var productId: String; var savingsPercent: Int; var display: OfferDisplay }
    struct OfferData: Decodable {
        var flowType: FlowType
        var productId: String
        var eligibleProductIds: [String]?
        var savingsPercent: Int?
        var display: OfferDisplay
        var freeTrialDays: Int?
        var minSubscriptionDays: Int?
        var maxSubscriptionDays: Int?
        var rolloutPercent: Int?
        var upgradeType: UpgradeType?
        var fromProductId: String?
        var toProductId: String?
        var variantId: Int?
        var perProductPrompts: [String: TipProductPrompt]?
        var checkoutPresentation: TipPresentation?
    }
    struct Config: Decodable { var checkout: CheckoutFlowConfig; var migration: MigrationPrompt?; var offer: OfferData? }
    struct ProductsResponse: Decodable { var products: [Product]; var config: Config? }

    // User offer (#2)
    struct UOSub: Decodable { var type: String; var productId: String? }
    enum ActionType: String, Decodable {
        case noAction = "no_action", migrateStorekitToWeb = "migrate_storekit_to_web", upgradeStorekitToWeb = "upgrade_storekit_to_web"
        case upgradeWebToWeb = "upgrade_web_to_web"
    }
    struct UODisplay: Decodable {
        var title: String, body: String, ctaText: String, dismissText: String, acceptedTitle: String, acceptedBody: String
        var completedTitle: String, completedBody: String, appleCancelInstructions: String
    }
    struct Proration: Decodable { var amountCents: Int; var currency: String; var nextBillingDate: Date? }
    struct AppleSub: Decodable { var isActive: Bool; var expiresAt: Date?; var statusCode: Int; var autoRenewEnabled: Bool }
    enum Presentation: String, Decodable { case webview, nativePay = "native_pay", safariVc = "safari_vc", safari }
    enum StoreSource: String, Decodable { case storeKit = "store_kit", playStore = "play_store" }
    struct UOOffer: Decodable {
        var actionType: ActionType
        var isEligible: Bool
        var checkoutProductId: String
        var fromProductId: String?
        var savingsPercent: Int
        var freeTrialDays: Int
        var minSubscriptionDays: Int
        var maxSubscriptionDays: Int?
        var display: UODisplay?
        var proration: Proration?
        var requiresAppleCancel: Bool
        var appleSubscription: AppleSub?
        var checkoutPresentation: Presentation?
        var experimentVariantId: Int?
        var source: StoreSource?
        var rolloutPercent: Int?
    }
    struct UserOfferResponse: Decodable {
        var userId: String; var appId: Int; var isSandbox: Bool; var subscription: UOSub; var offer: UOOffer; var serverTime: Date
    }

    // Entitlements and transactions (#3–#5)
    enum EntitlementSource: String, Decodable { case storeKit = "store_kit", webCheckout = "web_checkout" }
    struct Entitlement: Decodable {
        var id: String
        var productId: String
        var source: EntitlementSource?
        var isActive: Bool
        var status: String?
        var pausedAt: Date?
        var pauseResumesAt: Date?
        var expiresAt: Date?
        var willRenew: Bool?
        var isTrial: Bool?
        var trialEndsAt: Date?
        var cancelledAt: Date?
        var purchasedAt: Date
        var storekitOriginalTransactionId: String?
        var originalPurchaseDate: Date?
    }
    struct EntitlementsResponse: Decodable { var entitlements: [Entitlement] }
    struct CheckoutTransaction: Decodable {
        var id: String
        var productId: String
        var status: String?
        var source: EntitlementSource
        var purchasedAt: Date
        var expiresAt: Date?
        var productName: String?
        var amountCents: Int?
        var currency: String?
        var storekitStatus: Int?
    }
    struct TransactionHistory: Decodable { var transactions: [CheckoutTransaction] }

    // Checkout (#7–#11)
    struct CheckoutResponse: Decodable {
        var clientSecret: String?
        var transactionId: String
        var amount: Int
        var currency: String
        var productName: String
        var originalAmount: Int?
        var callbackUrl: String
        var publishableKey: String
        var checkoutUrl: String
        var stripeAccount: String?
        var merchantCountry: String?
        var isSubscription: Bool?
        var subscriptionInterval: String?
        var trialEnd: Int?
        var pendingAmount: Int?
        var deferredMode: Bool?
    }
    struct BatchCheckoutResult: Decodable {
        var productId: String
        var error: String?
        var transactionId: String?
        var amount: Int?
        var currency: String?
        var productName: String?
        var callbackUrl: String?
        var publishableKey: String?
        var checkoutUrl: String?
        var trialEnd: Int?
        var deferredMode: Bool?
    }
    struct BatchCheckoutResponse: Decodable { var results: [BatchCheckoutResult] }
    struct CheckoutConfig: Decodable {
        var amount: Int
        var currency: String
        var productName: String
        var isSubscription: Bool
        var hasTrial: Bool
        var trialEnd: Int?
        var originalAmountCents: Int
        var publishableKey: String
        var merchantCountry: String?
        var stripeAccount: String?
        var paymentMethodConfiguration: String?
        var subscriptionInterval: String?
    }
    struct FinalizeResponse: Decodable { var clientSecret: String }
    struct CheckoutSession: Decodable { var sessionId: String; var checkoutUrl: String; var transactionId: String? }

    // StoreKit (#12–#15)
    struct SyncResponse: Decodable {
        var status: String; var owned: Bool?; var originalTransactionId: String?; var conflict: Bool?; var claimAvailable: Bool?
        var existingOwnerHint: String?
    }
    struct ReconcileSkip: Decodable { var reason: String; var transactionId: String? }
    struct ReconcileResponse: Decodable { var status: String; var processed: Int; var eventsEmitted: Int; var skipped: [ReconcileSkip]? }
    struct ClaimResponse: Decodable {
        var status: String; var claimed: Bool?; var productId: String?; var originalTransactionId: String?; var message: String?
    }
    struct StoreKitStatusResponse: Decodable {
        var status: Int; var autoRenewStatus: Int; var expiresAt: Date?; var isActive: Bool?; var autoRenewEnabled: Bool?
    }

    // Cancel flow (#19–#22)
    enum QuestionType: String, Decodable { case singleSelect = "single_select", freeText = "free_text" }
    struct Option: Decodable { var id: Int; var order: Int; var label: String; var triggersOffer: Bool; var triggersPause: Bool }
    struct Question: Decodable {
        var id: Int; var order: Int; var questionText: String; var questionType: QuestionType; var isRequired: Bool; var options: [Option]
    }
    struct CFOffer: Decodable { var enabled: Bool; var title: String; var body: String; var ctaText: String; var type: String; var value: String }
    enum DurationType: String, Decodable { case days, fixedDate = "fixed_date" }
    struct PauseOption: Decodable {
        var id: Int; var order: Int; var label: String; var durationType: DurationType; var durationDays: Int?; var resumeDate: Date?
    }
    struct PauseConfig: Decodable { var enabled: Bool; var title: String; var body: String; var ctaText: String; var options: [PauseOption] }
    struct CancelFlowConfig: Decodable {
        var enabled: Bool; var questions: [Question]; var offer: CFOffer?; var pause: PauseConfig?; var variantId: Int?
    }
    struct AcceptOfferResponse: Decodable { var message: String; var discountPercent: Int?; var durationMonths: Int? }
    struct PauseResponse: Decodable { var resumesAt: Date? }

    // Upgrade (#25, #26)
    struct ProductInfo: Decodable {
        var referenceId: String; var name: String; var priceCents: Int; var currency: String; var billingLabel: String
        var monthlyEquivalentCents: Int?
    }
    struct UpgradeDisplay: Decodable {
        var title: String; var body: String; var ctaText: String; var dismissText: String; var storekitMigrationBody: String?
        var storekitCancelInstructions: String?
    }
    struct UpgradeOfferConfig: Decodable {
        var available: Bool
        var reason: String?
        var currentProduct: ProductInfo?
        var targetProduct: ProductInfo?
        var savingsPercent: Int?
        var upgradeType: UpgradeType?
        var proration: Proration?
        var display: UpgradeDisplay?
        var variantId: Int?
    }
    struct UpgradeExecuteResponse: Decodable {
        var success: Bool; var upgradeType: String?; var checkoutUrl: String?; var sessionId: String?; var transactionId: String?
        var cancelInstructions: String?
    }
}
