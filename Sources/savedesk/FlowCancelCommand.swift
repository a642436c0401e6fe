import ArgumentParser
import Foundation
import RetentionDomain
import SaveDeskViewModels

/// `savedesk flow cancel`: answers the questionnaire, then accepts the save offer, pauses, or
/// cancels. Answers are checked against the live config before anything changes; the cancel-flow
/// response is always recorded at the end (not with `--dry-run`).
struct FlowCancelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Walk a customer through the cancel flow.",
        discussion: """
        Answers are QID=OPTION_ID for single-choice questions and QID="free text" for free-text ones.
        Exactly one ending: --accept-offer, --pause-days N, --pause-option ID, or --cancel [--immediate].
        """
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "The customer id.") var user: String
    @Option(help: "The product of the subscription.") var product: String
    @Option(name: .customLong("answer"), help: "QID=OPTION_ID or QID=\"free text\"; repeat for each question.") var answers: [String] = []
    @Flag(help: "The customer accepts the save offer.") var acceptOffer = false
    @Option(help: "The customer pauses for this many days.") var pauseDays: Int?
    @Option(help: "The customer pauses by one of the config's pause options.") var pauseOption: Int?
    @Flag(name: .customLong("cancel"), help: "The customer cancels (at period end unless --immediate).") var cancelSubscription = false
    @Flag(help: "With --cancel: access ends now.") var immediate = false
    @Flag(help: "Check the answers and the path against the live config; change nothing, record nothing.") var dryRun = false

    func validate() throws {
        let endings = [acceptOffer, pauseDays != nil, pauseOption != nil, cancelSubscription].filter { $0 }.count
        guard endings == 1 else {
            throw ValidationError("choose exactly one ending: --accept-offer, --pause-days N, --pause-option ID or --cancel")
        }
        if immediate, !cancelSubscription { throw ValidationError("--immediate goes with --cancel") }
    }

    var ending: CancelFlowScript.Ending {
        if acceptOffer { return .acceptOffer }
        if let pauseDays { return .pauseDays(pauseDays) }
        if let pauseOption { return .pauseOption(pauseOption) }
        return .cancel(immediately: immediate)
    }

    func run() async throws {
        let (global, user, product, answers, ending, dryRun) = (global, user, product, answers, ending, dryRun)
        try await Console.run(global) { app, output in
            if case .cancel(immediately: true) = ending, !dryRun {
                try Console.confirm("Cancel \(user)'s \(product) now? Access ends immediately.", global)
            }
            let script = CancelFlowScript(user: user, product: product, rawAnswers: answers, ending: ending, dryRun: dryRun)
            let report = try await script.run(app)
            output.document(report)
            report.print(to: output)
            if report.failed { throw CLIError(message: report.message, code: report.exitCode) }
        }
    }
}
