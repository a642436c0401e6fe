import Foundation
import SaveDeskViewModels
import TerminalKit

/// The cancel flow with a customer: questionnaire (progress dots, options, free text, required
/// marker), save offer (a coupon with the price before and after; for App Store billing switch and
/// save with its checkout inline, or an App Store offer code), pause picker (resume dates),
/// confirmation (period end or now; for App Store billing the steps to read out), then the outcome
/// and Apple's side (waiting, then confirmed). Every page is drawn from the session's view
/// (`CancelFlowSession.view(now:)`, plain values) by `CancelFlowDrawing`; the screen adds its
/// focus and typing, its keys, and the calls each command makes.
@MainActor
final class CancelFlowScreen: Screen {
    let session: CancelFlowSession
    /// The demo device plays the customer in test mode (pay the checkout, turn off Apple renewal).
    let device: DemoDevice?
    /// Focus and typing on the page on screen. Kept with the page it belongs to: on another page
    /// the screen reads a fresh one (`ui`), so rendering never has to change anything.
    private var stored = CancelFlowPageUI(page: nil)

    init(session: CancelFlowSession, device: DemoDevice? = nil) {
        self.session = session
        self.device = device
    }

    /// The session's view, without the pause picker's dates (keys and buttons need none).
    private var view: CancelFlowView { session.view() }

    /// The UI state of the page on screen: on a new page, its first choice is focused (or the
    /// answer given before, when coming back); on a page of buttons only, its first button, so
    /// Tab and the arrows move on from the one Enter presses.
    private var ui: CancelFlowPageUI { Self.ui(for: view, stored: stored) }

    static func ui(for view: CancelFlowView, stored: CancelFlowPageUI) -> CancelFlowPageUI {
        guard view.page != stored.page else { return stored }
        var fresh = CancelFlowPageUI(page: view.page, cancelNow: stored.cancelNow)
        switch view.content {
        case .question(let question):
            if let index = question.chosenIndex { fresh.highlighted = index }
            if question.isFreeText, let text = question.freeText { fresh.field.set(text) }
        case .confirmation: fresh.highlighted = fresh.cancelNow ? 1 : 0
        default: if choiceCount(view) == 0 { fresh.focusedButton = 0 }
        }
        return fresh
    }

    var title: String { "Cancel flow \u{00B7} \(session.userId) \u{00B7} \(session.productId)" }
    var isMidFlow: Bool { session.isMidway }
    var isTyping: Bool { Self.isTyping(view, ui: ui) }

    static func isTyping(_ view: CancelFlowView, ui: CancelFlowPageUI) -> Bool {
        if case .question(let question) = view.content, question.isFreeText, ui.focusedButton == nil { return true }
        return false
    }

    func appear() -> Intent { .run { await self.session.load() } }

    /// The customer did their part: a paid checkout ends the switch's wait (on to Apple's
    /// steps), and what the App Store reports is Apple's side checked again, with no key pressed.
    func follow(_ change: LiveChange) -> Intent {
        switch view.content {
        case .switchOffer(let offer) where offer.isAwaitingPayment && change.settlesCheckout:
            return .run { await self.session.confirmSwitchPayment() }
        case .ending(let ending) where ending.appleSide?.isWaiting == true && change.isFromAppStore:
            return .run { await self.session.checkApple() }
        default:
            return .none
        }
    }

    /// Leaving before the end records the flow as dismissed (with the answers so far).
    func leave() -> Intent {
        guard session.isUnrecorded else { return .none }
        return .run { await self.session.abandon() }
    }

    // MARK: Buttons of each page

    enum Command {
        case proceed, back, skipAndCancel, acceptOffer, declineOffer, pause, declinePause, confirm, retry, giveUp, done, reload
        case switchPaid, simulatePayment, checkApple, simulateAppleOff
    }

