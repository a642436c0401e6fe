import Foundation
import RetentionDomain
import SaveDeskAPI

/// The server's switch-and-save decision for one user (`GET user-offer`), in domain terms.
public struct SwitchAndSaveDecision: Sendable, Equatable {
    public var userId: String
    /// The `MigrationOffer.State` the decision resolves to (never a locked state's memory: the
    /// manager keeps that).
    public var state: MigrationOffer.State
    /// Present from `eligible` on.
    public var offerData: MigrationOffer.OfferData?
    /// The copy of every step, present with `offerData`.
    public var display: MigrationOffer.DisplayCopy?
    /// Why the offer is not shown, in rule order.
    public var reasons: [IneligibleReason]
    /// Whether Apple still renews (the customer must cancel Apple billing themselves).
    public var requiresAppleCancel: Bool
    public var appleSubscription: AppStore.SubscriptionSummary?
    public var dismissal: SwitchAndSaveEligibility.Dismissal?
    public var isSandbox: Bool
    public var serverTime: Date

    /// The decision as RetentionDomain's evaluator states it, for the rules that take it.
    public var evaluation: SwitchAndSaveEligibility.Decision {
        switch state {
        case .eligible, .presented:
            if let offerData { return .offer(offerData) }
        case .accepted, .completed:
            if let offerData { return .midSwitch(state, offerData) }
        case .loading, .ineligible, .dismissed:
            break
        }
        return .notOffered(reasons)
    }

    /// A decision stated directly (view-model tests on fakes; the client builds it from the wire).
    public init(
        userId: String, state: MigrationOffer.State, offerData: MigrationOffer.OfferData? = nil,
        display: MigrationOffer.DisplayCopy? = nil, reasons: [IneligibleReason] = [], requiresAppleCancel: Bool = false,
        appleSubscription: AppStore.SubscriptionSummary? = nil, dismissal: SwitchAndSaveEligibility.Dismissal? = nil,
        isSandbox: Bool = true, serverTime: Date
    ) {
        self.userId = userId
        self.state = state
        self.offerData = offerData
        self.display = display
        self.reasons = reasons
        self.requiresAppleCancel = requiresAppleCancel
        self.appleSubscription = appleSubscription
        self.dismissal = dismissal
        self.isSandbox = isSandbox
        self.serverTime = serverTime
    }

    init(_ wire: Components.Schemas.UserOfferResponse) throws {
        userId = wire.userId
        state = MigrationOffer.State(rawValue: wire.state) ?? .ineligible
        reasons = try WireConversion.convert(wire.ineligibleReasons)
        dismissal = try wire.dismissal.map { try WireConversion.convert($0) }
        isSandbox = wire.isSandbox
        serverTime = wire.serverTime
        requiresAppleCancel = wire.offer.requiresAppleCancel
        appleSubscription = try wire.offer.appleSubscription.map { try WireConversion.convert($0) }
        display = try wire.offer.display.map { try WireConversion.convert($0) }
        let offer = wire.offer, productId = offer.checkoutProductId
        if state.carriesOfferData, !productId.isEmpty, let display {
            offerData = MigrationOffer.OfferData(
                prompt: .init(productId: productId, discountPercent: offer.savingsPercent, title: display.title,
                              message: display.body, ctaText: display.ctaText),
                freeTrialDays: offer.freeTrialDays, activeStoreKitProductId: wire.subscription.productId ?? ""
            )
        } else {
            offerData = nil
        }
    }
}
