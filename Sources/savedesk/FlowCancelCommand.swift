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
        Exactly one ending: --accept-offer, --pause-days N, --pause-option ID, or --cancel [--immediate] for a web
        subscription; --switch [--pay] [--apple-cancelled], --offer-code, or --cancel [--apple-cancelled] for one
        billed by the App Store (its save offer is switch and save, or an App Store offer code; Apple has no pause).
        """
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "The customer id.") var user: String
    @Option(help: "The product of the subscription.") var product: String
    @Option(name: .customLong("answer"), help: "QID=OPTION_ID or QID=\"free text\"; repeat for each question.") var answers: [String] = []
    @Flag(help: "The customer accepts the save offer (a coupon on a web subscription).") var acceptOffer = false
    @Flag(name: .customLong("switch"), help: "App Store billing: the customer takes switch and save (a web checkout).") var switchAndSave = false
    @Flag(help: "App Store billing: the customer takes an App Store offer code.") var offerCode = false
    @Flag(help: "Test mode, with --switch: the customer pays the web checkout.") var pay = false
    @Flag(help: "Test mode, with --switch or an App Store --cancel: the customer turns off Apple auto-renew.") var appleCancelled = false
    @Option(help: "The customer pauses for this many days.") var pauseDays: Int?
    @Option(help: "The customer pauses by one of the config's pause options.") var pauseOption: Int?
    @Flag(name: .customLong("cancel"), help: "The customer cancels (at period end unless --immediate).") var cancelSubscription = false
    @Flag(help: "With --cancel: access ends now.") var immediate = false
    @Flag(help: "Check the answers and the path against the live config; change nothing, record nothing.") var dryRun = false

    func validate() throws {
        let endings = [acceptOffer, switchAndSave, offerCode, pauseDays != nil, pauseOption != nil, cancelSubscription].filter { $0 }.count
        guard endings == 1 else {
            throw ValidationError(
                "choose exactly one ending: --accept-offer, --switch, --offer-code, --pause-days N, --pause-option ID or --cancel")
        }
        if immediate, !cancelSubscription { throw ValidationError("--immediate goes with --cancel") }
        if pay, !switchAndSave { throw ValidationError("--pay goes with --switch") }
        if appleCancelled, !(switchAndSave || cancelSubscription) { throw ValidationError("--apple-cancelled goes with --switch or --cancel") }
    }

    var ending: CancelFlowScript.Ending {
        if acceptOffer { return .acceptOffer }
        if switchAndSave { return .switchAndSave }
        if offerCode { return .offerCode }
        if let pauseDays { return .pauseDays(pauseDays) }
        if let pauseOption { return .pauseOption(pauseOption) }
        return .cancel(immediately: immediate)
    }

    func run() async throws {
        let (global, user, product, answers, ending, dryRun) = (global, user, product, answers, ending, dryRun)
        let customer = CancelFlowScript.CustomerPart(pays: pay, turnsOffApple: appleCancelled)
        try await Console.run(global) { app, output in
            // The simulators never touch live data: a live key cannot play the customer's part.
            if customer.pays || customer.turnsOffApple, try CLISettings.resolve(global).key.contains("_live_") {
                throw CLIError(message: "--pay and --apple-cancelled play the customer's part with the simulators; they need a test-mode key (sk_test_…)", code: .auth)
            }
            if case .cancel(immediately: true) = ending, !dryRun {
                try Console.confirm("Cancel \(user)'s \(product) now? Access ends immediately.", global)
            }
            let script = CancelFlowScript(user: user, product: product, rawAnswers: answers, ending: ending, dryRun: dryRun, customer: customer)
            let report = try await script.run(app)
            output.document(report)
            report.print(to: output)
            if report.failed { throw CLIError(message: report.message, code: report.exitCode) }
        }
    }
}
