import ArgumentParser
import Foundation
import Logging
import SaveDeskServer

/// `savedesk-server import customers FILE --db …`: a company's subscribers into the store.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import", abstract: "Bring existing data into the store.", subcommands: [Customers.self]
    )

    struct Customers: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Customers from CSV (with a header) or JSON Lines: id, mode (test|live), name, email, country, app_account_token, billing_customer_id, app_store_original_transaction_ids.",
            discussion: """
            An upsert by id: a re-run changes nothing. The whole file is checked first; any problem \
            (line, field, why) is reported and nothing is written. Rows are then written 1,000 to a \
            transaction. In CSV, original transaction ids are separated by ";" or spaces; in JSON \
            Lines they are a list. Exit status: 0 imported, 1 problems found (nothing written).
            """
        )

        @Argument(help: "The file (.csv, or .jsonl / .ndjson).") var file: String
        @Option(help: "The database: a SQLite file or a postgres:// URL (as serve takes it).") var db: String
        @Flag(help: "Check the file and count what would change; write nothing.") var dryRun = false

        func run() async throws {
            ServerLogging.bootstrap(level: .warning)
            guard FileManager.default.isReadableFile(atPath: file) else {
                FileHandleOutput.standardError("\(file): cannot be read\n")
                throw ExitCode(2)
            }
            let bar = ProgressBar(enabled: isatty(STDERR_FILENO) == 1)
            let started = ContinuousClock.now
            let report = try await CustomerImport.run(file: file, databasePath: db, dryRun: dryRun) { progress in bar.show(progress) }
            bar.finish()
            let seconds = ContinuousClock.now - started
            let name = URL(fileURLWithPath: file).lastPathComponent
            guard report.succeeded else {
                for problem in report.problems { FileHandleOutput.standardError("\(name): \(problem)\n") }
                if report.moreProblems > 0 { FileHandleOutput.standardError("\(name): … and \(report.moreProblems) more problems\n") }
                FileHandleOutput.standardError("\(name): \(report.problems.count + report.moreProblems) problem(s) in \(report.rows) rows; nothing was written\n")
                throw ExitCode(1)
            }
            let verb = dryRun ? "would be" : "were"
            print("\(name): \(report.rows) rows: \(report.created) customers \(verb) created, \(report.updated) updated, \(report.unchanged) unchanged"
                  + (dryRun ? " (dry run: nothing written)" : "") + String(format: " in %.1f s", Double(seconds.components.seconds) + Double(seconds.components.attoseconds) / 1e18))
        }
    }
}

/// A one-line progress bar on standard error while a long import runs (a terminal only).
final class ProgressBar: @unchecked Sendable {
    private let enabled: Bool
    private let lock = NSLock()
    private var last = ContinuousClock.now - .seconds(1)
    private var shown = false

    init(enabled: Bool) { self.enabled = enabled }

    func show(_ progress: CustomerImport.Progress) {
        guard enabled else { return }
        lock.withLock {
            guard ContinuousClock.now - last >= .milliseconds(200) else { return }
            last = .now
            let fraction = progress.totalBytes > 0 ? min(1, Double(progress.bytesRead) / Double(progress.totalBytes)) : 0
            let width = 30, filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            FileHandleOutput.standardError("\r\(progress.phase.rawValue) [\(bar)] \(Int(fraction * 100))% \(progress.rows) rows ")
            shown = true
        }
    }

    func finish() {
        guard enabled else { return }
        lock.withLock { if shown { FileHandleOutput.standardError("\r\u{1b}[K") } }
    }
}
