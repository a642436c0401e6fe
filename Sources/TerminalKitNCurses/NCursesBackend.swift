import CTerminalShim
import Dispatch
import Foundation
import TerminalKit

/// The terminal through ncursesw, as a `Backend` (draws the runs of cells a `Terminal` sends,
/// one curses call per stretch of same-styled cells) and an `EventSource` (reads keys and clicks
/// without blocking the main actor, a dispatch source on stdin; follows resizes, SIGWINCH). It
/// always gives the terminal back: on `stop()`, SIGINT/SIGTERM/SIGHUP (through `onSignal`) and
/// crashes. All curses calls happen on the main thread.
@MainActor
public final class NCursesBackend: Backend, EventSource {
    /// How many colours the terminal can show.
    public enum ColorDepth: Hashable, Sendable {
        case none, basic8, full256
    }

    /// What the main thread's loop calls when the terminal has input (while a backend reads it).
    static var input: (@MainActor () -> Void)?

    public private(set) var width = 0
    public private(set) var height = 0
    public let colorDepth: ColorDepth
    private var pairs: [Pair: Int32] = [:]
    private let maxPairs: Int32
    private var sources: [any DispatchSourceProtocol] = []

    private struct Pair: Hashable {
        var foreground: Color
        var background: Color
    }

    /// Takes over the terminal. `forceColorDepth` caps the colours (NO_COLOR → `.none`).
    public init(forceColorDepth: ColorDepth? = nil) {
        let colors = savedesk_start()
        savedesk_install_crash_restore()
        let depth: ColorDepth = colors >= 256 ? .full256 : colors >= 8 ? .basic8 : .none
        colorDepth = forceColorDepth.map { min($0, depth) } ?? depth
        maxPairs = savedesk_color_pairs()
        var rows: Int32 = 0, cols: Int32 = 0
        savedesk_screen_size(&rows, &cols)
        width = Int(cols)
        height = Int(rows)
    }

