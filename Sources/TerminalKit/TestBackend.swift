/// A terminal in memory: keeps the last frame it was given, for tests and snapshots.
public struct TestBackend: Sendable {
    public private(set) var buffer: Buffer
    /// How many cells the last frame changed.
    public private(set) var lastChangedCells = 0

    public init(width: Int, height: Int) { buffer = Buffer(width: width, height: height) }

    public mutating func draw(_ frame: Buffer) {
        lastChangedCells = BufferDiff.runs(from: buffer, to: frame).reduce(0) { $0 + $1.cells.count }
        buffer = frame
    }

    /// The frame as text, one line per row.
    public var text: String { buffer.lines.joined(separator: "\n") }

    /// The frame's styles as a map: one letter per cell (a key for each distinct style used),
    /// then the legend. Spaces in the default style are ".", so layout shows too.
    public var styleSnapshot: String { Self.styleSnapshot(buffer) }

    public static func styleSnapshot(_ buffer: Buffer) -> String {
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

    static func describe(_ style: Style) -> String {
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
