import SaveDeskViewModels
import TerminalKit

/// The pause picker: the campaign's words, then the pause lengths, each with the day the
/// subscription would resume.
struct PausePage: FlowPage {
    var pause: CancelFlowView.Pause
    var ui: CancelFlowPageUI
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        column.place(Line(pause.title, style: theme[.title]), into: &frame)
        column.skip()
        column.place(Paragraph(pause.body, style: theme[.text]), maxHeight: 3, width: 72, into: &frame)
        column.skip()
        // "1 month — resumes Jan 12, 2027", one per option, in order.
        let options = pause.options.map { $0.label + " \u{2014} resumes " + Display.date($0.resumesOn) }
        column.place(RadioList(options, chosen: ui.highlighted, focused: ui.focusedButton == nil ? ui.highlighted : nil,
                               theme: theme, hitPrefix: "choice."),
                     maxHeight: column.rest.height - 2, into: &frame)
    }
}
