import Foundation
import SaveDeskViewModels
import TerminalKit

/// The console: one screen per route of the app model's navigation stack (kept while it is on
/// the stack, so going back returns to the same place), the keys every screen shares, the help
/// overlay, quit confirmation, toasts and the status bar. It renders whole frames; the terminal
/// draws only what changed.
@MainActor
public final class TUIApp {
    public let model: AppModel
    public var theme: Theme
    /// The smallest terminal the screens are laid out for.
    public static let minimumSize = (width: 60, height: 18)

    private(set) var screens: [AppModel.Route: any Screen] = [:]
    private(set) var showingHelp = false
    private(set) var confirmingQuit = false
    /// Set when the person chose to quit; the runner then restores the terminal and exits.
    public private(set) var wantsQuit = false
    /// Advances while work runs, for spinners.
    private(set) var tick = 0
    private var work: [UUID: Task<Void, Never>] = [:]
    private var lastFrame: Frame?
    /// Told when work starts (the runner turns the spinners only while some runs).
    var onWorkStarted: (() -> Void)?

    public init(model: AppModel, theme: Theme) {
        self.model = model
        self.theme = theme
    }

    /// Loads the home screen, then checks the server (who is signed in, the server's clock, the
    /// outbox) and, with `live`, follows the server's event stream so screens move by themselves
    /// (the console does; snapshots stay still). The first screen's load goes alone: started
    /// together, on 2 cores, the three calls' work in the console and in the server held the first
    /// page back.
    public func start(live: Bool = false) {
        act(screen(for: model.currentRoute).appear())
        let firstLoad = Array(work.values)
        if live {
            model.onChange = { [weak self] change in self?.follow(change) }
            model.onResync = { [weak self] in self?.resync() }
        }
        perform {
            for task in firstLoad { await task.value }
            if live { self.model.startLive() }
            await self.model.start()
        }
    }

    /// A recorded change: each screen on the stack it concerns acts on it (the customer's
    /// screens, the analytics), the one on top first.
    func follow(_ change: LiveChange) {
        for route in model.stack.reversed() {
            guard let screen = screens[route] else { continue }
            switch route {
            case .customer(let id), .timeline(let id), .switchAndSave(let id), .cancelFlow(let id, _):
                if id == change.customerId { act(screen.follow(change)) }
            case .analytics:
                act(screen.follow(change))
            case .customers, .demoDevice:
                continue
            }
        }
    }

    /// Events were missed: each screen on the stack reads again what it shows.
    func resync() {
        for route in model.stack.reversed() {
            switch route {
            case .customer(let id), .timeline(let id), .switchAndSave(let id), .cancelFlow(let id, _):
                if let screen = screens[route] { act(screen.follow(.resync(customerId: id))) }
            case .analytics:
                if let screen = screens[route] { act(screen.follow(.resync(customerId: ""))) }
            case .customers, .demoDevice:
                continue
            }
        }
    }

    /// Tells the server (presence) which customer this console is on, and doing what.
    func announcePresence() {
        let activity: LiveActivity = switch model.stack.last {
        case .cancelFlow?: .cancelFlow
        case .switchAndSave?: .switchAndSave
        default: .viewing
        }
        model.announce(customerId: currentCustomerId, activity: activity)
    }

    // MARK: Work

    /// Runs view-model work without blocking input; `settle()` waits for all of it.
    func perform(_ body: @escaping @MainActor () async -> Void) {
        let id = UUID()
        work[id] = Task { @MainActor in
            await body()
            self.work[id] = nil
        }
        onWorkStarted?()
    }

    /// Waits until every piece of work started so far (and what it started) has finished.
    public func settle() async {
        while let task = work.values.first { await task.value }
    }

    public var isWorking: Bool { !work.isEmpty }

    /// Advances spinners (the runner calls this on a timer while work runs).
    public func advanceTick() { tick += 1 }

    /// Does what a screen asked.
    func act(_ intent: Intent) {
        switch intent {
        case .none: break
        case .perform(let work): perform { self.act(await work()) }
        case .open(let route): open(route)
        case .back: back()
        case .show(let message, let isError): model.show(message, isError: isError)
        case .checkConnection: perform { await self.model.checkConnection() }
        case .all(let intents): for intent in intents { act(intent) }
        }
    }

    /// What screens may read of the app when they act.
    var screenContext: ScreenContext { ScreenContext(serverNow: model.serverNow, operatorName: model.operatorName) }

    // MARK: Navigation

    func screen(for route: AppModel.Route) -> any Screen {
        if let existing = screens[route] { return existing }
        let made: any Screen
        switch route {
        case .customers: made = HomeScreen(directory: model.makeDirectory())
        case .customer(let id): made = CustomerScreen(overview: model.makeOverview(customerId: id))
        case .cancelFlow(let customerId, let productId):
            made = CancelFlowScreen(session: model.makeCancelFlow(customerId: customerId, productId: productId), device: model.makeDemoDevice())
        case .switchAndSave(let customerId):
            made = SwitchAndSaveScreen(manager: model.makeMigrationManager(userId: customerId), device: model.makeDemoDevice())
        case .timeline(let customerId): made = TimelineScreen(overview: model.makeOverview(customerId: customerId))
        case .analytics: made = AnalyticsScreen(report: model.makeFunnelReport())
        case .demoDevice: made = DemoDeviceScreen(device: model.makeDemoDevice(), customerId: currentCustomerId)
        }
        screens[route] = made
        return made
    }

