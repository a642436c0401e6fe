import ArgumentParser

/// `savedesk flow cancel|switch`: a whole flow from the command line, through the same navigator,
/// view models and client as the terminal UI.
struct FlowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flow", abstract: "Run a cancel or switch-and-save flow without a terminal UI.",
        subcommands: [FlowCancelCommand.self, FlowSwitchCommand.self]
    )
}
