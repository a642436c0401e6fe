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
    private var stored = PageUI(page: nil)

    /// The screen's own state for one page of the flow.
    struct PageUI {
        var page: CancelFlowPage?
        /// The highlighted option of a choice page.
        var highlighted = 0
        /// Focus on the buttons row (nil: on the options or the text field).
        var focusedButton: Int?
        var field = TextFieldState()
        /// Cancel now rather than at period end (kept across pages).
        var cancelNow = false
    }

    init(session: CancelFlowSession, device: DemoDevice? = nil) {
        self.session = session
        self.device = device
    }

    /// The UI state of the page on screen: on a new page, its first choice is focused (or the
    /// answer given before, when coming back).
    private var ui: PageUI {
        let page = session.page
        guard page != stored.page else { return stored }
        var fresh = PageUI(page: page, cancelNow: stored.cancelNow)
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
    private var field: TextFieldState { ui.field }
    private var cancelNow: Bool { ui.cancelNow }

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
        var y = area.y
        switch session.phase {
        case .loading:
            frame.buffer.put("Loading the cancel flow\u{2026}", x: area.x, y: y, style: theme[.muted])
            return
        case .unavailable(let message):
            y += Text.draw(message, in: Rect(x: area.x, y: y, width: area.width, height: 3), style: theme[.danger], into: &frame.buffer) + 1
        case .applying(let label):
            frame.buffer.put(label, x: area.x, y: y, style: theme[.accent])
            frame.buffer.put("The customer's choice is being applied; this takes a moment.", x: area.x, y: y + 2, style: theme[.muted])
            return
        case .failed(let message):
            frame.buffer.put("That did not go through", x: area.x, y: y, style: theme[.danger])
            y += 2
            y += Text.draw(message, in: Rect(x: area.x, y: y, width: area.width, height: 3), style: theme[.text], into: &frame.buffer) + 1
            Text.draw("The customer's choice is kept. Retry, or give up (the flow is recorded with the choice).",
                      in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.muted], into: &frame.buffer)
            y += 3
        case .finished(let outcome):
            y = renderOutcome(outcome, into: &frame, area: area, theme: theme)
        case .inFlow:
            y = renderPage(into: &frame, area: area, context: context)
        }
        let buttons = self.buttons
        if !buttons.isEmpty {
            let row = min(area.maxY - 1, y + 1)
            var x = area.x
            for (index, button) in buttons.enumerated() {
                x += Button.draw(button.label, id: "button.\(index)", x: x, y: row, focused: index == focusedButton, theme: theme, into: &frame) + 2
            }
        }
    }

    private func renderPage(into frame: inout Frame, area: Rect, context: RenderContext) -> Int {
        let theme = context.theme
        var y = area.y
        guard let navigator = session.navigator else { return y }
        let progress = navigator.progress
        let dots = frame.buffer.put(ProgressDots.text(current: progress.step, total: progress.total), x: area.x, y: y, style: theme[.accent])
        frame.buffer.put("  step \(min(progress.step + 1, progress.total)) of \(progress.total)", x: area.x + dots, y: y, style: theme[.muted])
        y += 2
        if let note = session.unavailableNote {
            y += Text.draw("\u{25B2} " + note, in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.warning], into: &frame.buffer) + 1
        }
        switch navigator.page {
        case .question:
            guard let question else { return y }
            let text = question.questionText + (question.isRequired ? " *" : "")
            y += Text.draw(text, in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.title], into: &frame.buffer)
            if question.isRequired {
                frame.buffer.put("* required", x: area.x, y: y, style: theme[.muted])
            } else {
                frame.buffer.put("optional", x: area.x, y: y, style: theme[.muted])
            }
            y += 2
            if isFreeText {
                let rect = Rect(x: area.x, y: y, width: min(area.width, 60), height: 1)
                field.draw(in: rect, placeholder: "type the customer's words", focused: isTyping, theme: theme, into: &frame)
                frame.hit(rect, "field")
                y += 2
            } else {
                let chosen: Int? = {
                    if case .option(let id)? = navigator.selection { return question.options.firstIndex { $0.id == id } }
                    return nil
                }()
                y += RadioList.draw(question.options.map(\.label), chosen: chosen, focused: focusedButton == nil ? highlighted : nil,
                                    in: Rect(x: area.x, y: y, width: area.width, height: area.maxY - y - 2), theme: theme,
                                    hitPrefix: "choice.", into: &frame)
            }
        case .retention(.offer):
            switch session.saveOffer {
            case .switchAndSave(let terms)?: return renderSwitchOffer(terms, y: y, into: &frame, area: area, context: context)
            case .offerCode(let pool)?:
                frame.buffer.put(pool.title, x: area.x, y: y, style: theme[.title])
                y += 2
                y += Text.draw(pool.body, in: Rect(x: area.x, y: y, width: min(area.width, 72), height: 4), style: theme[.text], into: &frame.buffer)
                return y
            case .coupon?, nil: break
            }
            guard let offer = session.config?.offer else { return y }
            frame.buffer.put(offer.title, x: area.x, y: y, style: theme[.title])
            y += 2
            y += Text.draw(offer.body, in: Rect(x: area.x, y: y, width: min(area.width, 72), height: 4), style: theme[.text], into: &frame.buffer) + 1
            if let current = session.currentPrice {
                var x = area.x
                x += frame.buffer.put("Now ", x: x, y: y, style: theme[.muted])
                x += frame.buffer.put(Display.price(current, interval: session.billingInterval), x: x, y: y, style: theme[.text])
                if let offered = session.offerPrice {
                    x += frame.buffer.put("  \u{2192}  with the offer ", x: x, y: y, style: theme[.muted])
                    frame.buffer.put(Display.price(offered, interval: session.billingInterval), x: x, y: y, style: theme[.success].adding(.bold))
                }
                y += 1
            }
        case .retention(.pause):
            guard let pause = session.config?.pause else { return y }
            frame.buffer.put(pause.title, x: area.x, y: y, style: theme[.title])
            y += 2
            y += Text.draw(pause.body, in: Rect(x: area.x, y: y, width: min(area.width, 72), height: 3), style: theme[.text], into: &frame.buffer) + 1
            let now = context.model.serverNow
            let labels = pause.orderedOptions.map { option in
                option.label + " \u{2014} resumes " + Display.date(session.resumeDatePreview(optionId: option.id, now: now))
            }
            y += RadioList.draw(labels, chosen: highlighted, focused: focusedButton == nil ? highlighted : nil,
                                in: Rect(x: area.x, y: y, width: area.width, height: area.maxY - y - 2), theme: theme,
                                hitPrefix: "choice.", into: &frame)
        case .cancelConfirmation where session.isAppStoreCancellation:
            let name = session.productName(session.productId)
            frame.buffer.put("Cancelling is the customer's own step", x: area.x, y: y, style: theme[.title])
            y += 2
            y += Text.draw("\(name) is billed by the App Store: only the customer can cancel it, in Settings. Read out these steps:",
                           in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.text], into: &frame.buffer)
            y += drawSteps(session.plan.map { plan in if case .appStore(let steps) = plan.cancellation { steps } else { [] } } ?? [],
                           y: y, into: &frame, area: area, theme: theme)
            let until = session.periodEnd.map { "Access continues until \(Display.date($0)). " } ?? ""
            y += Text.draw(until + "SaveDesk then waits for Apple to confirm that renewal is off.",
                           in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.muted], into: &frame.buffer)
        case .cancelConfirmation:
            frame.buffer.put("Cancel the subscription?", x: area.x, y: y, style: theme[.title])
            y += 2
            if let note = session.plan?.appleNote {
                y += Text.draw(note, in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.warning], into: &frame.buffer) + 1
            }
            let until = session.periodEnd.map { "access until \(Display.date($0))" } ?? "access until the period ends"
            y += RadioList.draw(["At the end of the period \u{2014} \(until)", "Now \u{2014} access ends today"],
                                chosen: cancelNow ? 1 : 0, focused: focusedButton == nil ? highlighted : nil,
                                in: Rect(x: area.x, y: y, width: area.width, height: 2), theme: theme, hitPrefix: "choice.", into: &frame)
        case .finished:
            break
        }
        return y
    }

    private func renderOutcome(_ outcome: CancelFlowSession.Outcome, into frame: inout Frame, area: Rect, theme: Theme) -> Int {
        var y = area.y
        let side = session.appleSide
        var (headline, style): (String, Style) = switch outcome.outcome {
        case .retained: ("Retained", theme[.success])
        case .paused: ("Paused", theme[.success])
        case .cancelled: ("Cancelled", theme[.warning])
        case .dismissed, .unknown: ("Left without a change", theme[.muted])
        }
        switch side {
        case .switchWaiting?: headline = "Retained \u{00B7} switched to the web \u{00B7} waiting for Apple"
        case .switchCompleted?: headline = "Retained \u{00B7} switched to the web \u{00B7} completed"
        case .cancellationWaiting?: headline = "Cancelled \u{00B7} waiting for Apple"
        case .cancellationConfirmed?: headline = "Cancelled \u{00B7} confirmed by Apple"
        case nil: break
        }
        frame.buffer.put(headline, x: area.x, y: y, style: style.adding(.bold))
        y += 2
        if let cancellation = session.appleCancellation {
            let line = Display.appStoreCancellation(cancellation, productName: session.productName(cancellation.productId))
            y += Text.draw(line, in: Rect(x: area.x, y: y, width: area.width, height: 3), style: theme[.text], into: &frame.buffer)
        } else {
            y += Text.draw(outcome.message, in: Rect(x: area.x, y: y, width: area.width, height: 3), style: theme[.text], into: &frame.buffer)
        }
        if session.plan?.billing == .both, let note = session.plan?.appleNote {
            y += 1
            y += Text.draw(note, in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.warning], into: &frame.buffer)
        }
        if let code = outcome.offerCode {
            frame.buffer.put("Offer code: \(code)", x: area.x, y: y, style: theme[.success].adding(.bold))
            y += 1
        }
        let showSteps = !outcome.customerSteps.isEmpty && side != .switchCompleted && !(side.map { if case .cancellationConfirmed = $0 { true } else { false } } ?? false)
        if showSteps {
            y += 1
            let intro = side == .switchWaiting ? "Read these steps to turn off Apple billing:" : "Read these steps to the customer:"
            frame.buffer.put(intro, x: area.x, y: y, style: theme[.title])
            y += 1
            y += drawSteps(outcome.customerSteps, y: y, into: &frame, area: area, theme: theme)
        }
        switch side {
        case .switchWaiting?, .cancellationWaiting?:
            y += 1
            if let message = session.appleMessage {
                y += Text.draw(message, in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.warning], into: &frame.buffer)
            }
            y += Text.draw("Waiting for Apple: it confirms once the customer has turned off renewal. Check again, or come back later: the customer screen keeps it.",
                           in: Rect(x: area.x, y: y, width: area.width, height: 3), style: theme[.muted], into: &frame.buffer)
        case .switchCompleted?:
            y += 1
            y += Text.draw("Apple billing is off: the customer is billed on the web only, with no double charge.",
                           in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.success], into: &frame.buffer)
        case .cancellationConfirmed?, nil: break
        }
        y += 1
        frame.buffer.put(session.submittedResponse != nil ? "The flow is recorded." : "", x: area.x, y: y, style: theme[.muted])
        return y + 1
    }

    /// Switch and save as the save offer: the campaign's words, the price now and with the
    /// discount, the days bridged; then the checkout while the customer pays.
    private func renderSwitchOffer(
        _ terms: CancelFlowSwitchTerms, y start: Int, into frame: inout Frame, area: Rect, context: RenderContext
    ) -> Int {
        let theme = context.theme
        var y = start
        let width = min(area.width, 76)
        frame.buffer.put(terms.title, x: area.x, y: y, style: theme[.title])
        y += 2
        y += Text.draw(terms.message, in: Rect(x: area.x, y: y, width: width, height: 3), style: theme[.text], into: &frame.buffer) + 1
        if let priceLine = terms.priceLine {
            y += Text.draw("\(terms.productName): \(priceLine)", in: Rect(x: area.x, y: y, width: width, height: 2),
                           style: theme[.success].adding(.bold), into: &frame.buffer)
        }
        y += Text.draw(terms.bridgeLine, in: Rect(x: area.x, y: y, width: width, height: 2), style: theme[.text], into: &frame.buffer)
        if session.isAwaitingSwitchPayment, let checkout = session.switchAndSave?.checkout {
            y += 1
            frame.buffer.put("Checkout for the customer:", x: area.x, y: y, style: theme[.title])
            y += 1
            y += Text.draw(checkout.checkoutUrl, in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.accent], into: &frame.buffer)
            frame.buffer.put("\(Spinner.text(context.tick))  Waiting for the customer to pay\u{2026}", x: area.x, y: y, style: theme[.muted])
            y += 1
        }
        if let message = session.appleMessage, session.page == .retention(.offer) {
            y += Text.draw(message, in: Rect(x: area.x, y: y, width: area.width, height: 2), style: theme[.danger], into: &frame.buffer)
        }
        return y
    }

    /// Numbered steps, wrapped; returns the rows used.
    private func drawSteps(_ steps: [String], y start: Int, into frame: inout Frame, area: Rect, theme: Theme) -> Int {
        var y = start
        for (index, step) in steps.enumerated() where y < area.maxY - 2 {
            y += Text.draw("\(index + 1). \(step)", in: Rect(x: area.x + 2, y: y, width: area.width - 2, height: 2), style: theme[.text], into: &frame.buffer)
        }
        return y - start
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
