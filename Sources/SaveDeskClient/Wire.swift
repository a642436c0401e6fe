import RetentionDomain
import SaveDeskAPI

/// The contract's own types (generated from `openapi.yaml`) for the values the client hands on
/// unchanged: customers, timelines, analytics, checkouts, simulators. Values with rules attached
/// (cancel-flow config, entitlements, the switch-and-save decision) are converted to
/// RetentionDomain types instead.
public enum Wire {
    public typealias CustomerPage = Components.Schemas.CustomerPage
    public typealias CustomerSummary = Components.Schemas.CustomerSummary
    /// A demo walk-through (`story`), any other `customer`, or `generated` demo history.
    public typealias CustomerKind = Components.Schemas.CustomerSummary.KindPayload
    public typealias CustomerDetail = Components.Schemas.CustomerDetail
    public typealias CustomerProfile = Components.Schemas.CustomerProfile
    public typealias Subscription = Components.Schemas.Subscription
    public typealias DeskEntitlement = Components.Schemas.DeskEntitlement
    public typealias Lifecycle = Components.Schemas.Lifecycle
    public typealias AuditEvent = Components.Schemas.AuditEvent
    public typealias DeskEvent = Components.Schemas.DeskEvent
    public typealias DeskPresence = Components.Schemas.DeskPresence
    public typealias DeskActivity = Components.Schemas.DeskActivity
    public typealias CancelFlowAnalytics = Components.Schemas.CancelFlowAnalytics
    public typealias OutcomeCounts = Components.Schemas.OutcomeCounts
    public typealias SwitchAndSaveAnalytics = Components.Schemas.SwitchAndSaveAnalytics
    public typealias RetentionMessageAnalytics = Components.Schemas.RetentionMessageAnalytics
    public typealias CancelPageShown = Components.Schemas.CancelPageShown
    public typealias RetentionMessageFigures = Components.Schemas.RetentionMessageFigures
    public typealias FunnelCounts = Components.Schemas.FunnelCounts
    public typealias ClockAdvance = Components.Schemas.ClockAdvanceResponse
    public typealias WinBack = Components.Schemas.WinBackResponse
    public typealias CustomerRetention = Components.Schemas.CustomerRetention
    public typealias AppStoreOffer = Components.Schemas.AppStoreOffer
    public typealias AppStoreCancellation = Components.Schemas.AppStoreCancellation
    public typealias RetentionOfferCode = Components.Schemas.RetentionOfferCode
    public typealias Checkout = Components.Schemas.CheckoutResponse
    public typealias CheckoutTransaction = Components.Schemas.CheckoutTransaction
    public typealias CheckoutOutcome = Components.Schemas.SimulateCheckoutRequest.OutcomePayload
    public typealias AppStoreEvent = Components.Schemas.SimulateAppStoreRequest.EventPayload
    public typealias SimulatedStoreKitTransaction = Components.Schemas.SimulatedStoreKitTransaction
    public typealias StoreKitSync = Components.Schemas.StoreKitTransactionResponse
    public typealias StoreKitSubscriptionStatus = Components.Schemas.StoreKitSubscriptionStatus
    public typealias UpgradeOffer = Components.Schemas.UpgradeOffer
    public typealias UpgradeResult = Components.Schemas.UpgradeResult
    public typealias UpgradeAnswer = Components.Schemas.UpgradeResponseRequest.OutcomePayload
}

extension Components.Schemas.DeskEntitlement {
    /// The entitlement as a RetentionDomain value (nil when it does not convert).
    public var domain: RetentionDomain.Entitlement? { try? WireConversion.convert(entitlement) }
}

extension Components.Schemas.CustomerDetail {
    /// The entitlements as RetentionDomain values (for the rules that take them).
    public var domainEntitlements: [RetentionDomain.Entitlement] {
        entitlements.compactMap(\.domain)
    }
}
