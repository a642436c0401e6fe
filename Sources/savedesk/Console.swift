import ArgumentParser
import Foundation
import SaveDeskClient
import SaveDeskViewModels

/// Runs one headless command: resolves where to connect, builds the same app model the TUI uses,
/// maps every failure to its exit code once, and before exiting delivers what waits in the outbox
/// (from this command or an earlier one); what cannot be delivered stays for the next command.
enum Console {
    @MainActor
    static func run(_ options: GlobalOptions, _ body: @MainActor (AppModel, Output) async throws -> Void) async throws {
        let output = Output(json: options.json)
        do {
            let settings = try CLISettings.resolve(options)
            let app = try AppModel(serverURL: settings.serverURL, key: settings.key, dataDirectory: settings.dataDirectory)
            do {
                try await body(app, output)
            } catch {
                await flush(app, output)
                throw error
            }
            await flush(app, output)
        } catch let error as CLIError {
            output.message("error: \(error.message)")
            throw ExitCode(error.code.rawValue)
        } catch let error as SaveDeskClientError {
            let mapped = CLIError(error)
            output.message("error: \(mapped.message)")
            throw ExitCode(mapped.code.rawValue)
        }
    }

    @MainActor
    static func flush(_ app: AppModel, _ output: Output) async {
        guard let outbox = app.client.outbox else { return }
        if !outbox.pending().isEmpty {
            let report = await outbox.deliver(using: app.client, ignoringBackoff: true)
            if report.remaining > 0 {
                output.message("note: \(report.remaining) recorded call(s) wait in the outbox (\(outbox.directory.path)); the next savedesk command sends them")
            }
        }
        let rejected = outbox.rejectedCount
        if rejected > 0 {
            output.message("note: \(rejected) recorded call(s) could not be delivered; they are kept with the reason in \(outbox.rejectedDirectory.path)")
        }
    }

    /// Asks before something that cannot be undone; `--yes` answers for the person, and
    /// `--no-input` (or no terminal) makes it a usage error instead of a prompt.
    static func confirm(_ question: String, _ options: GlobalOptions) throws(CLIError) {
        if options.yes { return }
        guard !options.noInput, isatty(STDIN_FILENO) == 1 else {
            throw .usage("\(question) Pass --yes to confirm without a prompt.")
        }
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        guard let answer = readLine()?.trimmingCharacters(in: .whitespaces).lowercased(), ["y", "yes"].contains(answer) else {
            throw CLIError(message: "not confirmed; nothing was changed", code: .failure)
        }
    }
}
