import SaveDeskViewModels
import TerminalKit

/// What a screen shows while its data is not in: a muted line while it loads; the failure in full
/// (up to three rows) and, when the screen can retry, a Retry button (a click named "retry").
/// Nothing once loaded.
struct LoadPhaseView: Widget {
    var phase: LoadPhase
    var loading: String = "Loading\u{2026}"
    var canRetry: Bool
    var theme: Theme

    private static let messageRows = 3

    /// Whether a screen shows this view instead of its content: when loading failed, and while it
    /// loads with nothing yet to show (a reload keeps what is on screen).
    static func replacesContent(_ phase: LoadPhase, hasContent: Bool) -> Bool {
        switch phase {
        case .loaded: false
        case .loading: !hasContent
        case .failed: true
        }
    }

    func height(width: Int) -> Int {
        switch phase {
        case .loaded: 0
        case .loading: 1
        case .failed(let message): min(Self.messageRows, Text.wrap(message, width: width).count) + (canRetry ? 2 : 0)
        }
    }

    func render(in area: Rect, frame: inout Frame) {
        var column = Column(area)
        switch phase {
        case .loaded: break
        case .loading: column.place(Line(loading, style: theme[.muted], truncates: true), into: &frame)
        case .failed(let message):
            column.place(Paragraph(message, style: theme[.danger]), maxHeight: Self.messageRows, into: &frame)
            guard canRetry else { return }
            column.skip()
            column.place(Button("Retry", id: "retry", focused: true, theme: theme), into: &frame)
        }
    }
}
