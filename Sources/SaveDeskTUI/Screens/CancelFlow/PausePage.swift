import SaveDeskViewModels
import TerminalKit

/// The pause picker: the campaign's words, then the pause lengths, each with the day the
/// subscription would resume.
struct PausePage: FlowPage {
    var title: String
    var body: String
    /// "1 month — resumes 12 Jan 2027", one per option, in order.
    var options: [String]
    var ui: CancelFlowPageUI
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        column.place(Line(title, style: theme[.title]), into: &frame)
        column.skip()
        column.place(Paragraph(body, style: theme[.text]), maxHeight: 3, width: 72, into: &frame)
        column.skip()
        column.place(RadioList(options, chosen: ui.highlighted, focused: ui.focusedButton == nil ? ui.highlighted : nil,
                               theme: theme, hitPrefix: "choice."),
                     maxHeight: column.rest.height - 2, into: &frame)
    }
}
