#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A screenful of cells. Screens render into a buffer; the terminal diffs it against the last
/// one and draws only what changed.
public struct Buffer: Hashable, Sendable {
    public let width: Int
    public let height: Int
    public private(set) var cells: [Cell]

    public init(width: Int, height: Int, fill: Cell = .blank) {
        self.width = max(0, width)
        self.height = max(0, height)
        cells = Array(repeating: fill, count: self.width * self.height)
    }

    public var area: Rect { Rect(x: 0, y: 0, width: width, height: height) }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * width + x] }
        set { cells[y * width + x] = newValue }
    }

    /// Writes `text` from (x, y), clipped to `clip` (default: the row to the buffer's edge).
    /// Wide graphemes take two cells; one that would straddle the edge is replaced by a space.
    /// Returns the number of columns written.
    @discardableResult
    public mutating func put(_ text: some StringProtocol, x: Int, y: Int, style: Style = .plain, clip: Rect? = nil) -> Int {
        let bounds = clip ?? Rect(x: 0, y: 0, width: width, height: height)
        guard y >= max(0, bounds.y), y < min(height, bounds.maxY) else { return 0 }
        let limit = min(width, bounds.maxX)
        if let written = putRun(text, x: x, y: y, style: style, from: max(0, bounds.x), to: limit) { return written }
        if CharacterWidth.isSimple(text) {
            // Every scalar is a grapheme one column wide (or a control, none): no grapheme breaking.
            var column = x
            for scalar in text.unicodeScalars where CharacterWidth.simpleWidth(scalar) == 1 {
                guard column < limit else { break }
                if column >= max(0, bounds.x) {
                    clearWide(at: column, y: y)
                    self[column, y] = Cell(scalar, style: style)
                }
                column += 1
            }
            return column - x
        }
        var column = x
        for character in text {
            let w = CharacterWidth.of(character)
            if w == 0 { continue }
            if column + w > limit {
                if column < limit, column >= 0 { self[column, y] = Cell(" ", style: style) }
                break
            }
            if column >= max(0, bounds.x) {
                clearWide(at: column, y: y)
                self[column, y] = Cell(character, style: style)
                if w == 2 {
                    clearWide(at: column + 1, y: y)
                    self[column + 1, y] = Cell(" ", style: style, isContinuation: true)
                }
            }
            column += w
        }
        return column - x
    }

    /// `put` for text whose every scalar is a one-column grapheme on its own (printable ASCII,
    /// "·", "…", "▸", box drawing: most of what screens draw): a cell per scalar, written in place,
    /// and a wide grapheme cut at either end of the run blanked once. Nil for any other text.
    private mutating func putRun(_ text: some StringProtocol, x: Int, y: Int, style: Style, from low: Int, to limit: Int) -> Int? {
        // Printable ASCII (names, emails, labels: nearly every run) read as its bytes: a scalar
        // decoded at a time, twice, was a sixth of a selection move's instructions (callgrind).
        if let written = text.utf8.withContiguousStorageIfAvailable({ bytes -> Int? in
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
            return write(bytes.lazy.map { Unicode.Scalar($0) }, count: bytes.count, x: x, y: y, style: style, from: low, to: limit)
        }), let written { return written }
        let scalars = text.unicodeScalars
        var count = 0
        for scalar in scalars {
            guard CharacterWidth.simpleWidth(scalar) == 1 else { return nil }
            count += 1
        }
        return write(scalars, count: count, x: x, y: y, style: style, from: low, to: limit)
    }

    /// Writes `count` one-column scalars from (x, y), a cell each, within `low..<limit`.
    private mutating func write(
        _ scalars: some Sequence<Unicode.Scalar>, count: Int, x: Int, y: Int, style: Style, from low: Int, to limit: Int
    ) -> Int {
        let written = max(0, min(count, limit - x))
        let start = max(x, low), end = x + written
        guard start < end else { return written }
        clearWide(at: start, y: y)
        if end - 1 > start { clearWide(at: end - 1, y: y) }
        let row = y * width
        cells.withUnsafeMutableBufferPointer { cells in
            var column = x
            for scalar in scalars {
                if column >= end { break }
                if column >= start { cells[row + column] = Cell(scalar, style: style) }
                column += 1
            }
        }
        return written
    }

    /// Whether row `y` holds the same bytes here as in `other` (a buffer of the same size).
    func rowBytesEqual(_ y: Int, in other: Buffer) -> Bool {
        cells.withUnsafeBytes { mine in
            other.cells.withUnsafeBytes { theirs in
                let stride = MemoryLayout<Cell>.stride, offset = y * width * stride, length = width * stride
                guard length > 0 else { return true }
                return memcmp(mine.baseAddress! + offset, theirs.baseAddress! + offset, length) == 0
            }
        }
    }

    /// Paints every cell of `rect` with `style` (and spaces).
    public mutating func fill(_ rect: Rect, style: Style = .plain, character: Character = " ") {
        for y in max(0, rect.y)..<min(height, rect.maxY) {
            for x in max(0, rect.x)..<min(width, rect.maxX) { self[x, y] = Cell(character, style: style) }
        }
    }

    /// Changes the style of the cells of `rect`, keeping their text (selection highlights).
    public mutating func restyle(_ rect: Rect, _ change: (inout Style) -> Void) {
        for y in max(0, rect.y)..<min(height, rect.maxY) {
            for x in max(0, rect.x)..<min(width, rect.maxX) { change(&cells[y * width + x].style) }
        }
    }

    /// Writing over half of a wide grapheme blanks its other half (a wide grapheme's second cell
    /// is always its continuation: `put` writes the two together).
    private mutating func clearWide(at x: Int, y: Int) {
        guard x >= 0, x < width else { return }
        let index = y * width + x
        if cells[index].isContinuation {
            if x > 0 { cells[index - 1] = Cell(" ", style: cells[index - 1].style) }
        } else if x + 1 < width, cells[index + 1].isContinuation {
            cells[index + 1] = Cell(" ", style: cells[index + 1].style)
        }
    }

    /// The text of each row (continuations left out), trailing spaces trimmed.
    public var lines: [String] {
        (0..<height).map { y in
            var line = ""
            for x in 0..<width where !self[x, y].isContinuation { line.append(self[x, y].character) }
            while line.last == " " { line.removeLast() }
            return line
        }
    }
}
