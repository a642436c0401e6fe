/// A border with an optional title; returns the inside.
public enum Box {
    @discardableResult
    public static func draw(_ rect: Rect, title: String? = nil, style: Style, titleStyle: Style? = nil, into buffer: inout Buffer) -> Rect {
        guard rect.width >= 2, rect.height >= 2 else { return Rect(x: rect.x, y: rect.y, width: 0, height: 0) }
        let horizontal = String(repeating: "\u{2500}", count: rect.width - 2)
        buffer.put("\u{256D}" + horizontal + "\u{256E}", x: rect.x, y: rect.y, style: style)
        for y in (rect.y + 1)..<(rect.maxY - 1) {
            buffer.put("\u{2502}", x: rect.x, y: y, style: style)
            buffer.put("\u{2502}", x: rect.maxX - 1, y: y, style: style)
        }
        buffer.put("\u{2570}" + horizontal + "\u{256F}", x: rect.x, y: rect.maxY - 1, style: style)
        if let title, rect.width > 6 {
            let text = " " + CharacterWidth.truncate(title, to: rect.width - 6) + " "
            buffer.put(text, x: rect.x + 2, y: rect.y, style: titleStyle ?? style)
        }
        return rect.inset()
    }
}

/// A box drawn over everything else, its inside cleared.
public enum Modal {
    @discardableResult
    public static func draw(width: Int, height: Int, title: String, theme: Theme, into frame: inout Frame) -> Rect {
        let rect = frame.area.centered(width: width, height: height)
        frame.buffer.fill(rect, style: theme[.modal])
        frame.clearHits()
        return Box.draw(rect, title: title, style: theme[.border], titleStyle: theme[.title], into: &frame.buffer)
    }
}