    /// Starts reading input and following resizes; `onEvent` gets every key, click and resize,
    /// `onSignal` SIGINT, SIGTERM and SIGHUP (the terminal is still curses'; call `stop()`).
    public func start(onEvent: @escaping @MainActor (KeyEvent) -> Void, onSignal: @escaping @MainActor (Int32) -> Void) {
        let takeInput: @MainActor () -> Void = { [weak self] in
            guard let self else { return }
            for event in self.readAvailable() { onEvent(event) }
        }
        if MainThreadLoop.isRunning {
            // The main thread waits on the terminal itself (see MainThreadLoop).
            Self.input = takeInput
            MainThreadLoop.watchInput()
        } else {
            let input = DispatchSource.makeReadSource(fileDescriptor: STDIN_FILENO, queue: .main)
            input.setEventHandler { MainActor.assumeIsolated { takeInput() } }
            input.resume()
            sources.append(input)
        }
        for signalNumber in [SIGWINCH, SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .main)
            source.setEventHandler { [weak self] in
                MainActor.assumeIsolated {
                    guard let self else { return }
                    if signalNumber == SIGWINCH {
                        let (width, height) = self.resize()
                        onEvent(.resize(width: width, height: height))
                        // resizeterm queued a KEY_RESIZE inside curses (no byte on stdin to wake
                        // the read source): take it now, with anything else waiting.
                        for event in self.readAvailable() { onEvent(event) }
                    } else {
                        onSignal(signalNumber)
                    }
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Gives the terminal back (idempotent).
    public func stop() {
        for source in sources { source.cancel() }
        sources.removeAll()
        if Self.input != nil {
            MainThreadLoop.stopWatchingInput()
            Self.input = nil
        }
        savedesk_stop()
    }

    public var size: (width: Int, height: Int) { (width, height) }

    /// Rereads the size from the kernel (the terminal then draws the next frame whole).
    public func resize() -> (width: Int, height: Int) {
        var rows: Int32 = 0, cols: Int32 = 0
        savedesk_resize(&rows, &cols)
        width = Int(cols)
        height = Int(rows)
        return (width, height)
    }

    public func clear() { savedesk_invalidate() }

    public func draw(_ runs: [BufferDiff.Run]) {
        for run in runs {
            var x = run.x
            var index = 0
            // One curses call per stretch of same-styled cells.
            while index < run.cells.count {
                let style = run.cells[index].style
                var text = ""
                var end = index
                while end < run.cells.count, run.cells[end].style == style {
                    if !run.cells[end].isContinuation { text.append(run.cells[end].character) }
                    end += 1
                }
                let (flags, pair) = attributes(style)
                text.withCString { pointer in
                    savedesk_draw(Int32(run.y), Int32(x), pointer, Int32(strlen(pointer)), flags, pair)
                }
                x += end - index
                index = end
            }
        }
    }

    public func setCursor(_ position: (x: Int, y: Int)?) {
        if let position {
            savedesk_cursor(1, Int32(position.y), Int32(position.x))
        } else {
            savedesk_cursor(0, 0, 0)
        }
    }

    public func flush() { savedesk_flush() }

    /// Everything waiting on stdin, as events.
    private func readAvailable() -> [KeyEvent] {
        var events: [KeyEvent] = []
        var scalar: UInt32 = 0
        var code: Int32 = 0
        while true {
            let kind = savedesk_read(&scalar, &code)
            if kind == 0 { break }
            if kind == 1 {
                if let event = Self.event(scalar: scalar) { events.append(event) }
                continue
            }
            switch Int(code) {
            case Int(SAVEDESK_KEY_UP): events.append(.up)
            case Int(SAVEDESK_KEY_DOWN): events.append(.down)
            case Int(SAVEDESK_KEY_LEFT): events.append(.left)
            case Int(SAVEDESK_KEY_RIGHT): events.append(.right)
            case Int(SAVEDESK_KEY_ENTER): events.append(.enter)
            case Int(SAVEDESK_KEY_BACKSPACE): events.append(.backspace)
            case Int(SAVEDESK_KEY_DELETE): events.append(.delete)
            case Int(SAVEDESK_KEY_HOME): events.append(.home)
            case Int(SAVEDESK_KEY_END): events.append(.end)
            case Int(SAVEDESK_KEY_PAGE_UP): events.append(.pageUp)
            case Int(SAVEDESK_KEY_PAGE_DOWN): events.append(.pageDown)
            case Int(SAVEDESK_KEY_BACK_TAB): events.append(.backTab)
            case Int(SAVEDESK_KEY_RESIZE):
                // Curses has resized already (this key is its notice): read the size, do not resize
                // again (resizeterm would queue another KEY_RESIZE, for ever).
                var rows: Int32 = 0, cols: Int32 = 0
                savedesk_screen_size(&rows, &cols)
                width = Int(cols)
                height = Int(rows)
                events.append(.resize(width: width, height: height))
            case Int(SAVEDESK_KEY_MOUSE):
                var y: Int32 = 0, x: Int32 = 0
                if savedesk_mouse(&y, &x) == 1 { events.append(.mouse(x: Int(x), y: Int(y))) }
            case let value where value > Int(SAVEDESK_KEY_FUNCTION):
                events.append(.function(value - Int(SAVEDESK_KEY_FUNCTION)))
            default: break
            }
        }
        return events
    }

    /// A character read as text: control characters become their keys.
    static func event(scalar: UInt32) -> KeyEvent? {
        switch scalar {
        case 9: return .tab
        case 10, 13: return .enter
        case 27: return .escape
        case 8, 127: return .backspace
        case 1...26: return .control(Character(Unicode.Scalar(scalar + 96)!))
        default: return Unicode.Scalar(scalar).map { .character(Character($0)) }
        }
    }

    /// The curses attributes and colour pair of a style, for this terminal's colours.
    private func attributes(_ style: Style) -> (Int32, Int32) {
        var flags: Int32 = 0
        let attributes = style.attributes
        if attributes.contains(.bold) { flags |= Int32(SAVEDESK_BOLD) }
        if attributes.contains(.dim) { flags |= Int32(SAVEDESK_DIM) }
        if attributes.contains(.underline) { flags |= Int32(SAVEDESK_UNDERLINE) }
        if attributes.contains(.reverse) { flags |= Int32(SAVEDESK_REVERSE) }
        if attributes.contains(.italic) { flags |= Int32(SAVEDESK_ITALIC) }
        guard colorDepth != .none else { return (flags, 0) }
        let pair = Pair(foreground: adapt(style.foreground), background: adapt(style.background))
        if pair.foreground == .default && pair.background == .default { return (flags, 0) }
        if let number = pairs[pair] { return (flags, number) }
        let number = Int32(pairs.count + 1)
        guard number < maxPairs else { return (flags, 0) }
        savedesk_init_pair(number, Self.index(pair.foreground), Self.index(pair.background))
        pairs[pair] = number
        return (flags, number)
    }

    private func adapt(_ color: Color) -> Color { colorDepth == .basic8 ? color.basic : color }

    private static func index(_ color: Color) -> Int32 {
        switch color {
        case .default: -1
        case .indexed(let index): Int32(index)
        }
    }
}

extension NCursesBackend.ColorDepth: Comparable {
    public static func < (lhs: Self, rhs: Self) -> Bool {
        let order: [Self] = [.none, .basic8, .full256]
        return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
    }
}
