import ArgumentParser
import Foundation

extension AsyncParsableCommand {
    /// Runs the command as ArgumentParser's `main` does, except that a usage error exits 2 (as the
    /// README says for both `savedesk` and `savedesk-server`), not 64.
    public static func runExitingTwoOnUsageError() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}
