import ArgumentParser
import SaveDeskCommandLine
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
            DemoCommand.self, TUICommand.self, ServeCommand.self, ConfigCommand.self, FlowCommand.self, CustomersCommand.self, AnalyticsCommand.self, ClockCommand.self, EventsCommand.self,
        ]
    )

    /// As ArgumentParser's, except that a usage error exits 2, not 64. The main thread serves the
    /// main actor from a loop of its own (`ConsoleMainThread`, which also reads the terminal): an
    /// `async` main would give it to `dispatch_main`, which ends the thread with `pthread_exit`,
    /// whose forced unwind searches the unwind tables (about 0.7 MB of the console's resident
    /// memory, for nothing). `savedesk tui` as people type it
    /// is read directly (its start is timed); every other command line goes through ArgumentParser.
    static func main() {
        SaveDeskClient.useOneNetworkThread()
        Task { @MainActor in
            if let console = TUICommand.direct(Array(CommandLine.arguments.dropFirst())) {
                do { try await console.run() } catch { TUICommand.exit(withError: error) }
            } else {
                await runExitingTwoOnUsageError()
            }
            Foundation.exit(0)
        }
        ConsoleMainThread.run()
    }
}
