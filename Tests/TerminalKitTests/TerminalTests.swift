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

/// One key map drives both the handling and the help.
@Suite("Key maps")
struct KeyMapTests {
    enum Action: Equatable { case move(Int), pick(Int), open, quit }

    let map = KeyMap<Action>([
        .upDown("move", up: .move(-1), down: .move(1)),
        .digits(count: 3, "pick", { .pick($0) }),
        .on(.enter, .right, keys: "Enter", "open", .open),
        .on(.character("Q"), keys: "", "", .quit),
    ])

    @Test func keysFindTheirActions() {
        #expect(map.action(for: .up) == .move(-1) && map.action(for: .character("j")) == .move(1))
        #expect(map.action(for: .character("2")) == .pick(1))
        #expect(map.action(for: .character("4")) == nil, "only the choices on screen")
        #expect(map.action(for: .right) == .open && map.action(for: .character("Q")) == .quit)
        #expect(map.action(for: .character("z")) == nil)
    }

    @Test func theHelpListsWhatTheMapDoes() {
        #expect(map.help == [KeyHelp("\u{2191}\u{2193} j k", "move"), KeyHelp("1\u{2013}9", "pick"), KeyHelp("Enter", "open")])
        var more = map
        more.append(.on(.tab, keys: "Tab", "next", .open))
        #expect((more + KeyMap([.on(.escape, keys: "Esc", "quit", .quit)])).help.map(\.keys) == ["\u{2191}\u{2193} j k", "1\u{2013}9", "Enter", "Tab", "Esc"])
    }
}
