import SaveDeskViewModels
import TerminalKit

/// One customer: who they are, lifecycle banners, subscriptions with source badges, the
/// switch-and-save decision, what the agent can do (and why not), recent activity.
@MainActor
final class CustomerScreen: Screen {
    let overview: CustomerOverview
    private var selected = 0

    init(overview: CustomerOverview) { self.overview = overview }

    var title: String { overview.profile.map { "\(Display.customerName($0.name)) (\(overview.customerId))" } ?? overview.customerId }
    enum Action { case move(Int), take(Int), cancelFlow, switchAndSave, timeline, reload }

    var keyMap: KeyMap<Action> {
        let actions = overview.actions
        var map = KeyMap<Action>([
            .upDown("choose an action", up: .move(-1), down: .move(1)),
            .digits(count: actions.count, "take that action", { .take($0) }),
        ])
        if actions.indices.contains(selected) { map.append(.on(.enter, keys: "Enter", "take it", .take(selected))) }
        if actions.contains(where: { $0.kind == .cancelFlow }) { map.append(.on(.character("c"), keys: "c", "cancel flow", .cancelFlow)) }
        map.append(.on(.character("s"), keys: "s", "switch and save", .switchAndSave))
        map.append(.on(.character("t"), keys: "t", "timeline", .timeline))
        map.append(.on(.character("g"), keys: "g", "reload", .reload))
        return map
    }

    func follow(_ change: LiveChange) -> Intent { .run { await self.overview.refresh() } }

    func appear() -> Intent { .run { await self.overview.load() } }

    /// Back from a flow: what it changed shows.
    func reappear() -> Intent { appear() }

    func action(forClick id: String) -> Action? {
        if id == "retry" { return .reload }
        return index(of: id, prefix: "action.").map { .take($0) }
    }

    func perform(_ action: Action, context: ScreenContext) -> Intent {
        let actions = overview.actions
        switch action {
        case .move(let step):
            selected = min(max(0, actions.count - 1), max(0, selected + step))
            return .none
        case .take(let index):
            guard actions.indices.contains(index) else { return .none }
            selected = index
            return take(actions[index])
        case .cancelFlow:
            guard let action = actions.first(where: { $0.kind == .cancelFlow }) else { return .none }
            return take(action)
        case .switchAndSave: return .open(.switchAndSave(customerId: overview.customerId))
        case .timeline: return .open(.timeline(customerId: overview.customerId))
        case .reload: return appear()
        }
    }

    private func take(_ action: CustomerAction) -> Intent {
        guard action.isAvailable else { return .show("\(action.kind.title): \(action.note ?? "not available")", isError: false) }
        let id = overview.customerId
        switch action.kind {
        case .cancelFlow: return action.productId.map { .open(.cancelFlow(customerId: id, productId: $0)) } ?? .none
        case .switchAndSave: return .open(.switchAndSave(customerId: id))
        case .resume: return run { await $0.resume(productId: action.productId ?? "") }
        case .reactivate: return run { await $0.reactivate(productId: action.productId ?? "") }
        case .winBack: return run { await $0.winBack(productId: action.productId ?? "") }
        case .upgrade: return run { await $0.upgrade(productId: action.productId ?? "") }
        }
    }

    /// Runs an action, then says how it went.
    private func run(_ body: @escaping @MainActor (CustomerOverview) async -> Void) -> Intent {
        let overview = self.overview
        return .perform {
            await body(overview)
            return overview.lastMessage.map { .show($0, isError: false) } ?? .none
        }
    }

