import Foundation
import SaveDeskViewModels
import TerminalKit

/// The switch-and-save card through every state: the offer (copy, discount, days bridged) →
/// checkout (URL, waiting) → the Apple steps to read out → completed; reasons when not offered.
@MainActor
final class SwitchAndSaveScreen: Screen {
    let manager: MigrationManager
    let device: DemoDevice?
    private var focusedButton = 0

    init(manager: MigrationManager, device: DemoDevice?) {
        self.manager = manager
        self.device = device
    }

    var title: String { "Switch and save \u{00B7} \(manager.userId)" }
    var isMidFlow: Bool { manager.state == .presented || manager.state == .accepted }
    func appear() -> Intent { .run { await self.manager.refresh() } }

    /// The customer paid (on to Apple's side), or the App Store reported: no key needed.
    func follow(_ change: LiveChange) -> Intent {
        if manager.state == .presented, change.settlesCheckout { return .run { await self.manager.markCheckoutSucceeded() } }
        if manager.state == .accepted, change.isFromAppStore { return .run { await self.manager.showAppleSubscriptionManagement() } }
        return .none
    }

    enum Action { case focus(Int), press(Command) }

    var keyMap: KeyMap<Action> {
        let buttons = self.buttons
        var map = KeyMap<Action>([
            .on(.left, .backTab, .up, keys: "\u{2190}\u{2192} Tab", "choose a button", .focus(-1)),
            .on(.right, .tab, .down, keys: "", "", .focus(1)),
            .digits(count: buttons.count, "press that button", { .press(buttons[$0].action) }),
        ])
        if buttons.indices.contains(focusedButton) { map.append(.on(.enter, keys: "Enter", "press it", .press(buttons[focusedButton].action))) }
        if device != nil {
            if manager.state == .presented { map.append(.on(.character("p"), keys: "p", "simulate the payment (test mode)", .press(.simulatePayment))) }
            if manager.state == .accepted { map.append(.on(.character("o"), keys: "o", "simulate Apple auto-renew off (test mode)", .press(.simulateAppleOff))) }
        }
        map.append(.on(.character("g"), keys: "g", "evaluate again", .press(.refresh)))
        return map
    }

    func action(forClick id: String) -> Action? {
        guard let index = index(of: id, prefix: "button."), buttons.indices.contains(index) else { return nil }
        return .press(buttons[index].action)
    }

    func perform(_ action: Action, context: ScreenContext) -> Intent {
        switch action {
        case .focus(let step):
            focusedButton = min(max(0, buttons.count - 1), max(0, focusedButton + step))
            return .none
        case .press(let action): return run(action)
        }
    }

    enum Command { case startCheckout, dismiss, paid, checkApple, reset, refresh, simulatePayment, simulateAppleOff, back }

    private var buttons: [(label: String, action: Command)] {
        var buttons: [(String, Command)]
        switch manager.state {
        case .loading: buttons = manager.loadError == nil ? [] : [("Retry", .refresh)]
        case .eligible: buttons = [(manager.display?.ctaText ?? "Start checkout", .startCheckout), (manager.display?.dismissText ?? "Not now", .dismiss)]
        case .presented: buttons = [("Customer paid", .paid), ("Dismiss", .dismiss)]
        case .accepted: buttons = [("Check Apple billing", .checkApple)]
        case .completed, .ineligible: buttons = [("Back", .back)]
        case .dismissed: buttons = [("Show the offer again", .reset), ("Back", .back)]
        }
        if device != nil, manager.state == .presented { buttons.insert(("Simulate payment", .simulatePayment), at: 0) }
        if device != nil, manager.state == .accepted { buttons.insert(("Simulate auto-renew off", .simulateAppleOff), at: 0) }
        return buttons
    }

    private func run(_ command: Command) -> Intent {
        let manager = self.manager
        focusedButton = 0
        switch command {
        case .startCheckout: return .run { await manager.startCheckout() }
        case .dismiss: return .run { await manager.dismiss() }
        case .paid: return .run { await manager.markCheckoutSucceeded() }
        case .checkApple: return .run { await manager.showAppleSubscriptionManagement() }
        case .reset: return .run { await manager.resetDismissedState() }
        case .refresh: return .run { await manager.refresh() }
        case .back: return .back
        case .simulatePayment:
            guard let device, let checkout = manager.checkout else { return .none }
            return .run {
                await device.completeCheckout(transactionId: checkout.transactionId, paid: true)
                await manager.markCheckoutSucceeded()
            }
        case .simulateAppleOff:
            guard let device else { return .none }
            return .run {
                await device.appStoreEvent(.autoRenewOff, customerId: manager.userId)
                await manager.showAppleSubscriptionManagement()
            }
        }
    }

