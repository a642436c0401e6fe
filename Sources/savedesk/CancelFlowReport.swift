import Foundation
import RetentionDomain

/// What `savedesk flow cancel` did, as JSON (`--json`) and as text. Keys are snake_case; absent
/// values are left out.
struct CancelFlowReport: Encodable {
    struct Step: Encodable {
        /// question, save_offer, pause or cancel_confirmation.
        var page: String
        var questionId: Int?
        var question: String?
        var optionId: Int?
        var answer: String?
        /// skipped, accepted, declined, cancel_now or cancel_at_period_end.
        var action: String?
    }

    var userId: String
    var productId: String
    var variantId: Int?
    var dryRun: Bool
    var steps: [Step] = []
    /// retained, paused, cancelled or dismissed.
    var outcome = ""
    var message = ""
    var pausedUntil: Date?
    var accessUntil: Date?
    var customerSteps: [String] = []
    /// The cancel-flow response as recorded (absent on a dry run).
    var response: CancelFlow.Response?
    /// True once the server has the response; false when it waits in the outbox.
    var responseRecorded: Bool?
    var failed = false
    var exitCode: CLIError.Code = .failure

    enum CodingKeys: String, CodingKey {
        case userId, productId, variantId, dryRun, steps, outcome, message, pausedUntil, accessUntil, customerSteps, response,
             responseRecorded, failed
    }

    func print(to output: Output) {
        output.line(output.bold("Cancel flow for \(userId) · \(productId)") + (variantId.map { output.dim(" (variant \($0))") } ?? ""))
        for (index, step) in steps.enumerated() {
            let label = step.question ?? step.page.replacingOccurrences(of: "_", with: " ")
            let result = step.answer.map { "\u{2192} \($0)" } ?? "\u{2192} \(step.action ?? "")"
            output.line("  \(index + 1). \(label)  \(result)")
        }
        let outcomeText = failed ? output.red(outcome) : outcome == "cancelled" ? output.yellow(outcome) : output.green(outcome)
        output.line("Outcome: \(outcomeText) · \(message)")
        for step in customerSteps { output.line("  - \(step)") }
        if let responseRecorded {
            output.line(responseRecorded ? "Response recorded." : "Response queued in the outbox; the next savedesk command sends it.")
        }
    }
}
