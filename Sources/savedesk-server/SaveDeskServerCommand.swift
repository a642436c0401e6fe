import ArgumentParser
import SaveDeskCommandLine
import Foundation

/// The `savedesk-server` command: the backend, its config check, and the demo's backend. It is
/// `savedesk`'s sibling: `savedesk serve` and `savedesk config` run it, and `savedesk demo` starts
/// it as a child process, so the console that draws the terminal never carries the server.
/// Exit codes: 0 ok, 1 error, 2 usage or an invalid config.
@main
struct SaveDeskServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "savedesk-server",
        abstract: "The SaveDesk backend.",
        version: "0.1.0",
        subcommands: [ServeCommand.self, ConfigCommand.self, ImportCommand.self, DemoServerCommand.self]
    )

    /// As ArgumentParser's, except that a usage error exits 2, not 64.
    static func main() async { await runExitingTwoOnUsageError() }
}
