import Foundation
import RetentionDomain
import SaveDeskClient
import SaveDeskViewModels

/// The cancel flow driven from arguments: every answer is checked against the live config and
/// walked through `CancelFlowSession` (the navigator the TUI uses) before the one call that
/// changes the subscription.
struct CancelFlowScript {
    enum Ending: Equatable {
        case acceptOffer
        case switchAndSave
        case offerCode
        case pauseDays(Int)
        case pauseOption(Int)
        case cancel(immediately: Bool)

        /// The outcome this ending leads to.
        var outcome: CancelFlow.Outcome {
            switch self {
            case .acceptOffer, .switchAndSave, .offerCode: .retained
            case .pauseDays, .pauseOption: .paused
            case .cancel: .cancelled
            }
        }

        var takesSaveOffer: Bool { self == .acceptOffer || self == .switchAndSave || self == .offerCode }
        var pauses: Bool {
            switch self {
            case .pauseDays, .pauseOption: true
            default: false
            }
        }

        var flag: String {
            switch self {
            case .acceptOffer: "--accept-offer"
            case .switchAndSave: "--switch"
            case .offerCode: "--offer-code"
            case .pauseDays: "--pause-days"
            case .pauseOption: "--pause-option"
            case .cancel: "--cancel"
            }
        }
    }

    /// The customer's part, played with the test-mode simulators.
    struct CustomerPart: Equatable {
        /// Pays the switch's web checkout.
        var pays = false
        /// Turns off Apple's auto-renew (after a switch, or a cancellation read out).
        var turnsOffApple = false
    }

    var user: String
    var product: String
    var rawAnswers: [String]
    var ending: Ending
    var dryRun: Bool
    var customer = CustomerPart()

    @MainActor
    func run(_ app: AppModel) async throws -> CancelFlowReport {
        _ = try await app.client.customer(id: user)  // an unknown customer is "not found" before anything else
        let session = app.makeCancelFlow(customerId: user, productId: product)
        await session.load()
        guard let config = session.config else {
            throw session.lastError.map(CLIError.init) ?? CLIError(message: "the cancel flow could not be loaded", code: .failure)
        }
        guard config.enabled else { throw CLIError(message: "the cancel flow is disabled in this server's config", code: .failure) }
        guard let plan = session.plan else { throw CLIError(message: "the cancel flow could not be planned", code: .failure) }
        var report = CancelFlowReport(userId: user, productId: product, variantId: config.variantId, dryRun: dryRun)
        report.billing = plan.billing.rawValue
        report.saveOffer = plan.saveOffer?.kind
        try checkEnding(plan, session: session)
        let answers = try parse(config)
        var chosen: [(question: CancelFlow.Question, option: CancelFlow.Option)] = []

        // The questions, in the navigator's order (early triggers included).
        var unanswered = answers
        while case .question(let index)? = session.page, let question = session.navigator?.questions[index] {
            var step = CancelFlowReport.Step(page: "question", questionId: question.id, question: question.questionText)
            switch unanswered.removeValue(forKey: question.id) {
            case .option(let id)?:
                try session.select(optionId: id)
                let option = question.options.first { $0.id == id }!
                chosen.append((question, option))
                step.optionId = id
                step.answer = option.label
            case .text(let text)?:
                try session.setFreeText(text)
                step.answer = text
            case nil:
                guard !question.isRequired else {
                    throw CLIError.usage("question \(question.id) (\(question.questionText)) needs an answer: --answer \(question.id)=OPTION_ID"
                        + Self.choices(question))
                }
                step.action = "skipped"
            }
            try session.proceed()
            report.steps.append(step)
        }
        if let (id, _) = unanswered.min(by: { $0.key < $1.key }) {
            let jump = chosen.last { $0.option.triggersOffer || $0.option.triggersPause }
            throw CLIError.usage("question \(id) is not asked on this path" + (jump.map {
                ": option \($0.option.id) of question \($0.question.id) goes straight to the \($0.option.triggersOffer ? "save offer" : "pause")"
            } ?? ""))
        }

        // The retention page, then the ending.
        try checkTriggers(chosen, availability: plan.availability)
        report.note = session.unavailableNote
        try await walkRetention(session, config: config, report: &report)
        guard !dryRun else {
            report.outcome = ending.outcome.wireValue
            report.message = "dry run: the answers and the path are valid; nothing was changed and no response was recorded"
            return report
        }
        switch ending {
        case .acceptOffer, .offerCode: try await session.acceptOffer()
        case .switchAndSave: try await runSwitch(session, app: app, report: &report)
        case .pauseDays(let days): try await session.choosePause(days: days)
        case .pauseOption(let id): try await session.choosePause(optionId: id)
        case .cancel(let immediately): try await session.confirmCancel(immediately: immediately)
        }
        if customer.turnsOffApple, session.appleSide?.isWaiting == true {
            // The customer turns off renewal in Settings; the App Store tells the server, which confirms.
            guard let otid = try await app.client.appStoreOriginalTransactionId(userId: user) else {
                throw CLIError(message: "\(user) has no active App Store subscription to turn off", code: .failure)
            }
            try await app.client.simulateAppStoreEvent(originalTransactionId: otid, event: .autoRenewOff)
            await session.checkApple()
        }
        if case .failed = session.phase {
            let error = session.lastError
            await session.giveUp()
            report.failed = true
            report.exitCode = error.map { CLIError($0).code } ?? .failure
        }
        guard case .finished(let outcome) = session.phase else {
            throw CLIError(message: "the flow did not finish (\(session.phase))", code: .failure)
        }
        report.outcome = outcome.outcome.wireValue
        report.message = outcome.message
        report.pausedUntil = outcome.pausedUntil
        report.accessUntil = outcome.accessUntil
        report.customerSteps = outcome.customerSteps
        report.offerCode = outcome.offerCode
        report.appleState = session.appleSide.map(Self.name)
        if let cancellation = session.appleCancellation {
            report.message = Display.appStoreCancellation(cancellation, productName: session.productName(cancellation.productId))
        }
        report.response = session.submittedResponse
        await Console.flush(app, Output(json: true))
        report.responseRecorded = app.client.outbox?.pending().isEmpty ?? true
        return report
    }

