/// Word wrapping by display width (graphemes, wide characters), and drawing wrapped text.
public enum Text {
    /// `text` as lines no wider than `width`: wraps at spaces, breaks words longer than a line,
    /// keeps explicit newlines.
    public static func wrap(_ text: String, width: Int) -> [String] {
        guard width > 0 else { return [] }
        var lines: [String] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = "", lineWidth = 0
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: true) {
                var word = String(word)
                var wordWidth = CharacterWidth.of(word)
                if lineWidth > 0, lineWidth + 1 + wordWidth <= width {
                    line += " " + word
                    lineWidth += 1 + wordWidth
                    continue
                }
                if lineWidth > 0 { lines.append(line) }
                while wordWidth > width {
                    let (head, headWidth) = CharacterWidth.prefix(word, fitting: width)
                    lines.append(head)
                    word.removeFirst(head.count)
                    wordWidth -= headWidth
                }
                line = word
                lineWidth = wordWidth
            }
            lines.append(line)
        }
        return lines
    }

    /// Draws wrapped text into `rect`; returns the rows used.
    @discardableResult
    public static func draw(_ text: String, in rect: Rect, style: Style = .plain, into buffer: inout Buffer) -> Int {
        let lines = wrap(text, width: rect.width).prefix(rect.height)
        for (index, line) in lines.enumerated() {
            buffer.put(line, x: rect.x, y: rect.y + index, style: style, clip: rect)
        }
        return lines.count
    }

    /// One line, cut with an ellipsis when too long.
    public static func line(_ text: String, in rect: Rect, style: Style = .plain, into buffer: inout Buffer) {
        buffer.put(CharacterWidth.truncate(text, to: rect.width), x: rect.x, y: rect.y, style: style, clip: rect)
    }
}
