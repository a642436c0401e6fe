import ArgumentParser
import Foundation
import SaveDeskCommandLine
import SaveDeskTUI
import SaveDeskViewModels

/// `savedesk demo`: the backend (`savedesk-server demo-server`, a child process) on 127.0.0.1 and
/// an ephemeral port, with the demo config and customers in a fresh data directory (or
/// `--data-dir`, kept between runs), and the terminal UI on it over HTTP, with a test-mode
/// operator key. Quitting stops the server; so does a console that dies (the server's stdin closes).
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "The demo: a server with demo customers and the terminal UI, in one command."
    )

    @Option(help: "Keep the demo's data here (server database, outbox); default: a fresh temporary folder.") var dataDir: String?
    @Option(help: "A theme: default, high-contrast, light, mono, or a TOML file.") var theme: String?

    static let operatorKey = "sk_test_savedesk_demo_marco_0001"

    func run() async throws {
        try TerminalSession.requireTerminal()
        let directory = dataDir.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-demo-\(UUID().uuidString.prefix(8))")
        let serverDirectory = directory.appendingPathComponent("server")
        try FileManager.default.createDirectory(at: serverDirectory, withIntermediateDirectories: true)
        let log = TerminalLog.redirect(to: directory.appendingPathComponent("savedesk.log"))
        let server = try ServerBinary.Child(["demo-server", "--data-dir", serverDirectory.path])
        // Seeding a fresh demo (customers, 90 days of history) takes a few seconds.
        guard let address = server.firstLine(timeout: .seconds(120)), let url = URL(string: address), address.hasPrefix("http") else {
            server.stop()
            log.restore()
            throw CLIError(message: "the demo server did not start; its log is \(directory.appendingPathComponent("savedesk.log").path)", code: .failure)
        }
        let code: Int32
        do {
            code = try await TerminalSession.run(
                serverURL: url, key: Self.operatorKey, dataDirectory: directory.appendingPathComponent("console"), theme: theme
            )
        } catch {
            server.stop()
            log.restore()
            throw error
        }
        server.stop()
        log.restore()
        print("The demo's data is in \(directory.path) (savedesk demo --data-dir \(directory.path) picks it up again).")
        if code != 0 { throw ExitCode(code) }
    }
}

/// `savedesk tui`: the terminal UI on a running server.
struct TUICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tui", abstract: "The terminal UI on a running SaveDesk server.")

    @Option(help: "The SaveDesk server URL (env SAVEDESK_SERVER).") var server: String?
    @Option(help: "An operator key, sk_test_… or sk_live_… (env SAVEDESK_KEY).") var key: String?
    @Option(help: "A profile of $XDG_CONFIG_HOME/savedesk/config.toml.") var profile: String?
    @Option(help: "A theme: default, high-contrast, light, mono, or a TOML file.") var theme: String?

    /// Its options by name, for `direct`: the options above, every one of them.
    static let optionNames = ["server", "key", "profile", "theme"]

    /// `savedesk tui` and its options as people type them, read without ArgumentParser (see
    /// `directOptions`); nil for any other command line. Not a `TUICommand`: making one runs
    /// ArgumentParser's option wrappers, which look their types up among the conformances too.
    static func direct(_ arguments: [String]) -> ConsoleStart? {
        guard arguments.first == configuration.commandName,
              let values = directOptions(Array(arguments.dropFirst()), names: optionNames) else { return nil }
        return ConsoleStart(server: values["server"], key: values["key"], profile: values["profile"], theme: values["theme"])
    }

    func run() async throws {
        try await ConsoleStart(server: server, key: key, profile: profile, theme: theme).run()
    }
}

/// `savedesk tui` once its options are read: the console's whole start, on the main thread, which
/// draws the first frame (a nonisolated `async` function such as `run()` starts on the concurrency
/// pool: the console made the pool's threads and waited for them before it drew anything).
struct ConsoleStart {
    var server: String?
    var key: String?
    var profile: String?
    var theme: String?

    @MainActor
    func run() async throws {
        let settings: CLISettings
        do {
            settings = try CLISettings.resolve(server: server, key: key, profile: profile)
            try TerminalSession.requireTerminal()
        } catch {
            FileHandle.standardError.write(Data("error: \(error.message)\n".utf8))
            throw ExitCode(error.code.rawValue)
        }
        let log = TerminalLog.redirect(to: settings.dataDirectory.appendingPathComponent("savedesk.log"))
        let code = try await TerminalSession.run(serverURL: settings.serverURL, key: settings.key, dataDirectory: settings.dataDirectory, theme: theme)
        log.restore()
        if code != 0 { throw ExitCode(code) }
    }
}

enum TerminalSession {
    /// Checked before stderr goes to the log file (`TerminalLog`), so the sentence reaches the
    /// person.
    static func requireTerminal() throws(CLIError) {
        guard isatty(STDOUT_FILENO) == 1, isatty(STDIN_FILENO) == 1 else {
            throw CLIError(message: "the terminal UI needs a terminal; the headless commands (savedesk flow, customers…) work without one", code: .usage)
        }
    }

    @MainActor
    static func run(serverURL: URL, key: String, dataDirectory: URL, theme: String?) async throws -> Int32 {
        let (chosen, problem) = ThemeChoice.resolve(theme)
        if let problem { FileHandle.standardError.write(Data("warning: \(problem)\n".utf8)) }
        let model = try AppModel(serverURL: serverURL, key: key, dataDirectory: dataDirectory)
        model.askForFirstPageEarly()
        let runner = TUIRunner(model: model, theme: chosen, problem: problem)
        return await runner.run()
    }
}

/// While curses owns the screen, stderr (and with it every log line) goes to a file.
struct TerminalLog {
    var saved: Int32

    static func redirect(to file: URL) -> TerminalLog {
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let saved = dup(STDERR_FILENO)
        // Logs may name customers: readable by their owner only.
        let descriptor = open(file.path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        if descriptor >= 0 {
            dup2(descriptor, STDERR_FILENO)
            close(descriptor)
        }
        return TerminalLog(saved: saved)
    }

    func restore() {
        guard saved >= 0 else { return }
        dup2(saved, STDERR_FILENO)
        close(saved)
    }
}
