import Foundation
import SaveDeskViewModels
import TerminalKit

/// Funnel analytics: how cancel flows end, the switch-and-save funnel, and what Apple's cancel
/// page showed with its save rates, with a date range and an operator filter.
@MainActor
final class AnalyticsScreen: Screen {
    let report: FunnelReport
    private var range = 0
    private var onlyMe = false
    private static let ranges: [(label: String, days: Int?)] = [("all time", nil), ("last 7 days", 7), ("last 30 days", 30)]

    init(report: FunnelReport) { self.report = report }

    var title: String { "Analytics" }
    enum Action { case show(FunnelReport.View), toggleView, nextRange, toggleOnlyMe, reload }

    var keyMap: KeyMap<Action> {
        KeyMap([
            .on(.tab, .backTab, .left, .right, keys: "Tab \u{2190}\u{2192}", "next view", .toggleView),
            .on(.character("1"), keys: "1", "cancel flow", .show(.cancelFlow)),
            .on(.character("2"), keys: "2", "switch and save", .show(.switchAndSave)),
            .on(.character("3"), keys: "3", "Apple's cancel page", .show(.cancelPage)),
            .on(.character("f"), keys: "f", "date range", .nextRange),
            .on(.character("o"), keys: "o", "only my flows / everyone's", .toggleOnlyMe),
            .on(.character("g"), keys: "g", "reload", .reload),
        ])
    }

    func appear() -> Intent { .run { await self.report.load() } }

    /// Responses, checkouts and switches move the figures: they follow with no key pressed.
    func follow(_ change: LiveChange) -> Intent { change.movesAnalytics ? .run { await self.report.refresh() } : .none }

    func action(forClick id: String) -> Action? {
        switch id {
        case "tab.cancelFlow": .show(.cancelFlow)
        case "tab.switchAndSave": .show(.switchAndSave)
        case "tab.cancelPage": .show(.cancelPage)
        case "retry": .reload
        default: nil
        }
    }

    func perform(_ action: Action, context: ScreenContext) -> Intent {
        switch action {
        case .show(let view): return .run { await self.report.show(view) }
        case .toggleView:
            let views = FunnelReport.View.allCases
            let next = views[((views.firstIndex(of: report.view) ?? 0) + 1) % views.count]
            return perform(.show(next), context: context)
        case .nextRange:
            range = (range + 1) % Self.ranges.count
            return apply(context)
        case .toggleOnlyMe:
            onlyMe.toggle()
            return apply(context)
        case .reload: return appear()
        }
    }

    private func apply(_ context: ScreenContext) -> Intent {
        let days = Self.ranges[range].days
        let me = onlyMe ? context.operatorName : nil
        let filters = days.map { FunnelReport.Filters.last($0, until: Date(), operatorName: me) } ?? FunnelReport.Filters(operatorName: me)
        return .run { await self.report.apply(filters) }
    }

