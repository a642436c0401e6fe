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
        /// skipped, accepted, declined, cancel_now, cancel_at_period_end or steps_read_out (App Store).
        var action: String?
    }

    var userId: String
    var productId: String
    var variantId: Int?
    var dryRun: Bool
    /// web, app_store, both or none: who bills the subscription the flow is about.
    var billing: String?
    /// coupon, switch_and_save or offer_code (absent when there is none).
    var saveOffer: String?
    /// Why a part the customer's answer asked for was not offered ("Apple has no pause…").
    var note: String?
    var steps: [Step] = []
    /// retained, paused, cancelled or dismissed.
    var outcome = ""
    var message = ""
    var pausedUntil: Date?
    var accessUntil: Date?
    var customerSteps: [String] = []
    /// The switch's web checkout, for the customer.
    var checkoutUrl: String?
    var offerCode: String?
    /// Apple's side: waiting_for_apple, confirmed_by_apple, switch_waiting_for_apple or switch_completed.
    var appleState: String?
    /// The cancel-flow response as recorded (absent on a dry run).
    var response: CancelFlow.Response?
    /// True once the server has the response; false when it waits in the outbox.
    var responseRecorded: Bool?
    var failed = false
    var exitCode: CLIError.Code = .failure

    enum CodingKeys: String, CodingKey {
        case userId, productId, variantId, dryRun, billing, saveOffer, note, steps, outcome, message, pausedUntil, accessUntil,
             customerSteps, checkoutUrl, offerCode, appleState, response, responseRecorded, failed
    }

    func print(to output: Output) {
        output.line(output.bold("Cancel flow for \(userId) · \(productId)") + (variantId.map { output.dim(" (variant \($0))") } ?? ""))
        for (index, step) in steps.enumerated() {
            let label = step.question ?? step.page.replacingOccurrences(of: "_", with: " ")
            let result = step.answer.map { "\u{2192} \($0)" } ?? "\u{2192} \(step.action ?? "")"
            output.line("  \(index + 1). \(label)  \(result)")
        }
        let outcomeText = failed ? output.red(outcome) : outcome == "cancelled" ? output.yellow(outcome) : output.green(outcome)
        if let note { output.line(output.yellow("Note: \(note)")) }
        output.line("Outcome: \(outcomeText) · \(message)")
        if let checkoutUrl { output.line("  Checkout: \(checkoutUrl)") }
        if let offerCode { output.line("  Offer code: \(output.bold(offerCode))") }
        for step in customerSteps { output.line("  - \(step)") }
        if let appleState { output.line("Apple: \(appleState.replacingOccurrences(of: "_", with: " "))") }
        if let responseRecorded {
            output.line(responseRecorded ? "Response recorded." : "Response queued in the outbox; the next savedesk command sends it.")
        }
    }
}
