/// A terminal in memory, for tests and snapshots: it applies the runs it is sent to its own
/// buffer (so a wrong diff shows as a wrong screen), counts what each flush cost, and delivers a
/// script of keys to whoever started it.
@MainActor
public final class TestBackend: Backend, EventSource {
    public private(set) var buffer: Buffer
    public private(set) var cursor: (x: Int, y: Int)?
    /// Cells written since the last flush, and by the last flushed frame.
    public private(set) var lastChangedCells = 0
    /// Frames flushed so far.
    public private(set) var flushes = 0
    private var pendingCells = 0
    private var onEvent: (@MainActor (KeyEvent) -> Void)?
    private var onSignal: (@MainActor (Int32) -> Void)?

    public init(width: Int, height: Int) { buffer = Buffer(width: width, height: height) }

    public var size: (width: Int, height: Int) { (buffer.width, buffer.height) }

    public func clear() { buffer = Buffer(width: buffer.width, height: buffer.height) }

    public func draw(_ runs: [BufferDiff.Run]) {
        for run in runs {
            for (offset, cell) in run.cells.enumerated() where run.x + offset < buffer.width && run.y < buffer.height {
                buffer[run.x + offset, run.y] = cell
            }
            pendingCells += run.cells.count
        }
    }

    public func setCursor(_ position: (x: Int, y: Int)?) { cursor = position }

    public func flush() {
        lastChangedCells = pendingCells
        pendingCells = 0
        flushes += 1
    }

    // MARK: Input

    public func start(onEvent: @escaping @MainActor (KeyEvent) -> Void, onSignal: @escaping @MainActor (Int32) -> Void) {
        self.onEvent = onEvent
        self.onSignal = onSignal
    }

    public func stop() {
        onEvent = nil
        onSignal = nil
    }

    /// Whether something started reading this backend's input (and has not stopped).
    public var isStarted: Bool { onEvent != nil }

    /// The person presses keys (or clicks).
    public func send(_ events: KeyEvent...) { for event in events { onEvent?(event) } }

    /// The person types text.
    public func type(_ text: String) { for character in text { onEvent?(.character(character)) } }

    /// The window changes size: the buffer is resized (blank) and a resize event follows.
    public func resize(width: Int, height: Int) {
        buffer = Buffer(width: width, height: height)
        onEvent?(.resize(width: width, height: height))
    }

    /// A signal arrives (SIGTERM: 15).
    public func signal(_ number: Int32) { onSignal?(number) }

    // MARK: Reading the screen

    /// The screen as text, one line per row.
    public var text: String { buffer.lines.joined(separator: "\n") }

    /// The screen's styles as a map: one letter per cell (a key for each distinct style used),
    /// then the legend. Spaces in the default style are ".", so layout shows too.
    public var styleSnapshot: String { Self.styleSnapshot(buffer) }

    public nonisolated static func styleSnapshot(_ buffer: Buffer) -> String {
        var keys: [Style: Character] = [.plain: "."]
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        var rows: [String] = []
        for y in 0..<buffer.height {
            var row = ""
            for x in 0..<buffer.width {
                let style = buffer[x, y].style
                if keys[style] == nil { keys[style] = letters[min(keys.count - 1, letters.count - 1)] }
                row.append(keys[style]!)
            }
            rows.append(row)
        }
        let legend = keys.sorted { $0.value < $1.value }.map { "\($0.value) = \(describe($0.key))" }
        return (rows + ["", "styles:"] + legend).joined(separator: "\n")
    }

    nonisolated static func describe(_ style: Style) -> String {
        func color(_ c: Color) -> String {
            switch c {
            case .default: "default"
            case .indexed(let i): "\(i)"
            }
        }
        var parts = ["fg \(color(style.foreground))", "bg \(color(style.background))"]
        let names: [(Attributes, String)] = [(.bold, "bold"), (.dim, "dim"), (.underline, "underline"), (.reverse, "reverse"), (.italic, "italic")]
        parts += names.filter { style.attributes.contains($0.0) }.map(\.1)
        return parts.joined(separator: " ")
    }
}
