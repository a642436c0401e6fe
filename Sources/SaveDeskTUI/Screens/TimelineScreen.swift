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

    func appear() -> Intent { .run { await self.overview.load() } }

    func perform(_ action: Action, context: ScreenContext) -> Intent {
        switch action {
        case .move(let step): selected = min(max(0, overview.timeline.count - 1), max(0, selected + step))
        case .reload: return appear()
        }
        return .none
    }

    func render(into frame: inout Frame, area: Rect, context: RenderContext) {
        let theme = context.theme
        if case .failed(let message) = overview.phase {
            Text.draw(message, in: area, style: theme[.danger], into: &frame.buffer)
            return
        }
        guard !overview.timeline.isEmpty else {
            frame.buffer.put(overview.phase == .loading ? "Loading\u{2026}" : "Nothing has happened yet.", x: area.x, y: area.y, style: theme[.muted])
            return
        }
        let (list, detail) = area.splitBottom(3)
        let items = overview.timeline.map { event in
            ListView.Item(CharacterWidth.pad(Display.time(event.at), to: 19) + CharacterWidth.pad(event.actor, to: 18) + event.action)
        }
        ListView.draw(items, selected: selected, in: list, theme: theme, hitPrefix: "event.", into: &frame)
        if let event = overview.timeline[safe: selected] {
            Text.draw("request \(event.requestId)", in: detail.splitTop(1).rest, style: theme[.muted], into: &frame.buffer)
        }
    }
}