    enum Answer: Equatable {
        case option(Int)
        case text(String)
    }

    /// `QID=OPTION_ID` or `QID=free text`, checked against the config.
    func parse(_ config: CancelFlow.Config) throws(CLIError) -> [Int: Answer] {
        var result: [Int: Answer] = [:]
        let questions = config.orderedQuestions
        for raw in rawAnswers {
            guard let equals = raw.firstIndex(of: "="), let id = Int(raw[..<equals].trimmingCharacters(in: .whitespaces)) else {
                throw .usage("--answer \(raw): expected QID=OPTION_ID or QID=\"free text\"")
            }
            let value = String(raw[raw.index(after: equals)...])
            guard let question = questions.first(where: { $0.id == id }) else {
                throw .usage("no question \(id) in this cancel flow (questions: \(questions.map { String($0.id) }.joined(separator: ", ")))")
            }
            guard result[id] == nil else { throw .usage("question \(id) is answered twice") }
            if question.questionType == .singleSelect {
                guard let option = Int(value.trimmingCharacters(in: .whitespaces)), question.options.contains(where: { $0.id == option }) else {
                    throw .usage("question \(id) has no option \"\(value)\"" + Self.choices(question))
                }
                result[id] = .option(option)
            } else {
                result[id] = .text(value)
            }
        }
        return result
    }

    /// An answer whose option sends the customer to the other part of the retention page
    /// contradicts the ending asked for (a part that cannot be offered leads nowhere).
    func checkTriggers(
        _ chosen: [(question: CancelFlow.Question, option: CancelFlow.Option)], availability: CancelFlow.Navigator.Availability
    ) throws(CLIError) {
        for (question, option) in chosen {
            if ending.takesSaveOffer, option.triggersPause, availability.pause {
                throw .usage("option \(option.id) of question \(question.id) (\(option.label)) leads to the pause, not the save offer")
            }
            if ending.pauses, option.triggersOffer, availability.offer {
                throw .usage("option \(option.id) of question \(question.id) (\(option.label)) leads to the save offer, not the pause")
            }
        }
    }

    /// The ending must be one this customer's billing allows: a coupon and a pause only on the
    /// web; switch and save or an offer code only for App Store billing, when offered.
    @MainActor
    func checkEnding(_ plan: CancelFlow.RetentionPlan, session: CancelFlowSession) throws(CLIError) {
        let name = session.productName(plan.productId)
        let billed = plan.billing == .appStore ? "\(user)'s \(name) is billed by the App Store" : "\(user)'s \(name) is billed on the web"
        let available: String = switch plan.saveOffer {
        case .switchAndSave?: "its save offer is switch and save: use --switch"
        case .offerCode?: "its save offer is an App Store offer code: use --offer-code"
        case .coupon?: "its save offer is the coupon: use --accept-offer"
        case nil: "there is no save offer for it" + (plan.offerNote.map { " (\($0))" } ?? "")
        }
        switch ending {
        case .acceptOffer where plan.billing == .appStore:
            throw .usage("\(billed): a coupon cannot apply to an App Store subscription; \(available)")
        case .switchAndSave, .offerCode:
            let offered = plan.saveOffer?.kind == (ending == .switchAndSave ? "switch_and_save" : "offer_code")
            if !offered { throw .usage("\(ending.flag) does not fit: \(billed), and \(available)") }
        case .pauseDays, .pauseOption:
            if !plan.pauseAvailable, let note = plan.pauseNote { throw .usage("\(note) End with --cancel, or \(available.replacingOccurrences(of: "its save offer is", with: "take"))") }
        case .cancel(immediately: true) where plan.billing == .appStore:
            throw .usage("\(billed): only the customer can cancel it, in Settings, at the period end; drop --immediate")
        case .acceptOffer, .cancel:
            break
        }
        if customer.pays, ending == .switchAndSave, plan.billing != .appStore {
            throw .usage("--pay plays the switch's checkout, and \(billed)")
        }
    }

