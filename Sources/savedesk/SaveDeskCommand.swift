import ArgumentParser
import RetentionDomain
import SaveDeskClient
import SaveDeskServer
import SaveDeskTUI
import SaveDeskViewModels

/// The `savedesk` command. Subcommands (`serve`, `config`, `demo`, `tui`, `flow`, …) are added by
/// the issues that build them; until then the command only describes itself.
@main
struct SaveDeskCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "savedesk",
        abstract: "Walk a subscriber through a cancel or switch-and-save flow, from the terminal.",
        version: "0.1.0"
    )
}