    /// The buttons under a view (with the demo device, its test-mode shortcuts too).
    static func buttons(for view: CancelFlowView, device: Bool) -> [(label: String, command: Command)] {
        switch view.content {
        case .loading, .applying: return []
        case .unavailable: return [("Retry", .reload)]
        case .failed: return [("Retry", .retry), ("Give up", .giveUp)]
        case .ending(let ending):
            guard ending.appleSide?.isWaiting == true else { return [("Done", .done)] }
            return [("Check Apple again", .checkApple)] + (device ? [("Simulate auto-renew off", .simulateAppleOff)] : []) + [("Done", .done)]
        case .question: return [("Continue", .proceed), ("Back", .back), ("Skip and cancel", .skipAndCancel)]
        case .switchOffer(let offer) where offer.isAwaitingPayment:
            return [("Customer paid", .switchPaid)] + (device ? [("Simulate payment", .simulatePayment)] : []) + [("No thanks", .declineOffer)]
        case .switchOffer(let offer): return [(offer.terms.ctaText, .acceptOffer), ("No thanks", .declineOffer)]
        case .offer(let offer): return [(offer.ctaText, .acceptOffer), ("No thanks", .declineOffer)]
        case .pause(let pause): return [(pause.ctaText, .pause), ("No thanks", .declinePause)]
        case .appStoreSteps: return [("Steps read out", .confirm), ("Back", .back)]
        case .confirmation: return [("Confirm cancellation", .confirm), ("Back", .back)]
        }
    }

    private var buttons: [(label: String, command: Command)] { Self.buttons(for: view, device: device != nil) }

    /// How many choices the page offers (radio options).
    static func choiceCount(_ view: CancelFlowView) -> Int {
        switch view.content {
        case .question(let question): question.options.count
        case .pause(let pause): pause.options.count
        case .confirmation: 2
        default: 0
        }
    }

    private var choiceCount: Int { Self.choiceCount(view) }
    private var isFreeText: Bool {
        if case .question(let question) = view.content { return question.isFreeText }
        return false
    }

    // MARK: Keys

    enum Action {
        /// A key for the text field.
        case edit(KeyEvent)
        case focusButtons, unfocusButtons
        /// Tab / Shift-Tab through the buttons (and back to the choices).
        case cycle(forward: Bool)
        /// ← → along the buttons.
        case moveAlongButtons(Int)
        case up, down
        case choose(Int)
        /// Enter: the focused button, or the page's first.
        case enter
        case command(Command)
        case focusField
        case clickButton(Int)
    }

    var keyMap: KeyMap<Action> {
        if isTyping {
            return KeyMap([
                .on(.enter, keys: "Enter", "continue", .command(.proceed)),
                .on(.tab, keys: "Tab", "to the buttons", .focusButtons),
                .on(.escape, keys: "Esc", "back a step", .command(.back)),
                .on(.up, keys: "", "", .unfocusButtons),
                .matching("type", "the customer's words") { TextFieldState.isEdit($0) ? .edit($0) : nil },
            ])
        }
        let view = self.view
        let buttons = Self.buttons(for: view, device: device != nil)
        var map = KeyMap<Action>()
        let choices = Self.choiceCount(view)
        if choices > 0 {
            map.append(.upDown("choose", up: .up, down: .down))
            map.append(.digits(count: choices, "choose that one", { .choose($0) }))
            map.append(.on(.character(" "), keys: "Space", "choose the highlighted one", .choose(ui.highlighted)))
            // Digits past the choices do nothing (they are not the app's either).
            map.append(.matching("", "") { $0.digit != nil ? .choose(-1) : nil })
        } else if !buttons.isEmpty {
            map.append(.upDown("to the buttons", up: .up, down: .down))
        }
        if !buttons.isEmpty {
            map.append(.on(.enter, keys: "Enter", "continue / the focused button", .enter))
            map.append(.on(.tab, keys: "Tab", "through the buttons", .cycle(forward: true)))
            map.append(.on(.backTab, keys: "", "", .cycle(forward: false)))
            if ui.focusedButton != nil {
                map.append(.matching("\u{2190}\u{2192}", "along the buttons") { $0 == .left ? .moveAlongButtons(-1) : $0 == .right ? .moveAlongButtons(1) : nil })
            }
        }
        var awaitingPayment = false
        switch view.content {
        case .offer:
            map.append(.on(.character("y"), keys: "y", "accept the offer", .command(.acceptOffer)))
            map.append(.on(.character("n"), keys: "n", "decline the offer", .command(.declineOffer)))
        case .switchOffer(let offer):
            awaitingPayment = offer.isAwaitingPayment
            if !awaitingPayment { map.append(.on(.character("y"), keys: "y", "accept the offer", .command(.acceptOffer))) }
            map.append(.on(.character("n"), keys: "n", "decline the offer", .command(.declineOffer)))
        default: break
        }
        if device != nil, awaitingPayment {
            map.append(.on(.character("p"), keys: "p", "simulate the customer paying the checkout (test mode)", .command(.simulatePayment)))
        }
        if case .ending(let ending) = view.content, let side = ending.appleSide {
            if device != nil, side.isWaiting {
                map.append(.on(.character("o"), keys: "o", "simulate Apple auto-renew off (test mode)", .command(.simulateAppleOff)))
            }
            map.append(.on(.character("g"), keys: "g", "check Apple's side again", .command(.checkApple)))
        }
        if case .pause = view.content { map.append(.on(.character("n"), keys: "n", "no pause", .command(.declinePause))) }
        if view.progress != nil, view.canGoBack {
            map.append(.on(.escape, .backspace, keys: "Esc", "back a step", .command(.back)))
        }
        return map
    }

