import Foundation
import SaveDeskCommandLine
import Testing

/// `savedesk tui` as people type it is read without ArgumentParser (its start is timed); anything
/// else about it still goes through ArgumentParser, which answers as it always has.
@Suite("The console's command line")
struct ConsoleCommandLineTests {
    static let names = ["server", "key", "profile", "theme"]

    @Test func theOptionsAsTypedAreReadDirectly() {
        #expect(directOptions([String](), names: Self.names) == [:])
        #expect(directOptions(["--server", "http://127.0.0.1:8080", "--key=sk_test_1"], names: Self.names)
            == ["server": "http://127.0.0.1:8080", "key": "sk_test_1"])
        #expect(directOptions(["--theme=", "--profile", "a=b"], names: Self.names) == ["theme": "", "profile": "a=b"])
    }

    @Test func anythingElseIsLeftToArgumentParser() {
        for arguments in [
            ["--help"], ["-h"], ["--server"], ["--server", "a", "--server", "b"], ["--server=a", "--server", "b"], ["--bogus", "x"],
            ["--bogus=x"], ["positional"], ["--key", "-x"], ["--key", "--server"], ["-k", "x"], ["--", "x"],
        ] {
            #expect(directOptions(arguments, names: Self.names) == nil, "\(arguments)")
        }
    }

    /// The names the direct reading knows are every option `savedesk tui` has: a new option must
    /// be added to `TUICommand.optionNames` and `TUICommand.direct` too.
    @Test func theConsoleHasNoOptionTheDirectReadingMisses() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let help = try await server.run(["tui", "--help"])
        #expect(help.status == 0)
        let listed = Set(help.stdout.matches(of: try Regex(#"--[a-z][a-z-]*"#)).map { String(help.stdout[$0.range].dropFirst(2)) })
        // --help and the root's --version are ArgumentParser's to answer (the direct reading leaves them).
        #expect(listed == Set(Self.names + ["help", "version"]), "\(help.stdout)")
        #expect(directOptions(["--version"], names: Self.names) == nil)
        // Both readings reach the same command: a profile that is not there, given either way.
        for arguments in [["tui", "--profile", "nope"], ["tui", "--profile=nope"], ["tui", "--theme", "mono", "--profile", "nope", "--theme", "mono"]] {
            let result = try await server.run(arguments)
            #expect(result.status == 2 && result.stderr.contains(#"no profile "nope""#), "\(arguments): \(result.stderr)")
        }
        let unknown = try await server.run(["tui", "--bogus"])
        #expect(unknown.status == 2 && unknown.stderr.contains("--bogus"), "\(unknown.stderr)")
    }

    /// Without a terminal the console says so on stderr (before stderr goes to its log file) and
    /// exits 2, a usage error.
    @Test func theConsoleWithoutATerminalSaysSo() async throws {
        let server = try await CommandRunner.start()
        defer { Task { await server.stop() } }
        let result = try await server.run(["tui"])
        #expect(result.status == 2 && result.stderr.contains("the terminal UI needs a terminal"), "\(result.status): \(result.stderr)")
    }
}
