import TerminalKit

/// A choice the server did not take (the network, or an error): what went wrong, and that the
/// choice is kept for a retry.
struct FailedPage: FlowPage {
    var message: String
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        column.place(Line("That did not go through", style: theme[.danger]), into: &frame)
        column.skip()
        column.place(Paragraph(message, style: theme[.text]), maxHeight: 3, into: &frame)
        column.skip()
        frame.render(Paragraph("The customer's choice is kept. Retry, or give up (the flow is recorded with the choice).", style: theme[.muted]),
                     in: column.take(3).splitTop(2).top)
    }
}
