import SaveDeskViewModels
import TerminalKit

/// The save offer when it is a coupon (its words, then the price now and with the offer) or an
/// App Store offer code (its words).
struct OfferPage: FlowPage {
    var title: String
    var body: String
    /// A coupon's prices now and with the offer as read out ("$9.99/month"), when known (nil: an
    /// offer code, which has none).
    var coupon: (now: String?, offered: String?)?
    var theme: Theme

    func render(in column: inout Column, frame: inout Frame) {
        column.place(Line(title, style: theme[.title]), into: &frame)
        column.skip()
        column.place(Paragraph(body, style: theme[.text]), maxHeight: 4, width: 72, into: &frame)
        guard let coupon else { return }
        column.skip()
        guard let now = coupon.now else { return }
        var spans: [Line.Span] = [.init("Now ", style: theme[.muted]), .init(now, style: theme[.text])]
        if let offered = coupon.offered {
            spans += [.init("  \u{2192}  with the offer ", style: theme[.muted]),
                      .init(offered, style: theme[.success].adding(.bold))]
        }
        column.place(Line(spans), into: &frame)
    }
}