    func render(into frame: inout Frame, area: Rect, context: RenderContext) {
        let theme = context.theme
        let cardWidth = min(area.width, 76)
        let innerWidth = cardWidth - 4
        // The card is as tall as what it says (wrapped to its width), plus the buttons.
        var lines: [(String, Style)] = []
        func paragraph(_ text: String, _ style: Style, maxRows: Int = 4) {
            lines += Text.wrap(text, width: innerWidth).prefix(maxRows).map { ($0, style) }
        }
        func gap() { if !(lines.last.map { $0.0.isEmpty } ?? true) { lines.append(("", theme[.text])) } }
        let terms = manager.terms
        switch manager.state {
        case .loading:
            paragraph(manager.loadError ?? "Evaluating the offer\u{2026}", manager.loadError == nil ? theme[.muted] : theme[.danger])
        case .ineligible:
            paragraph("Not offered to this customer:", theme[.title])
            for reason in manager.reasons { paragraph("\u{2022} " + reason.message, theme[.text], maxRows: 3) }
        case .eligible, .presented:
            if let offer = manager.offerData {
                paragraph(offer.prompt.title, theme[.title])
                gap()
                paragraph(offer.prompt.message, theme[.text])
                gap()
                let name = terms?.productName ?? offer.prompt.productId
                paragraph(terms?.priceLine.map { "\(name): \($0)" } ?? "\(offer.prompt.discountPercent)% off \(name) on the web, forever.",
                          theme[.success].adding(.bold))
                paragraph(terms?.bridgeLine ?? "", theme[.success])
            }
            if manager.state == .presented, let checkout = manager.checkout {
                gap()
                paragraph("Checkout for the customer:", theme[.title])
                paragraph(checkout.checkoutUrl, theme[.accent])
                paragraph("\(Spinner.text(context.tick))  Waiting for the customer to pay\u{2026}", theme[.muted])
            }
            if manager.isLoading { paragraph("Creating the checkout\u{2026}", theme[.muted]) }
        case .accepted:
            paragraph(manager.acceptedTitle, theme[.title])
            paragraph(manager.acceptedBody, theme[.text])
            gap()
            let steps = manager.appleCancelSteps
            paragraph("Read these steps to the customer to cancel Apple billing:", theme[.title])
            for (index, step) in steps.enumerated() { paragraph("\(index + 1). \(step)", theme[.text], maxRows: 2) }
            if manager.waitingForAppleCancel { paragraph("Apple still renews. Check again once the customer has turned it off.", theme[.warning]) }
        case .completed:
            paragraph(manager.completedTitle, theme[.success].adding(.bold))
            let price = terms?.priceWithDiscount.map { " (\(Display.price($0, interval: terms?.interval?.wireValue)))" } ?? ""
            paragraph("\(terms?.productName ?? "The subscription") is billed on the web now\(price): "
                      + "saving \(manager.offerData?.prompt.discountPercent ?? 0)% forever, with no double charge.", theme[.success])
        case .dismissed:
            paragraph("The customer dismissed this offer; it is not shown again unless reset.", theme[.muted])
        }
        if let error = manager.checkoutError {
            gap()
            paragraph(error, theme[.danger], maxRows: 2)
        }
        let buttons = self.buttons
        // Top border, the lines, a blank row and the buttons, the bottom border; never past the area.
        let height = min(area.height, lines.count + (buttons.isEmpty ? 2 : 4))
        let card = Rect(x: area.x, y: area.y, width: cardWidth, height: height)
        let title = "Switch and save \u{00B7} \(manager.state.rawValue)"
        let block = Block(title: title, style: theme[.border], titleStyle: theme[.accent])
        frame.render(block, in: card)
        let inside = block.inner(card).inset(dx: 1, dy: 0)
        let textRows = max(0, inside.height - (buttons.isEmpty ? 0 : 2))
        for (row, line) in lines.prefix(textRows).enumerated() {
            frame.buffer.put(line.0, x: inside.x, y: inside.y + row, style: line.1, clip: inside)
        }
        guard !buttons.isEmpty else { return }
        frame.render(ButtonRow(buttons.enumerated().map { ($1.label, "button.\($0)") }, focused: focusedButton, theme: theme),
                     in: inside.splitBottom(1).bottom)
    }
}
