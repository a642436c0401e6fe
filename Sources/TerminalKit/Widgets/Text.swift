/// Word wrapping by display width (graphemes, wide characters).
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
}

/// Wrapped text, as many rows as it needs (the area clips it).
public struct Paragraph: Widget {
    public var text: String
    public var style: Style

    public init(_ text: String, style: Style = .plain) {
        self.text = text
        self.style = style
    }

    public func height(width: Int) -> Int { Text.wrap(text, width: width).count }

    public func render(in area: Rect, frame: inout Frame) {
        for (index, line) in Text.wrap(text, width: area.width).prefix(area.height).enumerated() {
            frame.buffer.put(line, x: area.x, y: area.y + index, style: style, clip: area)
        }
    }
}

/// One row of styled pieces, left to right; too long, it is clipped (or cut with an ellipsis).
public struct Line: Widget {
    public struct Span: Sendable {
        public var text: String
        public var style: Style
        public init(_ text: String, style: Style = .plain) {
            self.text = text
            self.style = style
        }
    }

    public var spans: [Span]
    /// Cut with "…" when wider than the area (one span only).
    public var truncates: Bool

    public init(_ text: String, style: Style = .plain, truncates: Bool = false) {
        spans = [Span(text, style: style)]
        self.truncates = truncates
    }

    public init(_ spans: [Span]) {
        self.spans = spans
        truncates = false
    }

    /// The columns it takes.
    public var width: Int { spans.reduce(0) { $0 + CharacterWidth.of($1.text) } }

    public func render(in area: Rect, frame: inout Frame) {
        guard area.height > 0 else { return }
        var x = area.x
        for span in spans where x < area.maxX {
            let text = truncates ? CharacterWidth.truncate(span.text, to: area.maxX - x) : span.text
            x += frame.buffer.put(text, x: x, y: area.y, style: span.style, clip: area)
        }
    }
}
