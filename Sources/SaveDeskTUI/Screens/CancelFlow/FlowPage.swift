import TerminalKit

/// One page of a flow, laid out from the top of the screen's area down: it takes the rows it
/// needs from the column, and what the screen draws next (its buttons) goes under it. A page is a
/// value built from the view model and the screen's UI state; rendering changes neither.
@MainActor
protocol FlowPage {
    func render(in column: inout Column, frame: inout Frame)
}

/// Numbered steps to read out, each wrapped to two rows, indented; the last two rows of the area
/// stay free (for the buttons).
struct NumberedSteps: FlowPage {
    var steps: [String]
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        for (index, step) in steps.enumerated() where column.rest.height > 2 {
            column.place(Paragraph("\(index + 1). \(step)", style: theme[.text]), maxHeight: 2, indent: 2, into: &frame)
        }
    }
}
