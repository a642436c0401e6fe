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
        case pauseDays(Int)
        case pauseOption(Int)
        case cancel(immediately: Bool)

        /// The outcome this ending leads to.
        var outcome: CancelFlow.Outcome {
            switch self {
            case .acceptOffer: .retained
            case .pauseDays, .pauseOption: .paused
            case .cancel: .cancelled
            }
        }
    }

    var user: String
    var product: String
    var rawAnswers: [String]
    var ending: Ending
    var dryRun: Bool

    @MainActor
    func run(_ app: AppModel) async throws -> CancelFlowReport {
        _ = try await app.client.customer(id: user)  // an unknown customer is "not found" before anything else
        let session = app.makeCancelFlow(customerId: user, productId: product)
        await session.load()
        guard let config = session.config else {
            throw session.lastError.map(CLIError.init) ?? CLIError(message: "the cancel flow could not be loaded", code: .failure)
        }
        guard config.enabled else { throw CLIError(message: "the cancel flow is disabled in this server's config", code: .failure) }
        var report = CancelFlowReport(userId: user, productId: product, variantId: config.variantId, dryRun: dryRun)
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
        try checkTriggers(chosen)
        try await walkRetention(session, config: config, report: &report)
        guard !dryRun else {
            report.outcome = ending.outcome.wireValue
            report.message = "dry run: the answers and the path are valid; nothing was changed and no response was recorded"
            return report
        }
        switch ending {
        case .acceptOffer: try await session.acceptOffer()
        case .pauseDays(let days): try await session.choosePause(days: days)
        case .pauseOption(let id): try await session.choosePause(optionId: id)
        case .cancel(let immediately): try await session.confirmCancel(immediately: immediately)
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
    /// contradicts the ending asked for.
    func checkTriggers(_ chosen: [(question: CancelFlow.Question, option: CancelFlow.Option)]) throws(CLIError) {
        for (question, option) in chosen {
            switch ending {
            case .acceptOffer where option.triggersPause:
                throw .usage("option \(option.id) of question \(question.id) (\(option.label)) leads to the pause, not the save offer")
            case .pauseDays, .pauseOption:
                if option.triggersOffer {
                    throw .usage("option \(option.id) of question \(question.id) (\(option.label)) leads to the save offer, not the pause")
                }
            default: break
            }
        }
    }

    /// Declines what comes before the ending; errors when the ending is not on this config's path.
    @MainActor
    func walkRetention(_ session: CancelFlowSession, config: CancelFlow.Config, report: inout CancelFlowReport) async throws {
        while true {
            switch (session.page, ending) {
            case (.retention(.offer)?, .acceptOffer):
                report.steps.append(.init(page: "save_offer", question: config.offer?.title, action: "accepted"))
                return
            case (.retention(.pause)?, .pauseDays), (.retention(.pause)?, .pauseOption):
                if case .pauseOption(let id) = ending, config.pause?.options.contains(where: { $0.id == id }) != true {
                    let options = (config.pause?.orderedOptions ?? []).map { "\($0.id) \($0.label)" }.joined(separator: ", ")
                    throw CLIError.usage("no pause option \(id) (options: \(options))")
                }
                report.steps.append(.init(page: "pause", question: config.pause?.title, action: "accepted"))
                return
            case (.retention(.offer)?, _):
                report.steps.append(.init(page: "save_offer", question: config.offer?.title, action: "declined"))
                try session.declineOffer()
            case (.retention(.pause)?, _):
                report.steps.append(.init(page: "pause", question: config.pause?.title, action: "declined"))
                try session.declinePause()
            case (.cancelConfirmation?, .cancel(let immediately)):
                report.steps.append(.init(page: "cancel_confirmation", action: immediately ? "cancel_now" : "cancel_at_period_end"))
                return
            default:
                let wanted = ending == .acceptOffer ? "a save offer" : "a pause"
                throw CLIError.usage("this cancel flow has no \(wanted) (\(config.variantId.map { "variant \($0)" } ?? "no variant")); choose another ending")
            }
        }
    }

    static func choices(_ question: CancelFlow.Question) -> String {
        question.options.isEmpty ? "" : " (options: " + question.options.map { "\($0.id) \($0.label)" }.joined(separator: ", ") + ")"
    }
}
