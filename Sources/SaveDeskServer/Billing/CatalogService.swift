import Foundation
import RetentionDomain
import SaveDeskAPI

/// The catalog the SDK loads at start (`GET /v1/iap/products/`): products with integer group ids,
/// the checkout's presentation, the legacy migration block, and the switch-and-save tip
/// (`config.offer`) the SDK's offer managers show. With a `user_id`, the tip is there only when the
/// server's own decision says the user qualifies; `demo` (test keys) shows it as if they did.
final class CatalogService: Sendable {
    typealias Schemas = Components.Schemas
    let store: Store
    let clock: DataClock
    let config: ServerConfig
    let switchAndSave: SwitchAndSaveService
    /// The catalog does not change while the server runs: converted once.
    let products: [Schemas.Product]

    enum Demo: String, Sendable { case migration, upgrade }

    init(store: Store, clock: DataClock, config: ServerConfig, switchAndSave: SwitchAndSaveService) throws {
        self.store = store
        self.clock = clock
        self.config = config
        self.switchAndSave = switchAndSave
        products = try config.products.map { try WireMapping.convert($0.product) }
    }

    func catalog(userId: String?, demo: Demo?, scope: RequestScope) async throws -> Schemas.ProductsResponse {
        if demo != nil, !scope.isSandbox {
            throw SaveDeskError.forbidden("demo mode is for test keys; a live app always sees the real offer", code: "test_mode_only")
        }
        let offer: Schemas.OfferData?
        switch demo {
        case .migration?:
            offer = config.campaign.map { tip($0, appStoreProductId: nil, freeTrialDays: nil, asIfQualified: true) }
        case .upgrade?:
            offer = upgradeTip()
        case nil:
            if let userId, !userId.isEmpty, let campaign = config.campaign {
                let now = clock.now(scope)
                let facts = try await store.transaction(key: "customer:" + userId) { data in
                    try await self.switchAndSave.facts(data, userId: userId, now: now, scope: scope)
                }
                offer = facts.decision.state == .eligible
                    ? tip(campaign, appStoreProductId: facts.appStore?.productId, freeTrialDays: facts.decision.offerData?.freeTrialDays,
                          asIfQualified: false)
                    : nil
            } else {
                offer = config.campaign.map { tip($0, appStoreProductId: nil, freeTrialDays: nil, asIfQualified: false) }
            }
        }
        return Schemas.ProductsResponse(
            products: products,
            config: .init(
                checkout: .init(sheetType: config.checkout.sheetType, isEnabled: config.products.contains { $0.webPrice != nil }),
                migration: try config.campaign.map { try WireMapping.convert($0) },
                offer: offer
            )
        )
    }

    /// The campaign as the SDK's tip, for one App Store product (or the campaign's first).
    func tip(_ campaign: MigrationCampaign, appStoreProductId: String?, freeTrialDays: Int?, asIfQualified: Bool) -> Schemas.OfferData {
        let productId = appStoreProductId ?? campaign.eligibleProductIds.first ?? config.products.first?.id ?? ""
        let prompt = campaign.prompt(forProductId: productId)
        func display(_ prompt: MigrationOffer.Prompt) -> Schemas.TipDisplay {
            let copy = MigrationOffer.DisplayCopy(prompt: prompt, productName: config.product(id: prompt.productId)?.displayName ?? prompt.productId)
            return Schemas.TipDisplay(
                offerTitle: copy.title, offerMessage: copy.body, offerCta: copy.ctaText, acceptedTitle: copy.acceptedTitle,
                acceptedMessage: copy.acceptedBody, acceptedCta: "Cancel Apple billing", completedTitle: copy.completedTitle,
                completedMessage: copy.completedBody
            )
        }
        let prompts = Dictionary(uniqueKeysWithValues: campaign.eligibleProductIds.map { id -> (String, Schemas.TipProductPrompt) in
            let prompt = campaign.prompt(forProductId: id)
            return (id, Schemas.TipProductPrompt(productId: id, savingsPercent: prompt.discountPercent, display: display(prompt)))
        })
        return Schemas.OfferData(
            flowType: .migration, productId: productId, eligibleProductIds: campaign.eligibleProductIds,
            savingsPercent: prompt.discountPercent, display: display(prompt), freeTrialDays: freeTrialDays ?? campaign.freeTrialDays,
            minSubscriptionDays: asIfQualified ? 0 : campaign.minSubscriptionDays,
            maxSubscriptionDays: asIfQualified ? nil : campaign.maxSubscriptionDays,
            rolloutPercent: asIfQualified ? 100 : campaign.effectiveRolloutPercent,
            perProductPrompts: prompts.isEmpty ? nil : .init(additionalProperties: prompts), checkoutPresentation: .inline
        )
    }

    /// The upgrade tip of the debug mode: from the lowest App Store tier that has a higher web tier.
    private func upgradeTip() -> Schemas.OfferData? {
        let ladder = config.products.filter { $0.appStorePrice != nil }.sorted { $0.tier < $1.tier }
        for from in ladder {
            guard let to = UpgradeService.target(for: from, in: config), let webPrice = to.webPrice else { continue }
            let storePrice = to.appStorePrice?.amountMicros ?? webPrice.amountMicros
            let savings = storePrice > 0 ? max(0, Int((Double(storePrice - webPrice.amountMicros) / Double(storePrice) * 100).rounded(.down))) : 0
            return Schemas.OfferData(
                flowType: .upgrade, productId: to.id, eligibleProductIds: [from.id], savingsPercent: savings,
                display: .init(
                    offerTitle: "Upgrade to \(to.displayName)", offerMessage: "Move up to \(to.displayName) on the web and pay \(savings)% less than in the App Store.",
                    offerCta: "Upgrade", acceptedTitle: MigrationOffer.DisplayCopy.defaultAcceptedTitle, acceptedMessage: "Cancel your Apple subscription to finish the upgrade.",
                    acceptedCta: "Cancel Apple billing", completedTitle: MigrationOffer.DisplayCopy.defaultCompletedTitle, completedMessage: "Enjoy \(to.displayName)."
                ),
                rolloutPercent: 100, upgradeType: .storekitToWeb, fromProductId: from.id, toProductId: to.id, checkoutPresentation: .inline
            )
        }
        return nil
    }
}