    func action(forClick id: String) -> Action? {
        if let index = index(of: id, prefix: "choice.") { return .choose(index) }
        if let index = index(of: id, prefix: "button.") { return .clickButton(index) }
        return id == "field" ? .focusField : nil
    }

    func perform(_ action: Action, context: ScreenContext) -> Intent {
        stored = ui
        let buttons = self.buttons
        switch action {
        case .edit(let key):
            guard stored.field.handle(key) else { return .none }
            try? session.setFreeText(stored.field.text)
        case .focusButtons: stored.focusedButton = 0
        case .unfocusButtons, .focusField: stored.focusedButton = nil
        case .cycle(forward: true):
            stored.focusedButton = stored.focusedButton.map { $0 + 1 < buttons.count ? $0 + 1 : (choiceCount > 0 || isFreeText ? nil : 0) } ?? 0
        case .cycle(forward: false):
            stored.focusedButton = stored.focusedButton.map { $0 > 0 ? $0 - 1 : nil } ?? (buttons.isEmpty ? nil : buttons.count - 1)
        case .moveAlongButtons(let step):
            stored.focusedButton = stored.focusedButton.map { min(buttons.count - 1, max(0, $0 + step)) }
        case .up:
            if stored.focusedButton != nil, choiceCount > 0 || isFreeText { stored.focusedButton = nil } else { choose(stored.highlighted - 1) }
        case .down:
            if stored.focusedButton == nil, stored.highlighted + 1 >= choiceCount || isFreeText {
                stored.focusedButton = buttons.isEmpty ? nil : 0
            } else {
                choose(stored.highlighted + 1)
            }
        case .choose(let index):
            guard index >= 0 else { return .none }
            stored.focusedButton = nil
            choose(index)
        case .enter:
            if let index = stored.focusedButton, buttons.indices.contains(index) { return run(buttons[index].command, context: context) }
            return buttons.first.map { run($0.command, context: context) } ?? .none
        case .command(let command): return run(command, context: context)
        case .clickButton(let index):
            guard buttons.indices.contains(index) else { return .none }
            stored.focusedButton = index
            return run(buttons[index].command, context: context)
        }
        return .none
    }

    /// Highlights a choice and selects it (radio behaviour).
    private func choose(_ index: Int) {
        guard choiceCount > 0 else { return }
        stored.highlighted = min(max(0, index), choiceCount - 1)
        switch view.content {
        case .question(let question): try? session.select(optionId: question.options[stored.highlighted].id)
        case .confirmation: stored.cancelNow = stored.highlighted == 1
        default: break
        }
    }

