/// How many terminal columns a grapheme takes: 0 (combining, control), 1, or 2 (East Asian wide
/// and fullwidth, emoji presented as emoji). Pure Swift, so rendering and tests agree everywhere.
public enum CharacterWidth {
    public static func of(_ character: Character) -> Int {
        // Most text is ASCII: printable 1, control 0, without looking at Unicode properties.
        if let ascii = character.asciiValue { return ascii >= 0x20 && ascii != 0x7F ? 1 : 0 }
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x20 || (0x7F..<0xA0).contains(first.value) { return 0 }
        if first.properties.generalCategory == .nonspacingMark || first.properties.generalCategory == .enclosingMark { return 0 }
        // An emoji shown as emoji (by default, or asked for with U+FE0F) is wide.
        if first.properties.isEmojiPresentation || (first.properties.isEmoji && scalars.contains("\u{FE0F}") && first.value > 0xFF) {
            return 2
        }
        return isWide(first.value) ? 2 : 1
    }

    /// Columns of a whole string.
    public static func of(_ text: some StringProtocol) -> Int {
        var width = 0
        for scalar in text.unicodeScalars {
            guard let w = simpleWidth(scalar) else { return text.reduce(0) { $0 + of($1) } }
            width += w
        }
        return width
    }

    /// The width of a scalar that is a whole grapheme wherever it stands in text made only of
    /// such scalars (no combining marks, joiners, variation selectors, emoji, Hangul jamo or
    /// regional indicators), or nil. Text made only of these (Latin, punctuation such as "·" and
    /// "…", arrows, box drawing and shapes such as "▸") is measured and cut scalar by scalar,
    /// without grapheme breaking: the same widths as `of(_: Character)`, much faster.
    @inline(__always)
    static func simpleWidth(_ scalar: Unicode.Scalar) -> Int? {
        switch scalar.value {
        case 0x20..<0x7F, 0xA0..<0x300, 0x2010..<0x2028, 0x2030..<0x205F, 0x2190..<0x2200, 0x2500..<0x25FD, 0x25FF..<0x2600:
            return 1
        case 0..<0x20, 0x7F..<0xA0:
            return 0
        default:
            return nil
        }
    }

    /// Whether every scalar of `text` is one of `simpleWidth`'s.
    static func isSimple(_ text: some StringProtocol) -> Bool {
        text.unicodeScalars.allSatisfy { simpleWidth($0) != nil }
    }

    /// East Asian Wide (W) and Fullwidth (F) ranges.
    static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
             0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
             0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
             0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// The longest prefix of `text` that fits in `columns`, and its width.
    public static func prefix(_ text: some StringProtocol, fitting columns: Int) -> (text: String, width: Int) {
        if isSimple(text) {
            let scalars = text.unicodeScalars
            var width = 0
            var end = scalars.startIndex
            while end < scalars.endIndex, let w = simpleWidth(scalars[end]), width + w <= columns {
                width += w
                end = scalars.index(after: end)
            }
            return (String(decoding: text.utf8[..<end], as: UTF8.self), width)
        }
        var width = 0
        var result = ""
        for character in text {
            let w = of(character)
            if width + w > columns { break }
            width += w
            result.append(character)
        }
        return (result, width)
    }

    /// `text` cut to `columns`, with an ellipsis when it was too long.
    public static func truncate(_ text: String, to columns: Int) -> String {
        guard columns > 0 else { return "" }
        if of(text) <= columns { return text }
        return prefix(text, fitting: columns - 1).text + "\u{2026}"
    }

    /// `text` cut to `columns` by taking out its middle ("cus_hi…0042"), so texts that differ at the
    /// end (ids of one prefix) stay apart; as it was when it fits.
    public static func cutMiddle(_ text: String, to columns: Int) -> String {
        guard columns > 0 else { return "" }
        if of(text) <= columns { return text }
        guard columns > 2 else { return truncate(text, to: columns) }
        let tailWidth = (columns - 1) / 2
        let head = prefix(text, fitting: columns - 1 - tailWidth).text
        var tail = ""
        var width = 0
        for character in text.reversed() {
            let w = of(character)
            if width + w > tailWidth { break }
            width += w
            tail.insert(character, at: tail.startIndex)
        }
        return head + "\u{2026}" + tail
    }

    /// `text` cut or padded with spaces to exactly `columns`.
    public static func pad(_ text: String, to columns: Int) -> String {
        let cut = truncate(text, to: columns)
        return cut + String(repeating: " ", count: max(0, columns - of(cut)))
    }
}
