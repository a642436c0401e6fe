import Foundation
import TestSupport
import Testing

/// `savedesk-bench`'s command line: `--help` answers at once and runs no part of the bench, and an
/// option it does not know (or one missing its value), a number out of its range or not a number,
/// and a part `--only` does not know are refused before anything starts.
@Suite struct BenchCommandLineTests {
    static let binary = Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("savedesk-bench")

    /// Runs the bench with `arguments`; nil when it still runs after a minute (it went on to
    /// measure: it is stopped).
    func run(_ arguments: [String]) async throws -> CommandRunner.Result? {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-bench-cli-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let out = directory.appendingPathComponent("out"), err = directory.appendingPathComponent("err")
        let child = try ChildProcess.spawn(
            Self.binary.path, arguments, environment: ["SWIFT_BACKTRACE": "interactive=no", "TMPDIR": directory.path],
            stdout: out.path, stderr: err.path
        )
        guard let status = await child.wait(timeout: .seconds(60)) else {
            child.signal(SIGKILL)
            _ = await child.wait()
            return nil
        }
        return .init(status: status, stdout: try String(contentsOf: out, encoding: .utf8), stderr: try String(contentsOf: err, encoding: .utf8))
    }

    @Test func helpListsTheOptionsAndRunsNothing() async throws {
        let help = try #require(try await run(["--help"]), "--help went on to run the bench")
        #expect(help.status == 0)
        for option in ["--seconds", "--runs", "--concurrency", "--only", "--tui-only", "--textual-python", "--bubbletea", "--tui-rs"] {
            #expect(help.stdout.contains(option), "the help does not list \(option)")
        }
        #expect(help.stdout.contains("http,writes,search,events,retention,hostile,funnel,tui"))
        #expect(!help.stdout.contains("SaveDesk bench ·"), "a run's header was printed")
    }

    @Test(arguments: [["--second", "5"], ["--runs"], ["--only", "http", "--tui_only"]])
    func anUnknownOptionOrAMissingValueIsRefusedBeforeAnythingRuns(_ arguments: [String]) async throws {
        let refused = try #require(try await run(arguments), "\(arguments) went on to run the bench")
        #expect(refused.status == 2)
        let option = arguments.last { $0.hasPrefix("--") }!
        #expect(refused.stderr.contains("savedesk-bench: \(option) is not an option, or has no value"))
        #expect(refused.stderr.contains("usage: savedesk-bench"))
        #expect(refused.stdout.isEmpty)
    }

    @Test(arguments: [
        (["--seconds", "five"], "--seconds takes a whole number from 1 to 3600, not \"five\""),
        (["--runs", "0"], "--runs takes a whole number from 1 to 1000, not \"0\""),
        (["--only", "http,nope"], "--only: \"nope\" is not a part (http,writes,search,events,retention,hostile,funnel,tui)"),
    ])
    func aValueOutOfItsRangeOrAnUnknownPartIsRefusedBeforeAnythingRuns(_ arguments: [String], problem: String) async throws {
        let refused = try #require(try await run(arguments), "\(arguments) went on to run the bench")
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("savedesk-bench: " + problem))
        #expect(refused.stderr.contains("usage: savedesk-bench"))
        #expect(refused.stdout.isEmpty)
    }
}
