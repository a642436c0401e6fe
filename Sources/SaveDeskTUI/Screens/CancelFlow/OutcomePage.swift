import SaveDeskViewModels
import TerminalKit

/// How the flow ended, and Apple's side of it: waiting for Apple (with the steps the customer
/// still has to take), confirmed, or a switch to the web completed.
struct OutcomePage: FlowPage {
    var ending: CancelFlowView.Ending
    var theme: Theme

    private var outcome: CancelFlowSession.Outcome { ending.outcome }
    private var appleSide: AppleWait.Side? { ending.appleSide }

    /// The outcome's word (Apple's side says more when there is one), in the outcome's style.
    private var headline: (String, Style) {
        var (text, style): (String, Style) = switch outcome.outcome {
        case .retained: ("Retained", theme[.success])
        case .paused: ("Paused", theme[.success])
        case .cancelled: ("Cancelled", theme[.warning])
        case .dismissed, .unknown: ("Left without a change", theme[.muted])
        }
        switch appleSide {
        case .switchWaiting?: text = "Retained \u{00B7} switched to the web \u{00B7} waiting for Apple"
        case .switchCompleted?: text = "Retained \u{00B7} switched to the web \u{00B7} completed"
        case .cancellationWaiting?: text = "Cancelled \u{00B7} waiting for Apple"
        case .cancellationConfirmed?: text = "Cancelled \u{00B7} confirmed by Apple"
        case nil: break
        }
        return (text, style)
    }

    /// The customer still has steps to take (Apple has not confirmed yet).
    private var showsSteps: Bool {
        guard !outcome.customerSteps.isEmpty else { return false }
        switch appleSide {
        case .switchCompleted?, .cancellationConfirmed?: return false
        default: return true
        }
    }

    func render(in column: inout Column, frame: inout Frame) {
        let (text, style) = headline
        column.place(Line(text, style: style.adding(.bold)), into: &frame)
        column.skip()
        column.place(Paragraph(ending.appleCancellation ?? outcome.message, style: theme[.text]), maxHeight: 3, into: &frame)
        if let appleNote = ending.appleNote {
            column.skip()
            column.place(Paragraph(appleNote, style: theme[.warning]), maxHeight: 2, into: &frame)
        }
        if let code = outcome.offerCode {
            column.place(Line("Offer code: \(code)", style: theme[.success].adding(.bold)), into: &frame)
        }
        if showsSteps {
            column.skip()
            column.place(Line(appleSide == .switchWaiting ? "Read these steps to turn off Apple billing:" : "Read these steps to the customer:",
                              style: theme[.title]), into: &frame)
            NumberedSteps(steps: outcome.customerSteps, theme: theme).render(in: &column, frame: &frame)
        }
        switch appleSide {
        case .switchWaiting?, .cancellationWaiting?:
            column.skip()
            if let appleMessage = ending.appleMessage { column.place(Paragraph(appleMessage, style: theme[.warning]), maxHeight: 2, into: &frame) }
            column.place(Paragraph("Waiting for Apple: it confirms once the customer has turned off renewal. Check again, or come back later: the customer screen keeps it.",
                                   style: theme[.muted]), maxHeight: 3, into: &frame)
        case .switchCompleted?:
            column.skip()
            column.place(Paragraph("Apple billing is off: the customer is billed on the web only, with no double charge.", style: theme[.success]),
                         maxHeight: 2, into: &frame)
        case .cancellationConfirmed?, nil: break
        }
        column.skip()
        column.place(Line(ending.isRecorded ? "The flow is recorded." : "", style: theme[.muted]), into: &frame)
    }
}
