import ArgumentParser
import Foundation
import RetentionDomain
import SaveDeskClient
import SaveDeskViewModels

/// `savedesk flow switch`: the switch-and-save flow through `MigrationManager`. Without flags it
/// evaluates the offer and opens a checkout; `--pay` and `--apple-cancelled` play the customer's
/// part with the simulators (test keys only).
struct FlowSwitchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switch", abstract: "Move an App Store subscriber to discounted web billing."
    )

    @OptionGroup var global: GlobalOptions
    @Option(help: "The customer id.") var user: String
    @Flag(help: "Test mode: the customer pays the web checkout.") var pay = false
    @Flag(help: "Test mode: the customer turns off Apple auto-renew.") var appleCancelled = false

    struct Report: Encodable {
        var userId: String
        /// Each state the offer went through, first to last.
        var states: [String]
        var state: String
        var reasons: [IneligibleReason]
        var offer: MigrationOffer.OfferData?
        var checkoutUrl: String?
        var transactionId: String?
        var appleCancelSteps: [String]
        var message: String?
    }

    func run() async throws {
        let (global, user, pay, appleCancelled) = (global, user, pay, appleCancelled)
        try await Console.run(global) { app, output in
            // The simulators never touch live data: a live key cannot play the customer's part.
            if pay || appleCancelled, try CLISettings.resolve(global).key.contains("_live_") {
                throw CLIError(message: "--pay and --apple-cancelled play the customer's part with the simulators; they need a test-mode key (sk_test_…)", code: .auth)
            }
            _ = try await app.client.customer(id: user)
            let manager = app.makeMigrationManager(userId: user)
            var states: [String] = []
            let note = { @MainActor in if states.last != manager.state.rawValue { states.append(manager.state.rawValue) } }
            await manager.refresh()
            if manager.state == .loading, let error = manager.loadError { throw CLIError(message: error, code: .failure) }
            note()
            if manager.state == .eligible {
                guard await manager.startCheckout() != nil else { throw CLIError(message: manager.checkoutError ?? "checkout failed", code: .failure) }
                note()
            }
            if pay, manager.state == .presented, let checkout = manager.checkout {
                _ = try await app.client.simulateCheckout(transactionId: checkout.transactionId, outcome: .paid)
                await manager.markCheckoutSucceeded()
                if let error = manager.checkoutError { throw CLIError(message: error, code: .failure) }
                note()
            }
            if manager.state == .accepted {
                if appleCancelled {
                    let otid = try await app.client.appStoreOriginalTransactionId(userId: user)
                    guard let otid else { throw CLIError(message: "\(user) has no active App Store subscription to turn off", code: .failure) }
                    try await app.client.simulateAppStoreEvent(originalTransactionId: otid, event: .autoRenewOff)
                }
                await manager.showAppleSubscriptionManagement()
                note()
            }
            let report = Report(
                userId: user, states: states, state: manager.state.rawValue, reasons: manager.reasons, offer: manager.offerData,
                checkoutUrl: manager.checkout?.checkoutUrl, transactionId: manager.checkout?.transactionId,
                appleCancelSteps: manager.state == .accepted ? manager.appleCancelSteps : [], message: Self.message(manager, pay: pay)
            )
            output.document(report)
            Self.print(report, to: output)
        }
    }

    @MainActor
    static func message(_ manager: MigrationManager, pay: Bool) -> String? {
        switch manager.state {
        case .presented: "waiting for the customer to pay the checkout" + (pay ? "" : " (--pay plays the customer in test mode)")
        case .accepted: "paid on the web; Apple still renews: read the steps to the customer"
        case .completed: manager.display?.completedBody
        case .dismissed: "the customer dismissed the offer"
        case .ineligible: "not offered"
        case .loading, .eligible: nil
        }
    }

    static func print(_ report: Report, to output: Output) {
        output.line(output.bold("Switch and save for \(report.userId)") + "  " + report.states.joined(separator: " \u{2192} "))
        if let offer = report.offer {
            output.line("  \(offer.prompt.title): \(offer.prompt.discountPercent)% off \(offer.prompt.productId), \(offer.freeTrialDays) days bridged")
        }
        for reason in report.reasons { output.line("  - \(reason.message) " + output.dim("(\(reason.code.wireValue))")) }
        if let url = report.checkoutUrl { output.line("  Checkout: \(url)") }
        for step in report.appleCancelSteps { output.line("  \(step)") }
        if let message = report.message { output.line("State: \(output.bold(report.state)) · \(message)") }
    }
}
