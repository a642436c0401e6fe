import Foundation
import SaveDeskViewModels
import TerminalKit

/// The last page before an App Store cancellation: only the customer can cancel, so the agent
/// reads out the steps, and SaveDesk then waits for Apple.
struct AppStoreConfirmationPage: FlowPage {
    var steps: CancelFlowView.AppStoreSteps
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        column.place(Line("Cancelling is the customer's own step", style: theme[.title]), into: &frame)
        column.skip()
        column.place(Paragraph("\(steps.productName) is billed by the App Store: only the customer can cancel it, in Settings. Read out these steps:",
                               style: theme[.text]), maxHeight: 2, into: &frame)
        NumberedSteps(steps: steps.steps, theme: theme).render(in: &column, frame: &frame)
        let until = steps.periodEnd.map { "Access continues until \(Display.date($0)). " } ?? ""
        column.place(Paragraph(until + "SaveDesk then waits for Apple to confirm that renewal is off.", style: theme[.muted]),
                     maxHeight: 2, into: &frame)
    }
}
