import ArgumentParser
import Foundation
import RetentionDomain

/// `savedesk clock advance`: moves a test server's clock and runs what falls due (test keys only).
struct ClockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clock", abstract: "The test clock of a server run with --test-clock.", subcommands: [Advance.self]
    )

    struct Advance: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "advance", abstract: "Move time forward; renewals, trial ends and expiries happen.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Days to move forward.") var days = 0
        @Option(help: "Hours to move forward.") var hours = 0

        func validate() throws {
            guard days >= 0, hours >= 0, days + hours > 0 else { throw ValidationError("move forward by at least one hour: --days N or --hours N") }
        }

        func run() async throws {
            let (global, days, hours) = (global, days, hours)
            try await Console.run(global) { app, output in
                let result = try await app.client.advanceClock(days: days, hours: hours)
                output.document(result)
                output.line("Now \(WireFormat.formatDate(result.now))")
                output.table(["CUSTOMER", "SUBSCRIPTION", "WHAT HAPPENED"], result.transitions.flatMap { transition in
                    transition.steps.map { [transition.customerId, transition.subscriptionId, $0] }
                })
            }
        }
    }
}
