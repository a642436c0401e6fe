import Foundation

/// Which actions an agent can take for a customer, and why the others are not available. Every
/// action appears once, so the console can show what is possible and explain what is not.
public enum CustomerActions {
    public enum Kind: String, Hashable, Sendable, CaseIterable {
        case cancelFlow = "cancel_flow", resume, reactivate, switchAndSave = "switch_and_save", upgrade, winBack = "win_back"

        public var title: String {
            switch self {
            case .cancelFlow: "Cancel flow"
            case .resume: "Resume subscription"
            case .reactivate: "Undo cancellation"
            case .switchAndSave: "Switch and save"
            case .upgrade: "Upgrade"
            case .winBack: "Win back"
            }
        }
    }

    public struct Action: Hashable, Sendable, Identifiable {
        public var kind: Kind
        /// The product the action applies to.
        public var productId: String?
        public var isAvailable: Bool
        /// Why it is not available, or a note when it is ("billed by the App Store…").
        public var note: String?
        public var id: Kind { kind }

        public init(kind: Kind, productId: String?, isAvailable: Bool, note: String? = nil) {
            self.kind = kind
            self.productId = productId
            self.isAvailable = isAvailable
            self.note = note
        }
    }

    /// The facts the rules look at.
    public struct Input: Sendable {
        public var entitlements: [Entitlement]
        /// Products whose lapsed subscription qualifies for win-back (from the lifecycle resolver).
        public var winBackProductIds: Set<String>
        /// The switch-and-save state, and the first reason when it is not offered.
        public var switchAndSave: MigrationOffer.State?
        public var switchAndSaveNote: String?
        /// Per product: nil when an upgrade is offered, otherwise why not.
        public var upgrades: [String: String?]

        public init(
            entitlements: [Entitlement], winBackProductIds: Set<String> = [], switchAndSave: MigrationOffer.State? = nil,
            switchAndSaveNote: String? = nil, upgrades: [String: String?] = [:]
        ) {
            self.entitlements = entitlements
            self.winBackProductIds = winBackProductIds
            self.switchAndSave = switchAndSave
            self.switchAndSaveNote = switchAndSaveNote
            self.upgrades = upgrades
        }
    }

    public static func evaluate(_ input: Input) -> [Action] {
        let live = input.entitlements.filter { $0.status.isLive }
        let web = live.filter { $0.source == .webCheckout }
        let store = live.filter { $0.source.isStore }
        // Cancel and pause act on the web subscription when there are both (flows.md).
        let main = web.first ?? store.first
        var actions: [Action] = []

        if let main {
            if main.source == .webCheckout, !main.willRenew, main.status != .paused {
                actions.append(Action(kind: .cancelFlow, productId: main.productId, isAvailable: false,
                                      note: "already cancelled; it ends at the period end"))
            } else if main.source.isStore {
                let save = input.switchAndSave == .eligible ? "switch and save is the save offer; " : ""
                actions.append(Action(kind: .cancelFlow, productId: main.productId, isAvailable: true,
                                      note: "billed by the App Store: \(save)no pause; the customer cancels in Settings, with steps to read out"))
            } else if !store.isEmpty {
                actions.append(Action(kind: .cancelFlow, productId: main.productId, isAvailable: true,
                                      note: "acts on the web subscription; the App Store one is the customer's to turn off"))
            } else {
                actions.append(Action(kind: .cancelFlow, productId: main.productId, isAvailable: true))
            }
        } else {
            actions.append(Action(kind: .cancelFlow, productId: nil, isAvailable: false, note: "no live subscription"))
        }

        let paused = web.first { $0.status == .paused }
        actions.append(paused.map { Action(kind: .resume, productId: $0.productId, isAvailable: true) }
            ?? Action(kind: .resume, productId: nil, isAvailable: false, note: "nothing is paused"))

        let cancelling = web.first { !$0.willRenew && $0.status != .paused }
        actions.append(cancelling.map { Action(kind: .reactivate, productId: $0.productId, isAvailable: true) }
            ?? Action(kind: .reactivate, productId: nil, isAvailable: false, note: "no cancellation to undo"))

        actions.append(switchAndSave(input, productId: store.first?.productId))

        let upgradable = input.upgrades.sorted { $0.key < $1.key }
        if let offered = upgradable.first(where: { $0.value == nil }) {
            actions.append(Action(kind: .upgrade, productId: offered.key, isAvailable: true))
        } else {
            actions.append(Action(kind: .upgrade, productId: upgradable.first?.key, isAvailable: false,
                                  note: upgradable.first?.value ?? (main == nil ? "no live subscription" : "no higher tier")))
        }

        let lapsed = input.entitlements.first { input.winBackProductIds.contains($0.productId) && !live.map(\.productId).contains($0.productId) }
        actions.append(lapsed.map { Action(kind: .winBack, productId: $0.productId, isAvailable: true) }
            ?? Action(kind: .winBack, productId: nil, isAvailable: false, note: live.isEmpty ? "nothing to win back" : "the customer is subscribed"))
        return actions
    }

    static func switchAndSave(_ input: Input, productId: String?) -> Action {
        switch input.switchAndSave {
        case .eligible?: Action(kind: .switchAndSave, productId: productId, isAvailable: true)
        case .presented?, .accepted?:
            Action(kind: .switchAndSave, productId: productId, isAvailable: true, note: "in progress")
        case .completed?: Action(kind: .switchAndSave, productId: productId, isAvailable: false, note: "already switched to web billing")
        case .dismissed?: Action(kind: .switchAndSave, productId: productId, isAvailable: false, note: input.switchAndSaveNote ?? "the offer was dismissed")
        case .ineligible?: Action(kind: .switchAndSave, productId: productId, isAvailable: false, note: input.switchAndSaveNote ?? "not eligible")
        case .loading?, nil: Action(kind: .switchAndSave, productId: productId, isAvailable: false, note: "not known yet")
        }
    }
}
