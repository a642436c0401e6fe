import ArgumentParser
import Foundation
import RetentionDomain
import SaveDeskClient
import SaveDeskTUI
import SaveDeskViewModels

/// The `savedesk` command. Exit codes: 0 ok, 1 error, 2 usage, 4 auth, 5 not found.
@main
struct SaveDeskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "savedesk",
        abstract: "Walk a subscriber through a cancel or switch-and-save flow, from the terminal.",
        version: "0.1.0",
        subcommands: [
            DemoCommand.self, TUICommand.self, ServeCommand.self, ConfigCommand.self, FlowCommand.self, CustomersCommand.self, AnalyticsCommand.self, ClockCommand.self,
        ]
    )

    /// As ArgumentParser's, except that a usage error exits 2 (as the README says), not 64.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