    func render(into frame: inout Frame, area: Rect, context: RenderContext) {
        let theme = context.theme
        guard overview.phase == .loaded else {
            frame.render(LoadPhaseView(phase: overview.phase, loading: "Loading \(overview.customerId)\u{2026}", canRetry: true, theme: theme), in: area)
            return
        }
        var column = Column(area)
        func paragraph(_ text: String, _ style: Style, indent: Int = 0, maxRows: Int = 2) {
            column.place(Paragraph(text, style: style), maxHeight: maxRows, indent: indent, into: &frame)
        }
        func heading(_ text: String) { column.place(Line(text, style: theme[.title]), into: &frame) }
        if let profile = overview.profile {
            column.place(Line([.init(Display.customerName(profile.name), style: theme[.title]),
                               .init("  \(profile.email)" + (profile.country.map { " \u{00B7} \($0)" } ?? "")
                                     + (profile.cardFailing ? " \u{00B7} card failing" : ""), style: theme[.muted])]), into: &frame)
        }
        // Who else is on this customer now (the event stream's presence).
        for other in context.model.others(on: overview.customerId).prefix(2) {
            paragraph("\u{25C6} " + other.sentence, theme[.warning], maxRows: 1)
        }
        // The overall state first (after a switch: active on the web), then what else needs saying.
        if let standing = overview.standing {
            let winBack = overview.entitlements.first { $0.id == standing.mainId }?.winBackEligible == true ? " \u{00B7} win-back available" : ""
            paragraph("\u{25B2} " + standing.headline + winBack, Self.style(standing.level, theme))
            if let detail = standing.detail { paragraph(detail, theme[.muted], indent: 2) }
        }
        for banner in overview.banners.prefix(1) {
            paragraph("\u{25B2} \(banner.productName): \(banner.summary)" + (banner.winBackEligible ? " \u{00B7} win-back available" : ""),
                      Self.style(banner.warning, theme))
        }
        for cancellation in overview.appStoreCancellations {
            let name = overview.entitlements.first { $0.productId == cancellation.productId }?.productName ?? cancellation.productId
            paragraph(Display.appStoreCancellation(cancellation, productName: name), cancellation.confirmedAt == nil ? theme[.warning] : theme[.text])
        }
        column.skip()
        heading("Subscriptions")
        if overview.entitlements.isEmpty {
            paragraph(Display.noSubscriptionsYet, theme[.muted], indent: 2)
        }
        for row in overview.entitlements.prefix(3) {
            let badge = row.source == .storeKit ? theme[.badgeAppStore] : theme[.badgeWeb]
            let line = column.take(1, indent: 2)
            let lead = Line([.init(" \(Display.source(row.source)) ", style: badge), .init(" "), .init(row.productName, style: theme[.text]), .init("  ")])
            frame.render(lead, in: line)
            frame.render(Line(row.summary, style: row.hasAccess ? theme[.text] : theme[.muted], truncates: true),
                         in: line.splitLeft(lead.width).right)
        }
        if let decision = overview.switchAndSave {
            column.skip()
            var line = "Switch and save: \(decision.state.rawValue)"
            if !decision.reasons.isEmpty { line += " \u{2014} " + decision.reasons.map(\.message).joined(separator: "; ") }
            if let offer = decision.offerData { line += " \u{2014} \(offer.prompt.title)" }
            paragraph(line, decision.state == .eligible ? theme[.success] : theme[.muted], maxRows: 3)
        }
        column.skip()
        heading("Actions")
        let selectedNote = overview.actions.indices.contains(selected) ? overview.actions[selected].note : nil
        let detailRows = selectedNote.map { min(2, Text.wrap($0, width: area.width - 2).count) } ?? 0
        let timelineRows = column.rest.height - overview.actions.count - detailRows > 3 ? 3 : 0
        for (index, action) in overview.actions.enumerated() where column.rest.height > timelineRows + detailRows {
            let isSelected = index == selected
            let row = column.take(1)
            let style = isSelected ? theme[.selection] : action.isAvailable ? theme[.text] : theme[.muted]
            if isSelected { frame.buffer.fill(row, style: style) }
            var text = (isSelected ? "\u{203A} " : "  ") + "\(index + 1) " + action.kind.title
            if let product = action.productId, action.isAvailable {
                text += " (\(overview.entitlements.first { $0.productId == product }?.productName ?? product))"
            }
            if let note = action.note { text += " \u{2014} \(note)" }
            frame.render(Line(text, style: style, truncates: true), in: row)
            frame.hit(row, "action.\(index)")
        }
        // The selected action's note in full: nothing the agent reads out is cut.
        if let selectedNote {
            paragraph(selectedNote, theme[.muted], indent: 2)
        }
        if timelineRows > 0, !overview.timeline.isEmpty {
            column.skip()
            heading("Recent activity (t: all)")
            for event in overview.timeline.prefix(max(0, column.rest.height)) {
                column.place(Line("\(Display.date(event.at))  \(event.actor)  \(event.action)", style: theme[.muted], truncates: true), into: &frame)
            }
        }
    }

    static func style(_ level: LifecycleWarning, _ theme: Theme) -> Style {
        switch level {
        case .critical: theme[.danger]
        case .warning: theme[.warning]
        case .notice, .none: theme[.accent]
        }
    }
}
