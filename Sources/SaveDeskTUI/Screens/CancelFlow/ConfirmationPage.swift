import Foundation
import SaveDeskViewModels
import TerminalKit

/// The last page before a web cancellation: at the end of the period or now, and what happens to
/// App Store billing the customer also has.
struct ConfirmationPage: FlowPage {
    var confirmation: CancelFlowView.Confirmation
    var ui: CancelFlowPageUI
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        column.place(Line("Cancel the subscription?", style: theme[.title]), into: &frame)
        column.skip()
        if let appleNote = confirmation.appleNote {
            column.place(Paragraph(appleNote, style: theme[.warning]), maxHeight: 2, into: &frame)
            column.skip()
        }
        let until = confirmation.periodEnd.map { "access until \(Display.date($0))" } ?? "access until the period ends"
        column.place(RadioList(["At the end of the period \u{2014} \(until)", "Now \u{2014} access ends today"],
                               chosen: ui.cancelNow ? 1 : 0, focused: ui.focusedButton == nil ? ui.highlighted : nil,
                               theme: theme, hitPrefix: "choice."),
                     maxHeight: 2, into: &frame)
    }
}
