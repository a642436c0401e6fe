import Foundation
import Testing

@testable import RetentionDomain

@Suite("CustomerActions")
struct CustomerActionsTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)

    static func entitlement(_ product: String = "premium_monthly", source: Entitlement.Source = .webCheckout,
                            status: Entitlement.Status = .active, willRenew: Bool = true) -> Entitlement {
        Entitlement(id: "\(source.wireValue)_\(product)", productId: product, source: source, status: status,
                    isActive: ![.expired, .revoked, .paused, .cancelled].contains(status), purchasedAt: now, willRenew: willRenew)
    }

    func action(_ kind: CustomerActions.Kind, _ input: CustomerActions.Input) -> CustomerActions.Action {
        CustomerActions.evaluate(input).first { $0.kind == kind }!
    }

    @Test func everyActionAppearsOnceAvailableOrWithAReason() {
        for input in [CustomerActions.Input(entitlements: []), .init(entitlements: [Self.entitlement()])] {
            let actions = CustomerActions.evaluate(input)
            #expect(actions.map(\.kind) == CustomerActions.Kind.allCases)
            #expect(actions.allSatisfy { $0.isAvailable || $0.note?.isEmpty == false })
        }
    }

    @Test func cancelAndPauseActOnTheWebSubscriptionWhenThereAreBoth() {
        let both = CustomerActions.Input(entitlements: [Self.entitlement(source: .storeKit), Self.entitlement()])
        let cancel = action(.cancelFlow, both)
        #expect(cancel.isAvailable && cancel.note == "acts on the web subscription; the App Store one is the customer's to turn off")
        let webOnly = action(.cancelFlow, .init(entitlements: [Self.entitlement()]))
        #expect(webOnly.isAvailable && webOnly.note == nil)
        let storeOnly = action(.cancelFlow, .init(entitlements: [Self.entitlement(source: .storeKit)]))
        #expect(storeOnly.isAvailable && storeOnly.note == "billed by the App Store: no pause; the customer cancels in Settings, with steps to read out")
        let eligible = action(.cancelFlow, .init(entitlements: [Self.entitlement(source: .storeKit)], switchAndSave: .eligible))
        #expect(eligible.note?.hasPrefix("billed by the App Store: switch and save is the save offer;") == true)
    }

    @Test func lifecycleDecidesResumeUndoAndWinBack() {
        let paused = CustomerActions.Input(entitlements: [Self.entitlement(status: .paused)])
        #expect(action(.resume, paused).isAvailable && action(.cancelFlow, paused).isAvailable)
        let cancelling = CustomerActions.Input(entitlements: [Self.entitlement(willRenew: false)])
        #expect(action(.reactivate, cancelling).isAvailable && !action(.cancelFlow, cancelling).isAvailable)
        let expired = CustomerActions.Input(entitlements: [Self.entitlement(status: .expired)], winBackProductIds: ["premium_monthly"])
        #expect(action(.winBack, expired).isAvailable && action(.winBack, expired).productId == "premium_monthly")
        #expect(action(.cancelFlow, expired).note == "no live subscription")
        let subscribed = CustomerActions.Input(entitlements: [Self.entitlement()], winBackProductIds: ["premium_monthly"])
        #expect(!action(.winBack, subscribed).isAvailable && action(.winBack, subscribed).note == "the customer is subscribed")
    }

    @Test(arguments: [
        (MigrationOffer.State.eligible, true), (.presented, true), (.accepted, true), (.completed, false),
        (.dismissed, false), (.ineligible, false), (.loading, false),
    ])
    func switchAndSaveFollowsTheOfferState(state: MigrationOffer.State, available: Bool) {
        let input = CustomerActions.Input(entitlements: [Self.entitlement(source: .storeKit)], switchAndSave: state,
                                          switchAndSaveNote: "subscribed 12 days; this campaign starts at 30")
        #expect(action(.switchAndSave, input).isAvailable == available)
        if state == .ineligible { #expect(action(.switchAndSave, input).note == "subscribed 12 days; this campaign starts at 30") }
    }

    @Test func upgradesComeFromTheServersOffers() {
        let offered = CustomerActions.Input(entitlements: [Self.entitlement("basic_monthly")], upgrades: ["basic_monthly": nil])
        #expect(action(.upgrade, offered).isAvailable && action(.upgrade, offered).productId == "basic_monthly")
        let top = CustomerActions.Input(entitlements: [Self.entitlement()], upgrades: ["premium_monthly": "already on the top tier"])
        #expect(!action(.upgrade, top).isAvailable && action(.upgrade, top).note == "already on the top tier")
    }
}
