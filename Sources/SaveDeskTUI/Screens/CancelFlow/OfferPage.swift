import SaveDeskViewModels
import TerminalKit

/// The save offer when it is a coupon (its words, then the price now and with the offer) or an
/// App Store offer code (its words).
struct OfferPage: FlowPage {
    var offer: CancelFlowView.Offer
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        column.place(Line(offer.title, style: theme[.title]), into: &frame)
        column.skip()
        column.place(Paragraph(offer.body, style: theme[.text]), maxHeight: 4, width: 72, into: &frame)
        // A coupon's prices now and with the offer (an offer code has none).
        guard let prices = offer.prices else { return }
        column.skip()
        guard let now = prices.now else { return }
        var spans: [Line.Span] = [.init("Now ", style: theme[.muted]), .init(now, style: theme[.text])]
        if let offered = prices.withOffer {
            spans += [.init("  \u{2192}  with the offer ", style: theme[.muted]),
                      .init(offered, style: theme[.success].adding(.bold))]
        }
        column.place(Line(spans), into: &frame)
    }
}
