import SaveDeskViewModels
import TerminalKit

/// The customer's audit trail, newest first.
@MainActor
final class TimelineScreen: Screen {
    let overview: CustomerOverview
    private var selected = 0

    init(overview: CustomerOverview) { self.overview = overview }

    var title: String { "Timeline \u{00B7} \(overview.customerId)" }
    enum Action { case move(Int), reload }

    var keyMap: KeyMap<Action> {
        KeyMap([
            .upDown("move", up: .move(-1), down: .move(1)),
            .on(.character("g"), keys: "g", "reload", .reload),
        ])
    }

    func follow(_ change: LiveChange) -> Intent { .run { await self.overview.refresh() } }

    func appear() -> Intent { .run { await self.overview.load() } }

    func action(forClick id: String) -> Action? { id == "retry" ? .reload : nil }

    func perform(_ action: Action, context: ScreenContext) -> Intent {
        switch action {
        case .move(let step): selected = min(max(0, overview.timeline.count - 1), max(0, selected + step))
        case .reload: return appear()
        }
        return .none
    }

    func render(into frame: inout Frame, area: Rect, context: RenderContext) {
        let theme = context.theme
        if LoadPhaseView.replacesContent(overview.phase, hasContent: !overview.timeline.isEmpty) {
            frame.render(LoadPhaseView(phase: overview.phase, canRetry: true, theme: theme), in: area)
            return
        }
        guard !overview.timeline.isEmpty else {
            frame.render(Line("Nothing has happened yet.", style: theme[.muted]), in: area)
            return
        }
        let (list, detail) = area.splitBottom(3)
        let items = overview.timeline.map { event in
            ListView.Item(CharacterWidth.pad(Display.time(event.at), to: 19) + CharacterWidth.pad(event.actor, to: 18) + Display.timelineText(event))
        }
        frame.render(ListView(items, selected: selected, theme: theme, hitPrefix: "event."), in: list)
        if let event = overview.timeline[safe: selected] {
            frame.render(Paragraph("request \(event.requestId)", style: theme[.muted]), in: detail.splitTop(1).rest)
        }
    }
}