    /// Switch and save as the ending: the checkout is created; with `--pay` the customer pays (the
    /// simulator) and the flow ends retained, else it ends with the checkout left open.
    @MainActor
    func runSwitch(_ session: CancelFlowSession, app: AppModel, report: inout CancelFlowReport) async throws {
        try await session.acceptOffer()
        guard session.isAwaitingSwitchPayment, let checkout = session.switchAndSave?.checkout else {
            throw CLIError(message: session.appleMessage ?? "the checkout could not be created", code: .failure)
        }
        report.checkoutUrl = checkout.checkoutUrl
        guard customer.pays else {
            // The customer did not pay while the flow was open: it ends without a save, and the
            // checkout stays open (`savedesk flow switch` follows it up).
            try session.declineOffer()
            await session.abandon()
            return
        }
        _ = try await app.client.simulateCheckout(transactionId: checkout.transactionId, outcome: .paid)
        await session.confirmSwitchPayment()
        if case .inFlow = session.phase {
            throw CLIError(message: session.appleMessage ?? "the payment was not confirmed", code: .failure)
        }
    }

    static func name(_ side: CancelFlowSession.AppleSide) -> String {
        switch side {
        case .switchWaiting: "switch_waiting_for_apple"
        case .switchCompleted: "switch_completed"
        case .cancellationWaiting: "waiting_for_apple"
        case .cancellationConfirmed: "confirmed_by_apple"
        }
    }

    /// Declines what comes before the ending; errors when the ending is not on this config's path.
    @MainActor
    func walkRetention(_ session: CancelFlowSession, config: CancelFlow.Config, report: inout CancelFlowReport) async throws {
        while true {
            switch (session.page, ending) {
            case (.retention(.offer)?, .acceptOffer), (.retention(.offer)?, .switchAndSave), (.retention(.offer)?, .offerCode):
                report.steps.append(.init(page: "save_offer", question: Self.offerTitle(session), action: "accepted"))
                return
            case (.retention(.pause)?, .pauseDays), (.retention(.pause)?, .pauseOption):
                if case .pauseOption(let id) = ending, config.pause?.options.contains(where: { $0.id == id }) != true {
                    let options = (config.pause?.orderedOptions ?? []).map { "\($0.id) \($0.label)" }.joined(separator: ", ")
                    throw CLIError.usage("no pause option \(id) (options: \(options))")
                }
                report.steps.append(.init(page: "pause", question: config.pause?.title, action: "accepted"))
                return
            case (.retention(.offer)?, _):
                report.steps.append(.init(page: "save_offer", question: Self.offerTitle(session), action: "declined"))
                try session.declineOffer()
            case (.retention(.pause)?, _):
                report.steps.append(.init(page: "pause", question: config.pause?.title, action: "declined"))
                try session.declinePause()
            case (.cancelConfirmation?, .cancel(let immediately)):
                let action = session.isAppStoreCancellation ? "steps_read_out" : immediately ? "cancel_now" : "cancel_at_period_end"
                report.steps.append(.init(page: "cancel_confirmation", action: action))
                return
            default:
                let wanted = ending.takesSaveOffer ? "a save offer" : "a pause"
                throw CLIError.usage("this cancel flow has no \(wanted) (\(config.variantId.map { "variant \($0)" } ?? "no variant")); choose another ending")
            }
        }
    }

    /// The save offer's title as the page shows it.
    @MainActor
    static func offerTitle(_ session: CancelFlowSession) -> String? {
        switch session.saveOffer {
        case .switchAndSave(let terms)?: terms.title
        case .offerCode(let pool)?: pool.title
        case .coupon(let offer)?: offer.title
        case nil: session.config?.offer?.title
        }
    }

    static func choices(_ question: CancelFlow.Question) -> String {
        question.options.isEmpty ? "" : " (options: " + question.options.map { "\($0.id) \($0.label)" }.joined(separator: ", ") + ")"
    }
}
