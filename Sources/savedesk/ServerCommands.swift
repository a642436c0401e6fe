import ArgumentParser

/// `savedesk serve …`: `savedesk-server serve …` (the backend lives in the sibling binary).
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the SaveDesk backend (IAP and Desk APIs, customer portal); savedesk-server serve --help lists its options."
    )

    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []

    func run() throws { throw ServerBinary.become(["serve"] + arguments) }
}

/// `savedesk config …`: `savedesk-server config …`.
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Work with config files (savedesk-server config validate FILE)."
    )

    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []

    func run() throws { throw ServerBinary.become(["config"] + arguments) }
}
