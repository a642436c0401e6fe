import SaveDeskViewModels
import TerminalKit

/// The top of every page of the flow: progress dots with "step N of M", and a warning when a part
/// of the flow cannot be offered to this customer.
struct FlowProgress: FlowPage {
    var progress: (step: Int, total: Int)
    var unavailableNote: String?
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        column.place(Line([.init(ProgressDots.text(current: progress.step, total: progress.total), style: theme[.accent]),
                           .init("  step \(min(progress.step + 1, progress.total)) of \(progress.total)", style: theme[.muted])]),
                     into: &frame)
        column.skip()
        if let unavailableNote {
            column.place(Paragraph("\u{25B2} " + unavailableNote, style: theme[.warning]), maxHeight: 2, into: &frame)
            column.skip()
        }
    }
}
