import SaveDeskViewModels
import TerminalKit

/// The demo device (test mode): the server's clock, the App Store's events for the customer in
/// hand, a StoreKit purchase synced through the sync queue.
@MainActor
final class DemoDeviceScreen: Screen {
    let device: DemoDevice?
    let customerId: String?
    private var selected = 0

    init(device: DemoDevice?, customerId: String?) {
        self.device = device
        self.customerId = customerId
    }

    var title: String { "Demo device" + (customerId.map { " \u{00B7} \($0)" } ?? "") }
    enum Action { case move(Int), run(Int) }

    var keyMap: KeyMap<Action> {
        KeyMap([
            .upDown("choose", up: .move(-1), down: .move(1)),
            .digits(count: steps.count, "do that step", { .run($0) }),
            .on(.enter, keys: "Enter", "do it", .run(selected)),
        ])
    }

    private enum Step {
        case advance(days: Int), appStore(AppStoreEvent), cancelPage, purchase(productId: String), retrySync
    }

    private var steps: [(label: String, step: Step)] {
        var steps: [(String, Step)] = [("Advance the clock 1 day", .advance(days: 1)), ("Advance the clock 7 days", .advance(days: 7)),
                                       ("Advance the clock 30 days", .advance(days: 30))]
        if customerId != nil {
            steps += [("Open Apple's cancel page (what Apple shows)", .cancelPage),
                      ("App Store: auto-renew off", .appStore(.autoRenewOff)), ("App Store: auto-renew on", .appStore(.autoRenewOn)),
                      ("App Store: renewal fails (grace period)", .appStore(.renewalFailedGrace)), ("App Store: refund", .appStore(.refund)),
                      ("App Store: renew", .appStore(.renew))]
            if let product = device?.purchasableProductId { steps.append(("Buy \(product) on the App Store (sync queue)", .purchase(productId: product))) }
        }
        steps.append(("Retry the StoreKit sync queue", .retrySync))
        return steps
    }

    func appear() -> Intent {
        guard let device else { return .none }
        return .run { await device.loadCatalog() }
    }

    func action(forClick id: String) -> Action? { index(of: id, prefix: "step.").map { .run($0) } }

    func perform(_ action: Action, context: ScreenContext) -> Intent {
        switch action {
        case .move(let step):
            selected = min(steps.count - 1, max(0, selected + step))
            return .none
        case .run(let index): return run(index)
        }
    }

    private func run(_ index: Int) -> Intent {
        guard let device, steps.indices.contains(index) else { return .none }
        selected = index
        let customer = customerId
        switch steps[index].step {
        case .advance(let days):
            // Then the server's new time is read again.
            return .perform {
                await device.advanceClock(days: days)
                return .checkConnection
            }
        case .appStore(let event):
            guard let customer else { return .none }
            return .run { await device.appStoreEvent(event, customerId: customer, activeOnly: false) }
        case .cancelPage:
            guard let customer else { return .none }
            return .run { await device.openCancelPage(customerId: customer) }
        case .purchase(let product):
            guard let customer else { return .none }
            return .run { await device.purchaseOnAppStore(userId: customer, productId: product) }
        case .retrySync: return .run { await device.retrySync() }
        }
    }

    func render(into frame: inout Frame, area: Rect, context: RenderContext) {
        let theme = context.theme
        guard let device else {
            frame.buffer.put("The demo device needs a test-mode key.", x: area.x, y: area.y, style: theme[.danger])
            return
        }
        let (list, log) = area.splitTop(min(area.height - 4, steps.count + 1))
        let items = steps.enumerated().map { ListView.Item("\($0.offset + 1 <= 9 ? "\($0.offset + 1)" : " ") \($0.element.label)") }
        frame.render(ListView(items, selected: selected, theme: theme, hitPrefix: "step."), in: list)
        var column = Column(log)
        column.skip()
        if let result = device.lastResult { column.place(Paragraph(result, style: theme[.accent]), maxHeight: 2, into: &frame) }
        column.place(Line("StoreKit sync queue: \(device.syncWaiting) waiting", style: theme[.muted]), into: &frame)
        for line in device.syncLog.suffix(max(0, column.rest.height)) {
            column.place(Line(line, style: theme[.muted], truncates: true), into: &frame)
        }
    }
}