    private func run(_ command: Command, context: ScreenContext) -> Intent {
        let session = self.session
        let view = self.view
        do {
            switch command {
            case .proceed: try session.proceed()
            case .back: if !session.back() { return .back }
            case .skipAndCancel: return .run { try? await session.skipAndCancel() }
            case .acceptOffer: return .run { try? await session.acceptOffer() }
            case .declineOffer: try session.declineOffer()
            case .pause:
                guard case .pause(let pause) = view.content, let option = pause.options[safe: ui.highlighted] else { return .none }
                let now = context.serverNow
                return .run { try? await session.choosePause(optionId: option.id, now: now) }
            case .declinePause: try session.declinePause()
            case .confirm:
                let now = ui.cancelNow
                return .run { try? await session.confirmCancel(immediately: now) }
            case .retry: return .run { await session.retry() }
            case .giveUp: return .run { await session.giveUp() }
            case .done: return .back
            case .reload: return .run { await session.load() }
            case .switchPaid: return .run { await session.confirmSwitchPayment() }
            case .simulatePayment:
                guard let device, case .switchOffer(let offer) = view.content, let checkout = offer.checkout else { return .none }
                return .run {
                    await device.completeCheckout(transactionId: checkout.transactionId, paid: true)
                    await session.confirmSwitchPayment()
                }
            case .checkApple: return .run { await session.checkApple() }
            case .simulateAppleOff:
                guard let device else { return .none }
                return .run {
                    await device.appStoreEvent(.autoRenewOff, customerId: session.userId)
                    await session.checkApple()
                }
            }
            return .none
        } catch {
            return .show(error.description, isError: true)
        }
    }

    // MARK: Rendering

    func render(into frame: inout Frame, area: Rect, context: RenderContext) {
        let view = session.view(now: context.model.serverNow)
        let ui = Self.ui(for: view, stored: stored)
        CancelFlowDrawing(
            view: view, ui: ui, buttons: Self.buttons(for: view, device: device != nil).map(\.label),
            isTyping: Self.isTyping(view, ui: ui), tick: context.tick, theme: context.theme
        ).render(into: &frame, area: area)
    }
}

/// A cancel-flow view drawn: the page from its values, the screen's focus and typing, and its
/// buttons under it. What the screen shows, from values alone (tests draw hand-made views).
@MainActor
struct CancelFlowDrawing {
    var view: CancelFlowView
    var ui: CancelFlowPageUI
    var buttons: [String]
    var isTyping: Bool
    var tick: Int
    var theme: Theme

    func render(into frame: inout Frame, area: Rect) {
        var column = Column(area)
        switch view.content {
        case .loading:
            frame.render(LoadPhaseView(phase: .loading, loading: "Loading the cancel flow\u{2026}", canRetry: false, theme: theme), in: area)
            return
        case .unavailable(let message):
            column.place(Paragraph(message, style: theme[.danger]), maxHeight: 3, into: &frame)
            column.skip()
        case .applying(let label):
            column.place(Line(label, style: theme[.accent]), into: &frame)
            column.skip()
            column.place(Line("The customer's choice is being applied; this takes a moment.", style: theme[.muted]), into: &frame)
            return
        case .failed(let message):
            FailedPage(message: message, theme: theme).render(in: &column, frame: &frame)
        case .ending(let ending):
            OutcomePage(ending: ending, theme: theme).render(in: &column, frame: &frame)
        default:
            if let progress = view.progress {
                FlowProgress(progress: (progress.step, progress.total), unavailableNote: view.unavailableNote, theme: theme)
                    .render(in: &column, frame: &frame)
            }
            page?.render(in: &column, frame: &frame)
        }
        guard !buttons.isEmpty else { return }
        // Enter presses the focused button, else the first: it is marked either way.
        frame.render(ButtonRow(buttons.enumerated().map { ($1, "button.\($0)") }, focused: ui.focusedButton, enter: 0, theme: theme),
                     in: area.row(min(area.height - 1, column.y - area.y + 1)))
    }

    /// The page of the flow on screen.
    private var page: (any FlowPage)? {
        switch view.content {
        case .question(let question): QuestionPage(question: question, ui: ui, isTyping: isTyping, theme: theme)
        case .offer(let offer): OfferPage(offer: offer, theme: theme)
        case .switchOffer(let offer): SwitchOfferPage(offer: offer, tick: tick, theme: theme)
        case .pause(let pause): PausePage(pause: pause, ui: ui, theme: theme)
        case .confirmation(let confirmation): ConfirmationPage(confirmation: confirmation, ui: ui, theme: theme)
        case .appStoreSteps(let steps): AppStoreConfirmationPage(steps: steps, theme: theme)
        case .loading, .unavailable, .applying, .failed, .ending: nil
        }
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