    func render(into frame: inout Frame, area: Rect, context: RenderContext) {
        let theme = context.theme
        var x = area.x
        for (view, label) in [(FunnelReport.View.cancelFlow, "1 Cancel flow"), (.switchAndSave, "2 Switch & save"), (.cancelPage, "3 Apple's page")] {
            let style = report.view == view ? theme[.selection] : theme[.button]
            let width = frame.buffer.put(" \(label) ", x: x, y: area.y, style: style)
            frame.hit(Rect(x: x, y: area.y, width: width, height: 1), "tab.\(view.rawValue)")
            x += width + 1
        }
        let filter = Self.ranges[range].label + (onlyMe ? " \u{00B7} only \(context.model.operatorName ?? "me")" : " \u{00B7} everyone")
        frame.buffer.put("f/o: " + filter, x: x + 2, y: area.y, style: theme[.muted], clip: area)
        var y = area.y + 2
        if LoadPhaseView.replacesContent(report.phase, hasContent: report.cancelFlow != nil || report.switchAndSave != nil || report.cancelPage != nil) {
            frame.render(LoadPhaseView(phase: report.phase, canRetry: true, theme: theme), in: area.splitTop(2).rest)
            return
        }
        let chart = Rect(x: area.x, y: y, width: min(area.width, 70), height: 4)
        switch report.view {
        case .cancelFlow:
            guard let data = report.cancelFlow else { return }
            frame.buffer.put("How \(data.outcomes.total) cancel flow\(data.outcomes.total == 1 ? "" : "s") ended", x: area.x, y: y, style: theme[.title])
            y += 1
            frame.render(BarChart(report.outcomeBars.map { .init(label: $0.label, value: $0.value) }, theme: theme),
                         in: Rect(x: chart.x, y: y, width: chart.width, height: 4))
            y += 5
            let rate = Int((data.outcomes.saveRate * 100).rounded())
            // A pause the customer chose but that could not be applied is not a save: chosen and
            // applied are counted apart.
            let summary = "Save rate \(rate)% \u{00B7} offer accepted \(data.offerAccepted) of \(data.offerShown) \u{00B7} "
                + "pause chosen \(data.pauseAccepted), applied \(data.pauseApplied) of \(data.pauseShown) shown \u{00B7} "
                + "App Store cancellations read out \(data.appStoreCancellations.readOut), confirmed by Apple \(data.appStoreCancellations.confirmed)"
            var column = Column(Rect(x: area.x, y: y, width: area.width, height: area.maxY - y))
            column.place(Paragraph(summary, style: theme[.text]), maxHeight: 2, width: 100, into: &frame)
            column.skip()
            y = column.y
            if let question = data.questions.first, y < area.maxY - 1 {
                frame.buffer.put(CharacterWidth.truncate(question.questionText, to: area.width), x: area.x, y: y, style: theme[.title])
                y += 1
                let bars = question.answers.map { BarChart.Bar(label: $0.label, value: $0.count) }
                frame.render(BarChart(bars, theme: theme), in: Rect(x: area.x, y: y, width: chart.width, height: min(bars.count, area.maxY - y)))
            }
        case .switchAndSave:
            guard let data = report.switchAndSave else { return }
            frame.buffer.put("Switch-and-save funnel", x: area.x, y: y, style: theme[.title])
            y += 1
            frame.render(BarChart(report.funnelBars.map { .init(label: $0.label, value: $0.value) }, theme: theme),
                         in: Rect(x: chart.x, y: y, width: chart.width, height: 3))
            y += 4
            frame.buffer.put("Conversion rate \(Int((data.funnel.conversionRate * 100).rounded()))%", x: area.x, y: y, style: theme[.text])
            y += 2
            for variant in data.variants where y < area.maxY {
                let name = variant.variantId.isEmpty ? "(no variant)" : variant.variantId
                frame.buffer.put("\(CharacterWidth.pad(name, to: 24)) \(variant.funnel.impressions) \u{2192} \(variant.funnel.conversions) \u{2192} \(variant.funnel.completed)",
                                 x: area.x, y: y, style: theme[.muted], clip: area)
                y += 1
            }
        case .cancelPage:
            guard let data = report.cancelPage else { return }
            frame.buffer.put("Apple's cancel page: \(data.requests) request\(data.requests == 1 ? "" : "s")", x: area.x, y: y, style: theme[.title])
            y += 2
            let label = max(10, min(area.width, 100) - 26)
            frame.buffer.put(CharacterWidth.pad("Shown", to: label) + "  shown  saved   rate", x: area.x, y: y, style: theme[.muted], clip: area)
            y += 1
            for row in report.cancelPageRows where y < area.maxY {
                let figures = String(format: "%7d%7d%6d%%", row.shown, row.saved, Int((row.saveRate * 100).rounded()))
                let style = row.label.hasPrefix("Holdout") || row.label.hasPrefix("Everyone") ? theme[.title] : theme[.text]
                frame.buffer.put(CharacterWidth.pad(CharacterWidth.truncate(row.label, to: label), to: label) + figures,
                                 x: area.x, y: y, style: style, clip: area)
                y += 1
            }
            if let lift = report.cancelPageLift, y + 1 < area.maxY {
                frame.buffer.put(String(format: "Lift over the holdout: %+.1f points", lift), x: area.x, y: y + 1, style: theme[.accent], clip: area)
            }
        }
    }
}
