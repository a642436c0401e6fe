import ArgumentParser
import Foundation
import RetentionDomain
import SaveDeskClient

/// `savedesk analytics cancel-flow|switch-and-save|cancel-page`.
struct AnalyticsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics", abstract: "How cancel flows end; the switch-and-save funnel; what Apple's cancel page showed.",
        subcommands: [CancelFlowView.self, SwitchAndSaveView.self, CancelPageView.self]
    )

    /// `--from` and `--to` as dates (YYYY-MM-DD, UTC midnight) or ISO-8601 times.
    struct Range: ParsableArguments {
        @Option(help: "From this date or time (YYYY-MM-DD or ISO-8601).") var from: String?
        @Option(help: "Up to this date or time (exclusive).") var to: String?

        func dates() throws(CLIError) -> (Date?, Date?) {
            func parse(_ text: String?, _ name: String) throws(CLIError) -> Date? {
                guard let text else { return nil }
                if let date = WireFormat.parseDate(text) ?? WireFormat.parseDate(text + "T00:00:00Z") { return date }
                throw .usage("--\(name) \(text): expected YYYY-MM-DD or an ISO-8601 time")
            }
            return (try parse(from, "from"), try parse(to, "to"))
        }
    }

    struct CancelFlowView: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "cancel-flow", abstract: "Outcomes, offer and pause uptake, answers.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var range: Range
        @Option(name: .customLong("operator"), help: "Only flows run by this operator.") var operatorName: String?

        func run() async throws {
            let (global, range, operatorName) = (global, range, operatorName)
            try await Console.run(global) { app, output in
                let (from, to) = try range.dates()
                let report = try await app.client.cancelFlowAnalytics(from: from, to: to, operator: operatorName)
                output.document(report)
                let o = report.outcomes
                output.table(["OUTCOME", "COUNT"], [["retained", "\(o.retained)"], ["paused", "\(o.paused)"], ["cancelled", "\(o.cancelled)"],
                                                    ["dismissed", "\(o.dismissed)"], ["total", "\(o.total)"]])
                output.line("Save rate \(Int((o.saveRate * 100).rounded()))% · offer accepted \(report.offerAccepted)/\(report.offerShown) · pause accepted \(report.pauseAccepted)/\(report.pauseShown)")
                if !report.operators.isEmpty {
                    output.table(["OPERATOR", "TOTAL", "SAVE RATE"], report.operators.map {
                        [$0._operator, "\($0.outcomes.total)", "\(Int(($0.outcomes.saveRate * 100).rounded()))%"]
                    })
                }
            }
        }
    }

    struct SwitchAndSaveView: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "switch-and-save", abstract: "Impressions → conversions → completed.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var range: Range

        func run() async throws {
            let (global, range) = (global, range)
            try await Console.run(global) { app, output in
                let (from, to) = try range.dates()
                let report = try await app.client.switchAndSaveAnalytics(from: from, to: to)
                output.document(report)
                output.table(["VARIANT", "IMPRESSIONS", "CONVERSIONS", "COMPLETED", "RATE"], ([("all", report.funnel)] + report.variants.map {
                    ($0.variantId.isEmpty ? "(none)" : $0.variantId, $0.funnel)
                }).map { [$0.0, "\($0.1.impressions)", "\($0.1.conversions)", "\($0.1.completed)", "\(Int(($0.1.conversionRate * 100).rounded()))%"] })
            }
        }
    }

    struct CancelPageView: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cancel-page", abstract: "What Apple's cancel page showed, and the save rates (the holdout's too)."
        )
        @OptionGroup var global: GlobalOptions
        @OptionGroup var range: Range

        func run() async throws {
            let (global, range) = (global, range)
            try await Console.run(global) { app, output in
                let (from, to) = try range.dates()
                let report = try await app.client.retentionMessageAnalytics(from: from, to: to)
                output.document(report)
                func row(_ label: String, _ figures: Wire.RetentionMessageFigures) -> [String] {
                    [label, "\(figures.shown)", "\(figures.saved)", "\(figures.redeemed)", "\(Int((figures.saveRate * 100).rounded()))%"]
                }
                output.table(["SHOWN", "REQUESTS", "SAVED", "REDEEMED", "SAVE RATE"], report.messages.map {
                    row("\($0.kind) \($0.messageId ?? "")", $0.figures)
                } + [row("everyone answered", report.answered), row("holdout (no answer)", report.holdout)])
            }
        }
    }
}
