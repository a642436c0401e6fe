import ArgumentParser
import Foundation
import SaveDeskServer

/// `savedesk config validate FILE`: every problem with its path; exit 2 when there are any.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config", abstract: "Work with config files.", subcommands: [Validate.self]
    )

    struct Validate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Check a config file and report every error.")

        @Argument(help: "The TOML config file.") var file: String
        @Flag(help: "Check it for a server started with --test-clock.") var testClock = false

        func run() async throws {
            do {
                let config = try ConfigReader.load(file: file)
                let problems = config.deploymentIssues(testClock: testClock)
                guard problems.isEmpty else { throw InvalidConfig(file: file, issues: problems) }
                print("\(file): valid (\(config.products.count) products, \(config.cancelFlow.config.questions.count) questions, \(config.apiKeys.count) keys)")
            } catch {
                FileHandleOutput.standardError("\(error)\n")
                throw ExitCode(2)
            }
        }
    }
}
