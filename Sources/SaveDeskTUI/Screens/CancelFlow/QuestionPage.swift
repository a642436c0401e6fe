import SaveDeskViewModels
import TerminalKit

/// A question of the questionnaire: its text (with the required marker), then its options (radio
/// buttons with number keys) or a text field for the customer's words.
struct QuestionPage: FlowPage {
    var question: CancelFlowView.Question
    var ui: CancelFlowPageUI
    /// The text field has the keys.
    var isTyping: Bool
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        column.place(Paragraph(question.text + (question.isRequired ? " *" : ""), style: theme[.title]), maxHeight: 2, into: &frame)
        column.place(Line(question.isRequired ? "* required" : "optional", style: theme[.muted]), into: &frame)
        column.skip()
        if question.isFreeText {
            let rect = column.take(1, width: 60)
            frame.render(TextField(placeholder: "type the customer's words", focused: isTyping, theme: theme), in: rect, state: ui.field)
            frame.hit(rect, "field")
            column.skip()
        } else {
            column.place(RadioList(question.options.map(\.label), chosen: question.chosenIndex, focused: ui.focusedButton == nil ? ui.highlighted : nil,
                                   theme: theme, hitPrefix: "choice."),
                         maxHeight: column.rest.height - 2, into: &frame)
        }
    }
}
