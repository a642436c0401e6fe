import Testing

@testable import TerminalKit

/// `Terminal` owns the previous frame: the backend gets only what changed, whole frames after a
/// resize, and the cursor.
@Suite("Terminal")
@MainActor
struct TerminalTests {
    func frame(_ text: String, at x: Int = 0, width: Int = 10, height: Int = 3) -> Frame {
        var frame = Frame(width: width, height: height)
        frame.buffer.put(text, x: x, y: 1)
        return frame
    }

    @Test func theFirstFrameIsWholeThenOnlyWhatChanged() {
        let terminal = Terminal(backend: TestBackend(width: 10, height: 3))
        terminal.draw(frame("hello"))
        #expect(terminal.lastDrawnCells == 30)
        terminal.draw(frame("help"))
        #expect(terminal.lastDrawnCells == 2, "'lo' became 'p '")
        #expect(terminal.backend.buffer.lines == ["", "help", ""])
        terminal.draw(frame("help"))
        #expect(terminal.lastDrawnCells == 0 && terminal.backend.flushes == 3, "an unchanged frame still flushes, sending nothing")
    }

    @Test func aResizeOrAnInvalidationDrawsWhole() {
        let backend = TestBackend(width: 10, height: 3)
        let terminal = Terminal(backend: backend)
        terminal.draw(frame("a"))
        terminal.invalidate()
        terminal.draw(frame("a"))
        #expect(terminal.lastDrawnCells == 30)
        terminal.draw(frame("a", width: 12, height: 2))
        #expect(terminal.lastDrawnCells == 24, "a new size is drawn whole")
    }

    @Test func theCursorFollowsTheFrame() {
        let terminal = Terminal(backend: TestBackend(width: 10, height: 3))
        var typing = frame("abc")
        typing.cursor = (3, 1)
        terminal.draw(typing)
        #expect(terminal.backend.cursor.map { [$0.x, $0.y] } == [3, 1])
        terminal.draw(frame("abc"))
        #expect(terminal.backend.cursor == nil)
    }
}
