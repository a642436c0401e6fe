/// A border with an optional title around an area; `inner` is what is left inside.
public struct Block: Widget {
    public var title: String?
    public var style: Style
    public var titleStyle: Style?

    public init(title: String? = nil, style: Style, titleStyle: Style? = nil) {
        self.title = title
        self.style = style
        self.titleStyle = titleStyle
    }

    public func inner(_ area: Rect) -> Rect {
        area.width >= 2 && area.height >= 2 ? area.inset() : Rect(x: area.x, y: area.y, width: 0, height: 0)
    }

    public func render(in rect: Rect, frame: inout Frame) {
        guard rect.width >= 2, rect.height >= 2 else { return }
        let horizontal = String(repeating: "\u{2500}", count: rect.width - 2)
        frame.buffer.put("\u{256D}" + horizontal + "\u{256E}", x: rect.x, y: rect.y, style: style)
        for y in (rect.y + 1)..<(rect.maxY - 1) {
            frame.buffer.put("\u{2502}", x: rect.x, y: y, style: style)
            frame.buffer.put("\u{2502}", x: rect.maxX - 1, y: y, style: style)
        }
        frame.buffer.put("\u{2570}" + horizontal + "\u{256F}", x: rect.x, y: rect.maxY - 1, style: style)
        if let title, rect.width > 6 {
            let text = " " + CharacterWidth.truncate(title, to: rect.width - 6) + " "
            frame.buffer.put(text, x: rect.x + 2, y: rect.y, style: titleStyle ?? style)
        }
    }
}

/// A titled box drawn over everything else, centred: its inside cleared, and the click regions
/// under it forgotten (a click outside it does nothing).
public struct Modal: Widget {
    public var title: String
    public var width: Int
    public var height: Int
    public var theme: Theme

    public init(title: String, width: Int, height: Int, theme: Theme) {
        self.title = title
        self.width = width
        self.height = height
        self.theme = theme
    }

    private var block: Block { Block(title: title, style: theme[.border], titleStyle: theme[.title]) }

    /// Where it goes in `area`.
    public func rect(in area: Rect) -> Rect { area.centered(width: width, height: height) }

    /// Its inside, where its content goes.
    public func inner(_ area: Rect) -> Rect { block.inner(rect(in: area)) }

    public func render(in area: Rect, frame: inout Frame) {
        let rect = rect(in: area)
        frame.buffer.fill(rect, style: theme[.modal])
        frame.clearHits()
        block.render(in: rect, frame: &frame)
    }
}
