import Foundation
import SaveDeskViewModels
import TerminalKit

/// The cancel flow with a customer: questionnaire (progress dots, options, free text, required
/// marker), save offer (a coupon with the price before and after; for App Store billing switch and
/// save with its checkout inline, or an App Store offer code), pause picker (resume dates),
/// confirmation (period end or now; for App Store billing the steps to read out), then the outcome
/// and Apple's side (waiting, then confirmed). Every page is drawn from `CancelFlowSession`.
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

    /// The UI state of the page on screen: on a new page, its first choice is focused (or the
    /// answer given before, when coming back).
    private var ui: CancelFlowPageUI {
        let page = session.page
        guard page != stored.page else { return stored }
        var fresh = CancelFlowPageUI(page: page, cancelNow: stored.cancelNow)
        switch page {
        case .question?:
            if case .option(let id)? = session.navigator?.selection, let index = question?.options.firstIndex(where: { $0.id == id }) {
                fresh.highlighted = index
            }
            if isFreeText, case .freeText(let text)? = session.navigator?.selection { fresh.field.set(text) }
        case .cancelConfirmation?: fresh.highlighted = fresh.cancelNow ? 1 : 0
        default: break
        }
        return fresh
    }

    private var highlighted: Int { ui.highlighted }
    private var focusedButton: Int? { ui.focusedButton }

    var title: String { "Cancel flow \u{00B7} \(session.userId) \u{00B7} \(session.productId)" }
    var isMidFlow: Bool { session.isMidway }
    var isTyping: Bool {
        if case .inFlow = session.phase, focusedButton == nil, isFreeText { return true }
        return false
    }

    private var question: CancelFlowQuestion? {
        guard case .question(let index)? = session.page else { return nil }
        return session.navigator?.questions[index]
    }

    private var isFreeText: Bool { question.map { $0.questionType != .singleSelect } ?? false }

    func appear() -> Intent { .run { await self.session.load() } }

    /// Leaving before the end records the flow as dismissed (with the answers so far).
    func leave() -> Intent {
        guard session.submittedResponse == nil, session.navigator != nil else { return .none }
        return .run { await self.session.abandon() }
    }

    // MARK: Buttons of each page

    enum Command {
        case proceed, back, skipAndCancel, acceptOffer, declineOffer, pause, declinePause, confirm, retry, giveUp, done, reload
        case switchPaid, simulatePayment, checkApple, simulateAppleOff
    }

    private var buttons: [(label: String, command: Command)] {
        switch session.phase {
        case .unavailable: return [("Retry", .reload)]
        case .failed: return [("Retry", .retry), ("Give up", .giveUp)]
        case .finished:
            guard session.appleSide?.isWaiting == true else { return [("Done", .done)] }
            return [("Check Apple again", .checkApple)] + (device == nil ? [] : [("Simulate auto-renew off", .simulateAppleOff)]) + [("Done", .done)]
        case .loading, .applying: return []
        case .inFlow: break
        }
        switch session.page {
        case .question?: return [("Continue", .proceed), ("Back", .back), ("Skip and cancel", .skipAndCancel)]
        case .retention(.offer)? where session.isAwaitingSwitchPayment:
            return [("Customer paid", .switchPaid)] + (device == nil ? [] : [("Simulate payment", .simulatePayment)]) + [("No thanks", .declineOffer)]
        case .retention(.offer)?:
            let cta: String = switch session.saveOffer {
            case .switchAndSave(let terms)?: terms.ctaText
            case .offerCode(let pool)?: pool.ctaText
            case .coupon(let offer)?: offer.ctaText
            case nil: "Accept"
            }
            return [(cta, .acceptOffer), ("No thanks", .declineOffer)]
        case .retention(.pause)?: return [(session.config?.pause?.ctaText ?? "Pause", .pause), ("No thanks", .declinePause)]
        case .cancelConfirmation? where session.isAppStoreCancellation: return [("Steps read out", .confirm), ("Back", .back)]
        case .cancelConfirmation?: return [("Confirm cancellation", .confirm), ("Back", .back)]
        default: return []
        }
    }

    private var choiceCount: Int {
        switch session.page {
        case .question?: return question?.options.count ?? 0
        case .retention(.pause)?: return session.config?.pause?.orderedOptions.count ?? 0
        case .cancelConfirmation?: return session.isAppStoreCancellation ? 0 : 2
        default: return 0
        }
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
        let page = session.page
        var map = KeyMap<Action>()
        if choiceCount > 0 {
            map.append(.upDown("choose", up: .up, down: .down))
            map.append(.digits(count: choiceCount, "choose that one", { .choose($0) }))
            map.append(.on(.character(" "), keys: "Space", "choose the highlighted one", .choose(highlighted)))
            // Digits past the choices do nothing (they are not the app's either).
            map.append(.matching("", "") { $0.digit != nil ? .choose(-1) : nil })
        } else if !buttons.isEmpty {
            map.append(.upDown("to the buttons", up: .up, down: .down))
        }
        if !buttons.isEmpty {
            map.append(.on(.enter, keys: "Enter", "continue / the focused button", .enter))
            map.append(.on(.tab, keys: "Tab", "through the buttons", .cycle(forward: true)))
            map.append(.on(.backTab, keys: "", "", .cycle(forward: false)))
            if focusedButton != nil { map.append(.matching("\u{2190}\u{2192}", "along the buttons") { $0 == .left ? .moveAlongButtons(-1) : $0 == .right ? .moveAlongButtons(1) : nil }) }
        }
        if page == .retention(.offer) {
            if !session.isAwaitingSwitchPayment { map.append(.on(.character("y"), keys: "y", "accept the offer", .command(.acceptOffer))) }
            map.append(.on(.character("n"), keys: "n", "decline the offer", .command(.declineOffer)))
        }
        if device != nil, session.isAwaitingSwitchPayment {
            map.append(.on(.character("p"), keys: "p", "simulate the customer paying the checkout (test mode)", .command(.simulatePayment)))
        }
        if device != nil, session.appleSide?.isWaiting == true {
            map.append(.on(.character("o"), keys: "o", "simulate Apple auto-renew off (test mode)", .command(.simulateAppleOff)))
        }
        if session.appleSide != nil { map.append(.on(.character("g"), keys: "g", "check Apple's side again", .command(.checkApple))) }
        if page == .retention(.pause) { map.append(.on(.character("n"), keys: "n", "no pause", .command(.declinePause))) }
        if case .inFlow = session.phase, session.navigator?.canGoBack == true {
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
        if case .question? = session.page, let option = question?.options[stored.highlighted] { try? session.select(optionId: option.id) }
        if session.page == .cancelConfirmation { stored.cancelNow = stored.highlighted == 1 }
    }

    private func run(_ command: Command, context: ScreenContext) -> Intent {
        let session = self.session
        do {
            switch command {
            case .proceed: try session.proceed()
            case .back: if !session.back() { return .back }
            case .skipAndCancel: return .run { try? await session.skipAndCancel() }
            case .acceptOffer: return .run { try? await session.acceptOffer() }
            case .declineOffer: try session.declineOffer()
            case .pause:
                guard let option = session.config?.pause?.orderedOptions[safe: ui.highlighted] else { return .none }
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
                guard let device, let checkout = session.switchAndSave?.checkout else { return .none }
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
        let theme = context.theme
        var column = Column(area)
        switch session.phase {
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
        case .finished(let outcome):
            outcomePage(outcome, theme: theme).render(in: &column, frame: &frame)
        case .inFlow:
            guard let navigator = session.navigator else { break }
            FlowProgress(progress: navigator.progress, unavailableNote: session.unavailableNote, theme: theme).render(in: &column, frame: &frame)
            page(context: context)?.render(in: &column, frame: &frame)
        }
        let buttons = self.buttons
        guard !buttons.isEmpty else { return }
        frame.render(ButtonRow(buttons.enumerated().map { ($1.label, "button.\($0)") }, focused: focusedButton, theme: theme),
                     in: area.row(min(area.height - 1, column.y - area.y + 1)))
    }

    /// The page on screen, built from the session and the screen's UI state.
    private func page(context: RenderContext) -> (any FlowPage)? {
        let theme = context.theme
        switch session.page {
        case .question?:
            guard let question else { return nil }
            var chosen: Int?
            if case .option(let id)? = session.navigator?.selection { chosen = question.options.firstIndex { $0.id == id } }
            return QuestionPage(question: question, chosen: chosen, ui: ui, isTyping: isTyping, theme: theme)
        case .retention(.offer)?:
            switch session.saveOffer {
            case .switchAndSave(let terms)?:
                return SwitchOfferPage(terms: terms, checkoutURL: session.isAwaitingSwitchPayment ? session.switchAndSave?.checkout?.checkoutUrl : nil,
                                       appleMessage: session.appleMessage, tick: context.tick, theme: theme)
            case .offerCode(let pool)?:
                return OfferPage(title: pool.title, body: pool.body, coupon: nil, theme: theme)
            case .coupon?, nil:
                guard let offer = session.config?.offer else { return nil }
                return OfferPage(title: offer.title, body: offer.body,
                                 coupon: (session.currentPrice.map { Display.price($0, interval: session.billingInterval) },
                                          session.offerPrice.map { Display.price($0, interval: session.billingInterval) }), theme: theme)
            }
        case .retention(.pause)?:
            guard let pause = session.config?.pause else { return nil }
            let now = context.model.serverNow
            let options = pause.orderedOptions.map { option in
                option.label + " \u{2014} resumes " + Display.date(session.resumeDatePreview(optionId: option.id, now: now))
            }
            return PausePage(title: pause.title, body: pause.body, options: options, ui: ui, theme: theme)
        case .cancelConfirmation? where session.isAppStoreCancellation:
            let steps: [String] = if case .appStore(let steps)? = session.plan?.cancellation { steps } else { [] }
            return AppStoreConfirmationPage(productName: session.productName(session.productId), steps: steps, periodEnd: session.periodEnd, theme: theme)
        case .cancelConfirmation?:
            return ConfirmationPage(periodEnd: session.periodEnd, appleNote: session.plan?.appleNote, ui: ui, theme: theme)
        case .finished?, nil:
            return nil
        }
    }

    private func outcomePage(_ outcome: CancelFlowSession.Outcome, theme: Theme) -> OutcomePage {
        OutcomePage(
            outcome: outcome, appleSide: session.appleSide,
            appleCancellation: session.appleCancellation.map { Display.appStoreCancellation($0, productName: session.productName($0.productId)) },
            appleMessage: session.appleMessage,
            appleNote: session.plan?.billing == .both ? session.plan?.appleNote : nil,
            isRecorded: session.submittedResponse != nil, theme: theme
        )
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
