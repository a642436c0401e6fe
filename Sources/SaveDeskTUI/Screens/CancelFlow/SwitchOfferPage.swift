import SaveDeskViewModels
import TerminalKit

/// Switch and save as the save offer: the campaign's words, the price with the discount, the days
/// bridged; then the checkout while the customer pays, and what Apple said.
struct SwitchOfferPage: FlowPage {
    var offer: CancelFlowView.SwitchOffer
    var tick: Int
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        let terms = offer.terms
        column.place(Line(terms.title, style: theme[.title]), into: &frame)
        column.skip()
        column.place(Paragraph(terms.message, style: theme[.text]), maxHeight: 3, width: 76, into: &frame)
        column.skip()
        if let priceLine = terms.priceLine {
            column.place(Paragraph("\(terms.productName): \(priceLine)", style: theme[.success].adding(.bold)), maxHeight: 2, width: 76, into: &frame)
        }
        column.place(Paragraph(terms.bridgeLine, style: theme[.text]), maxHeight: 2, width: 76, into: &frame)
        if let checkoutURL = offer.checkout?.url {
            column.skip()
            column.place(Line("Checkout for the customer:", style: theme[.title]), into: &frame)
            column.place(Paragraph(checkoutURL, style: theme[.accent]), maxHeight: 2, into: &frame)
            column.place(Line("\(Spinner.text(tick))  Waiting for the customer to pay\u{2026}", style: theme[.muted]), into: &frame)
        }
        if let appleMessage = offer.message {
            column.place(Paragraph(appleMessage, style: theme[.danger]), maxHeight: 2, into: &frame)
        }
    }
}
