import Dispatch
import Foundation
import Observation
import SaveDeskViewModels
import TerminalKit
import TerminalKitNCurses

/// Runs the console on a terminal: draws a frame whenever something the frame read changes
/// (Observation), after every key, and on resize; keeps spinners turning while work runs; on quit
/// or a signal, lets the screens close (a half-done flow is recorded) and gives the terminal back.
/// The backend is curses on a real terminal (`TUIRunner(model:theme:problem:)`) or a
/// `TestBackend` in tests, which drive this same loop with scripted keys.
@MainActor
public final class TUIRunner<B: Backend & EventSource> {
    public let app: TUIApp
    public let terminal: Terminal<B>
    private var redrawScheduled = false
    /// Frames drawn so far: a change already drawn by a later frame needs no frame of its own.
    private var framesDrawn = 0
    /// The app is handling a key (or click, or resize); a frame follows.
    private var handlingEvent = false
    private var finished: CheckedContinuation<Int32, Never>?
    private var exitCode: Int32 = 0
    /// Turns the spinners while work runs; suspended while none does (an idle console wakes for
    /// nothing: each tick woke libdispatch's timer thread and the main thread, and cost a key that
    /// came with it its core).
    private var timer: DispatchSourceTimer?
    private var timerRunning = false
    /// Whether the spinners' timer runs now.
    var spinnersTurning: Bool { timerRunning }
    private var stopping = false
    /// Follow the server's event stream (the console on a terminal; the loop's tests keep still).
    public var live = false

    public init(app: TUIApp, backend: B) {
        self.app = app
        terminal = Terminal(backend: backend)
    }

    /// Runs until the person quits or a signal arrives; returns the exit code (128 + signal).
    public func run() async -> Int32 {
        app.start(live: live)
        terminal.backend.start(onEvent: { [weak self] event in self?.handle(event) }, onSignal: { [weak self] signal in self?.quit(code: 128 + signal) })
        let timer = DispatchSource.makeTimerSource(queue: .main)
        timer.schedule(deadline: .now() + .milliseconds(150), repeating: .milliseconds(150))
        timer.setEventHandler { [weak self] in
            MainActor.assumeIsolated {
                guard let self else { return }
                // The work ended: one more frame takes the spinner away, and stops the timer.
                guard self.app.isWorking else { return self.redraw() }
                self.app.advanceTick()
                self.redraw()
            }
        }
        self.timer = timer
        app.onWorkStarted = { [weak self] in self?.followWork() }
        redraw()
        return await withCheckedContinuation { finished = $0 }
    }

    func handle(_ event: KeyEvent) {
        if case .resize = event { terminal.invalidate() }
        handlingEvent = true
        app.handle(event)
        handlingEvent = false
        if app.wantsQuit { quit(code: 0) } else { redraw() }
    }

    /// Draws now, watching what the frame read: a change schedules the next frame.
    func redraw() {
        guard !stopping else { return }
        redrawScheduled = false
        framesDrawn += 1
        let drawn = framesDrawn
        // Drawn inside the tracked closure: the frame goes out before Observation installs the
        // tracking of what it read (a key's frame reaches the terminal that much sooner).
        withObservationTracking {
            terminal.draw(app.render(width: terminal.size.width, height: terminal.size.height))
            followWork()
        } onChange: { [weak self] in
            // A change a key makes (on this thread, while the app handles it) is drawn by that
            // key's frame, which follows: nothing to schedule, and no extra turn of the loop.
            if Thread.isMainThread, MainActor.assumeIsolated({ self?.handlingEvent ?? false }) { return }
            DispatchQueue.main.async { MainActor.assumeIsolated { self?.scheduleRedraw(after: drawn) } }
        }
    }

    /// Runs the spinners' timer while work runs, and only then: called when work starts, after
    /// each frame (the timer's last tick, with nothing running, draws one to stop it).
    private func followWork() {
        guard let timer, !stopping, app.isWorking != timerRunning else { return }
        timerRunning.toggle()
        if timerRunning { timer.resume() } else { timer.suspend() }
    }

    /// A value the frame `drawn` read has changed: draw again, unless a later frame (a key's)
    /// already has.
    private func scheduleRedraw(after drawn: Int) {
        guard framesDrawn == drawn, !redrawScheduled else { return }
        redrawScheduled = true
        DispatchQueue.main.async { MainActor.assumeIsolated { if self.redrawScheduled { self.redraw() } } }
    }

    /// Closes the screens, waits (at most 2 s) for what they record, restores the terminal.
    func quit(code: Int32) {
        guard !stopping else { return }
        if !app.wantsQuit { app.quitNow() }
        stopping = true
        exitCode = code
        // A suspended source must be resumed to be cancelled (and released).
        if let timer {
            if !timerRunning { timer.resume() }
            timer.cancel()
        }
        Task { @MainActor in
            let deadline = ContinuousClock.now + .seconds(2)
            while app.isWorking, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            // Hand what the screens recorded to the server while it is there (bounded; what is
            // not delivered stays in the outbox for the next start).
            await app.model.deliverOutbox(before: deadline + .seconds(1))
            terminal.backend.stop()
            app.model.shutdown()
            finished?.resume(returning: exitCode)
            finished = nil
        }
    }
}

extension TUIRunner where B == NCursesBackend {
    /// Takes over the real terminal (NO_COLOR or a colourless terminal → no colours).
    public convenience init(model: AppModel, theme: Theme, problem: String? = nil) {
        let noColor = ProcessInfo.processInfo.environment["NO_COLOR"].map { !$0.isEmpty } ?? false
        let backend = NCursesBackend(forceColorDepth: noColor ? NCursesBackend.ColorDepth.none : nil)
        self.init(app: TUIApp(model: model, theme: backend.colorDepth == .none ? theme.withoutColor : theme), backend: backend)
        live = true
        if let problem { model.show(problem, isError: true) }
    }
}

/// The `savedesk` process's main thread: the main queue served, and the terminal read there
/// (`MainThreadLoop`). `main` calls this last, for every command.
public enum ConsoleMainThread {
    public static func run() -> Never { MainThreadLoop.run() }
}
