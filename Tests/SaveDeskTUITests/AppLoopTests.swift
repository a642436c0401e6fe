import Foundation
import Testing

@testable import SaveDeskTUI
@testable import SaveDeskViewModels
@testable import TerminalKit

/// The real app loop (`TUIRunner`: input, Observation-driven redraws, the diff, quit) on a
/// `TestBackend`, driven by scripted keys through both flows on a real server, without tmux.
@Suite("App loop on a test backend")
@MainActor
struct AppLoopTests {
    /// A running console on a 80×24 test backend.
    @MainActor
    struct Loop {
        let harness: Harness
        let backend: TestBackend
        let runner: TUIRunner<TestBackend>
        let exit: Task<Int32, Never>

        static func start(width: Int = 80, height: Int = 24) async throws -> Loop {
            let harness = try await Harness.start(startApp: false)
            let backend = TestBackend(width: width, height: height)
            let runner = TUIRunner(app: harness.app, backend: backend)
            let exit = Task { await runner.run() }
            return Loop(harness: harness, backend: backend, runner: runner, exit: exit)
        }

        /// Waits (at most 15 s) until the screen shows `text`; the loop redraws on its own.
        func waitFor(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) async {
            let deadline = ContinuousClock.now + .seconds(15)
            while ContinuousClock.now < deadline {
                if backend.text.contains(text) { return }
                try? await Task.sleep(for: .milliseconds(10))
            }
            Issue.record("the screen never showed \"\(text)\":\n\(backend.text)", sourceLocation: sourceLocation)
        }

        /// Quits with `q` and returns the exit code.
        func quit() async -> Int32 {
            backend.send(.character("q"))
            let code = await exit.value
            await harness.stop()
            return code
        }
    }

    @Test func aCancelFlowFromSearchToPauseThenQuit() async throws {
        let loop = try await Loop.start()
        await loop.waitFor(" customers \u{00B7} page 1 of")
        #expect(loop.backend.isStarted)
        loop.backend.type("ava")
        await loop.waitFor("1 customer ")
        loop.backend.send(.enter)
        await loop.waitFor("1 Cancel flow (Premium Monthly)")
        loop.backend.send(.character("c"))
        await loop.waitFor("What's the main reason you want to cancel? *")
        loop.backend.send(.character("3"), .enter)
        await loop.waitFor("How long have you been reading with us?")
        loop.backend.send(.character("3"), .enter)
        await loop.waitFor("Anything we could have done better?")
        loop.backend.send(.enter)
        await loop.waitFor("Before you go: 40% off")
        #expect(loop.backend.text.contains("$7.99/month  \u{2192}  with the offer $4.79/month"))
        loop.backend.send(.character("n"))
        await loop.waitFor("Need a break?")
        loop.backend.send(.enter)
        await loop.waitFor("Paused until")
        loop.backend.send(.enter)
        await loop.waitFor("Paused \u{00B7} resumes")
        // A resize redraws whole: too small says so, and back again the screen is whole.
        loop.backend.resize(width: 50, height: 15)
        await loop.waitFor("Enlarge the window to at least 60\u{00D7}18")
        loop.backend.resize(width: 100, height: 30)
        await loop.waitFor("Paused \u{00B7} resumes")
        #expect(loop.backend.text == loop.harness.text(100, 30), "what the backend shows is the whole frame")
        #expect(await loop.quit() == 0)
        #expect(!loop.backend.isStarted, "quitting gives the terminal back")
    }

    @Test func aSwitchAndSaveFlowThenQuit() async throws {
        let loop = try await Loop.start()
        await loop.waitFor(" customers \u{00B7} page 1 of")
        loop.backend.type("chloe")
        await loop.waitFor("1 customer ")
        loop.backend.send(.enter)
        await loop.waitFor("Switch and save: eligible")
        loop.backend.send(.character("s"))
        await loop.waitFor("Premium Monthly: $9.99/month on the App Store \u{2192} $6.39/month on the web")
        loop.backend.send(.enter)
        await loop.waitFor("Waiting for the customer to pay")
        loop.backend.send(.character("p"))
        await loop.waitFor("Read these steps to the customer to cancel Apple billing")
        loop.backend.send(.character("o"))
        await loop.waitFor("You're all set!")
        #expect(await loop.quit() == 0)
    }

    /// Moving the selection in a list sends the cells that changed, not the screen.
    @Test func aSelectionMoveSendsAFewCells() async throws {
        let loop = try await Loop.start()
        await loop.waitFor(" customers \u{00B7} page 1 of")
        loop.backend.send(.down)
        await loop.waitFor("\u{25B8}")
        // The status line settles too (the operator's name replaces "operator" once the session
        // is read): on a loaded machine it can arrive after the list, and the key's frame would
        // then carry it.
        await loop.waitFor("Marco (support)")
        let before = loop.backend.flushes
        loop.backend.send(.down)
        #expect(loop.backend.flushes == before + 1, "one frame per key")
        #expect(loop.backend.lastChangedCells <= 4, "the marker moves: \(loop.backend.lastChangedCells) cells")
        #expect(await loop.quit() == 0)
    }

    /// The spinners' timer runs while work does and stops by itself after, with a frame that takes
    /// the spinner away: an idle console is not woken six times a second for a spinner it does not
    /// draw, nor left showing one.
    @Test func theSpinnerTimerRunsOnlyWhileWorkRuns() async throws {
        let loop = try await Loop.start()
        await loop.waitFor(" customers \u{00B7} page 1 of")
        await loop.waitFor("Marco (support)")
        func waitUntil(_ turning: Bool) async {
            let deadline = ContinuousClock.now + .seconds(15)
            while loop.runner.spinnersTurning != turning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        }
        func statusLine() -> String { loop.backend.text.split(separator: "\n").last.map(String.init) ?? "" }
        let spinner = Set((0..<4).map { Spinner.text($0) })
        await waitUntil(false)
        #expect(!loop.runner.spinnersTurning, "idle: no timer")
        let (gate, open) = AsyncStream<Void>.makeStream()
        loop.runner.app.perform { for await _ in gate {} }
        #expect(loop.runner.spinnersTurning, "work started: the spinners turn")
        let tick = loop.runner.app.tick
        let deadline = ContinuousClock.now + .seconds(15)
        while loop.runner.app.tick == tick, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
        #expect(loop.runner.app.tick > tick, "the timer advanced the spinners")
        #expect(spinner.contains { statusLine().contains($0) }, "a spinner shows: \(statusLine())")
        open.finish()
        await waitUntil(false)
        #expect(!loop.runner.spinnersTurning, "the work ended: the timer stopped")
        #expect(!spinner.contains { statusLine().contains($0) }, "no spinner left: \(statusLine())")
        loop.backend.send(.down)
        await loop.waitFor("\u{25B8}")
        #expect(await loop.quit() == 0)
    }

    /// SIGTERM ends the loop with 128 + 15 and gives the terminal back.
    @Test func aSignalEndsTheLoop() async throws {
        let loop = try await Loop.start()
        await loop.waitFor(" customers \u{00B7} page 1 of")
        loop.backend.signal(15)
        #expect(await loop.exit.value == 143)
        #expect(!loop.backend.isStarted)
        await loop.harness.stop()
    }
}