    var currentScreen: any Screen { screen(for: model.currentRoute) }

    /// The customer the agent is working with (the nearest customer screen on the stack).
    var currentCustomerId: String? {
        for route in model.stack.reversed() {
            switch route {
            case .customer(let id), .timeline(let id), .switchAndSave(let id): return id
            case .cancelFlow(let id, _): return id
            default: continue
            }
        }
        return nil
    }

    func open(_ route: AppModel.Route) {
        let isNew = screens[route] == nil
        model.push(route)
        let screen = screen(for: route)
        if isNew { act(screen.appear()) }
        announcePresence()
    }

    /// Back one screen; the screen left is closed (a cancel flow left mid-way is recorded as
    /// dismissed), and the screen below shows what changed meanwhile.
    func back() {
        let route = model.currentRoute
        guard model.pop() != nil else { return }
        if let left = screens.removeValue(forKey: route) { act(left.leave()) }
        if let below = screens[model.currentRoute] { act(below.reappear()) }
        announcePresence()
    }

    func goHome(focusSearch: Bool) {
        while model.stack.count > 1 { back() }
        if focusSearch { act(currentScreen.focusSearch()) }
    }

    // MARK: Input

    public func handle(_ key: KeyEvent) {
        if case .resize = key { return }
        if confirmingQuit {
            if case .mouse(let x, let y) = key, lastFrame?.hit(x: x, y: y) == "quit.yes" { return quitNow() }
            switch key {
            case .character("y"), .character("Y"): quitNow()
            default: confirmingQuit = false
            }
            return
        }
        if showingHelp {
            showingHelp = false
            return
        }
        if case .mouse(let x, let y) = key {
            if let id = lastFrame?.hit(x: x, y: y) { click(id) }
            return
        }
        let screen = currentScreen
        let context = screenContext
        if screen.isTyping, let intent = screen.handle(key, context: context) { return act(intent) }
        if let action = AppKeys.first.action(for: key) { return apply(action) }
        if let intent = screen.handle(key, context: context) { return act(intent) }
        if let action = AppKeys.then(isTestMode: model.isTestMode).action(for: key) { apply(action) }
    }

    private func apply(_ action: AppKeys.Action) {
        switch action {
        case .help: showingHelp = true
        case .quit: requestQuit()
        case .back: back()
        case .search: goHome(focusSearch: true)
        case .retry: retryFromToast()
        case .dismissToast: if let toast = model.toasts.last { model.dismissToast(toast.id) }
        case .analytics: open(.analytics)
        case .demoDevice: open(.demoDevice)
        }
    }

    func click(_ id: String) {
        switch id {
        case "toast.retry": retryFromToast()
        default: act(currentScreen.click(id, context: screenContext))
        }
    }

    func retryFromToast() {
        if let toast = model.toasts.last(where: \.canRetry) {
            perform { await self.model.retryToast(toast.id) }
        } else if case .unreachable = model.connection {
            perform { await self.model.checkConnection() }
            model.retryOutbox()
        }
    }

    /// Everything the stack holds that quitting would interrupt.
    var midFlowScreens: [any Screen] { model.stack.compactMap { screens[$0] }.filter(\.isMidFlow) }

    func requestQuit() {
        if midFlowScreens.isEmpty { quitNow() } else { confirmingQuit = true }
    }

    /// Closes every screen (a half-done flow is recorded as dismissed, through the outbox) and asks
    /// the runner to stop.
    public func quitNow() {
        confirmingQuit = false
        for route in model.stack.reversed() {
            if let screen = screens[route] { act(screen.leave()) }
        }
        wantsQuit = true
    }

    // MARK: Rendering

    public func render(width: Int, height: Int) -> Frame {
        var frame = Frame(width: width, height: height)
        guard width >= Self.minimumSize.width, height >= Self.minimumSize.height else {
            Chrome.tooSmall(width: width, height: height, theme: theme, into: &frame)
            lastFrame = frame
            return frame
        }
        let context = RenderContext(theme: theme, model: model, tick: tick)
        let parts = Layout.vertical([.fixed(1), .fill(), .fixed(1)]).split(frame.area)
        let (header, body, status) = (parts[0], parts[1], parts[2])
        let screen = currentScreen
        Chrome.header(screen.title, breadcrumbs: model.stack.count, in: header, theme: theme, into: &frame.buffer)
        screen.render(into: &frame, area: body.inset(dx: 1, dy: 0), context: context)
        Chrome.statusBar(model: model, working: isWorking, tick: tick, in: status, theme: theme, into: &frame)
        if let toast = model.toasts.last {
            let widget = Toast(toast.message, hint: toast.canRetry ? "r retry · x dismiss" : "x dismiss", isError: toast.isError, theme: theme)
            frame.render(widget, in: body)
            let box = widget.rect(in: body)
            if toast.canRetry { frame.hit(box, "toast.retry") }
        }
        if showingHelp {
            Chrome.help(screen.help, shared: sharedHelp(after: screen), in: body, theme: theme, into: &frame)
        }
        if confirmingQuit { Chrome.confirmQuit(theme: theme, into: &frame) }
        lastFrame = frame
        return frame
    }

    /// The keys every screen shares, for the help overlay: those that reach the app past `screen` (a key the screen takes is listed once, as its).
    func sharedHelp(after screen: any Screen) -> [KeyHelp] {
        AppKeys.first.help + AppKeys.then(isTestMode: model.isTestMode).help(notTakenBy: { screen.takes($0) })
    }
}
