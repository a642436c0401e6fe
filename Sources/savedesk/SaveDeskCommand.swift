import ArgumentParser
import RetentionDomain
import SaveDeskClient
import SaveDeskServer
import SaveDeskTUI
import SaveDeskViewModels

/// The `savedesk` command. `demo`, `tui` and the headless flow commands are added by the issues
/// that build them.
@main
struct SaveDeskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "savedesk",
        abstract: "Walk a subscriber through a cancel or switch-and-save flow, from the terminal.",
        version: "0.1.0",
        subcommands: [ServeCommand.self, ConfigCommand.self]
    )
}
