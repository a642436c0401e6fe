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
    /// The highlighted option of a choice page.
    private var highlighted = 0
    /// Focus on the buttons row (nil: on the options or the text field).
    private var focusedButton: Int?
    private var field = TextFieldState()
    private var fieldPage: CancelFlowPage?
    private var cancelNow = false
    private var lastPage: CancelFlowPage?

    init(session: CancelFlowSession, device: DemoDevice? = nil) {
        self.session = session
        self.device = device
    }

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

    var keys: [KeyHelp] {
        var keys = [KeyHelp("\u{2191}\u{2193} 1–9", "choose"), KeyHelp("Enter", "continue / the focused button"), KeyHelp("Tab", "to the buttons"),
                    KeyHelp("Esc", "back a step (leaves the flow from the first question)"), KeyHelp("y n", "accept / decline an offer"),
                    KeyHelp("g", "check Apple's side again (after the flow)")]
        if device != nil {
            keys += [KeyHelp("p", "simulate the customer paying the checkout (test mode)"),
                     KeyHelp("o", "simulate Apple auto-renew off (test mode)")]
        }
        return keys
    }

    func appear(app: TUIApp) { app.perform { await self.session.load() } }

    /// Leaving before the end records the flow as dismissed (with the answers so far).
    func leave(app: TUIApp) {
        if session.submittedResponse == nil, session.navigator != nil {
            app.perform { await self.session.abandon() }
        }
    }

    // MARK: Buttons of each page

    private enum Action {
        case proceed, back, skipAndCancel, acceptOffer, declineOffer, pause, declinePause, confirm, retry, giveUp, done, reload
        case switchPaid, simulatePayment, checkApple, simulateAppleOff
    }

    private var buttons: [(label: String, action: Action)] {
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

    func handle(_ key: KeyEvent, app: TUIApp) -> Bool {
        syncPageState()
        if isTyping {
            switch key {
            case .enter: run(.proceed, app: app)
            case .tab: focusedButton = 0
            case .escape: run(.back, app: app)
            case .up: focusedButton = nil
            default:
                guard field.handle(key) else { return false }
                try? session.setFreeText(field.text)
            }
            return true
        }
        let buttons = self.buttons
        switch key {
        case .tab:
            guard !buttons.isEmpty else { return false }
            focusedButton = focusedButton.map { $0 + 1 < buttons.count ? $0 + 1 : (choiceCount > 0 || isFreeText ? nil : 0) } ?? 0
        case .backTab:
            focusedButton = focusedButton.map { $0 > 0 ? $0 - 1 : nil } ?? (buttons.isEmpty ? nil : buttons.count - 1)
        case .left where focusedButton != nil: focusedButton = max(0, focusedButton! - 1)
        case .right where focusedButton != nil: focusedButton = min(buttons.count - 1, focusedButton! + 1)
        case .up, .character("k"):
            if focusedButton != nil, choiceCount > 0 || isFreeText { focusedButton = nil } else { choose(highlighted - 1) }
        case .down, .character("j"):
            if focusedButton == nil, highlighted + 1 >= choiceCount || isFreeText { focusedButton = buttons.isEmpty ? nil : 0 } else { choose(highlighted + 1) }
        case .character(" "): choose(highlighted)
        case .enter:
            if let index = focusedButton, buttons.indices.contains(index) { run(buttons[index].action, app: app) } else { run(buttons.first?.action, app: app) }
        case .character("y") where session.page == .retention(.offer) && !session.isAwaitingSwitchPayment: run(.acceptOffer, app: app)
        case .character("n") where session.page == .retention(.offer): run(.declineOffer, app: app)
        case .character("p") where device != nil && session.isAwaitingSwitchPayment: run(.simulatePayment, app: app)
        case .character("o") where device != nil && session.appleSide?.isWaiting == true: run(.simulateAppleOff, app: app)
        case .character("g") where session.appleSide != nil: run(.checkApple, app: app)
        case .character("n") where session.page == .retention(.pause): run(.declinePause, app: app)
        case .escape, .backspace:
            if case .finished = session.phase { return false }
            if case .inFlow = session.phase, session.navigator?.canGoBack == true { run(.back, app: app) } else { return false }
        case let key where key.digit != nil:
            let index = key.digit! - 1
            guard index >= 0, index < choiceCount else { return true }
            choose(index)
        default: return false
        }
        return true
    }

    func click(_ id: String, app: TUIApp) {
        syncPageState()
        if id.hasPrefix("choice."), let index = Int(id.dropFirst(7)) {
            focusedButton = nil
            choose(index)
        } else if id.hasPrefix("button."), let index = Int(id.dropFirst(7)), buttons.indices.contains(index) {
            focusedButton = index
            run(buttons[index].action, app: app)
        } else if id == "field" {
            focusedButton = nil
        }
    }

    /// Highlights a choice and selects it (radio behaviour).
    private func choose(_ index: Int) {
        guard choiceCount > 0 else { return }
        highlighted = min(max(0, index), choiceCount - 1)
        if case .question? = session.page, let option = question?.options[highlighted] { try? session.select(optionId: option.id) }
        if session.page == .cancelConfirmation { cancelNow = highlighted == 1 }
    }

    private func run(_ action: Action?, app: TUIApp) {
        guard let action else { return }
        do {
            switch action {
            case .proceed: try session.proceed()
            case .back:
                if !session.back() { app.back() }
            case .skipAndCancel: app.perform { try? await self.session.skipAndCancel() }
            case .acceptOffer: app.perform { try? await self.session.acceptOffer() }
            case .declineOffer: try session.declineOffer()
            case .pause:
                guard let option = session.config?.pause?.orderedOptions[safe: highlighted] else { return }
                let now = app.model.serverNow
                app.perform { try? await self.session.choosePause(optionId: option.id, now: now) }
            case .declinePause: try session.declinePause()
            case .confirm:
                let now = cancelNow
                app.perform { try? await self.session.confirmCancel(immediately: now) }
            case .retry: app.perform { await self.session.retry() }
            case .giveUp: app.perform { await self.session.giveUp() }
            case .done: app.back()
            case .reload: app.perform { await self.session.load() }
            case .switchPaid: app.perform { await self.session.confirmSwitchPayment() }
            case .simulatePayment:
                guard let device, let checkout = session.switchAndSave?.checkout else { return }
                app.perform {
                    await device.completeCheckout(transactionId: checkout.transactionId, paid: true)
                    await self.session.confirmSwitchPayment()
                }
            case .checkApple: app.perform { await self.session.checkApple() }
            case .simulateAppleOff:
                guard let device else { return }
                let session = self.session
                app.perform {
                    await device.appStoreEvent(.autoRenewOff, customerId: session.userId)
                    await session.checkApple()
                }
            }
            syncPageState()
        } catch {
            app.model.show(error.description, isError: true)
        }
    }

    /// On a new page: focus its first choice (or the answer given before, when coming back).
    private func syncPageState() {
        let page = session.page
        guard page != lastPage else { return }
        lastPage = page
        focusedButton = nil
        highlighted = 0
        switch page {
        case .question?:
            if case .option(let id)? = session.navigator?.selection, let index = question?.options.firstIndex(where: { $0.id == id }) {
                highlighted = index
            }
            if isFreeText {
                if case .freeText(let text)? = session.navigator?.selection { field.set(text) } else { field.set("") }
                fieldPage = page
            }
        case .cancelConfirmation?: highlighted = cancelNow ? 1 : 0
        default: break
        }
    }

    // MARK: Rendering

    func render(into frame: inout Frame, area: Rect, context: RenderContext) {
        syncPageState()
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
