/// "[ Label ]", a click region named `id`.
public struct Button: Widget {
    public var label: String
    public var id: String
    public var focused: Bool
    /// Enter presses it: marked in its text (`[▸Label◂]`), so it shows without colour too.
    public var marked: Bool
    public var theme: Theme

    public init(_ label: String, id: String, focused: Bool, marked: Bool? = nil, theme: Theme) {
        self.label = label
        self.id = id
        self.focused = focused
        self.marked = marked ?? focused
        self.theme = theme
    }

    private var text: String { marked ? "[\u{25B8}\(label)\u{25C2}]" : "[ \(label) ]" }
    public var width: Int { CharacterWidth.of(text) }

    public func render(in area: Rect, frame: inout Frame) {
        guard area.height > 0 else { return }
        let width = frame.buffer.put(text, x: area.x, y: area.y, style: focused ? theme[.buttonFocused] : theme[.button])
        frame.hit(Rect(x: area.x, y: area.y, width: width, height: 1), id)
    }
}

/// Buttons in a row, two spaces apart; one may have the focus. The one Enter presses is marked
/// (the focused one, else `enter`).
public struct ButtonRow: Widget {
    public var buttons: [(label: String, id: String)]
    public var focused: Int?
    /// What Enter presses when no button has the focus.
    public var enter: Int?
    public var theme: Theme

    public init(_ buttons: [(label: String, id: String)], focused: Int?, enter: Int? = nil, theme: Theme) {
        self.buttons = buttons
        self.focused = focused
        self.enter = enter
        self.theme = theme
    }

    public func render(in area: Rect, frame: inout Frame) {
        var x = area.x
        for (index, button) in buttons.enumerated() {
            let widget = Button(button.label, id: button.id, focused: index == focused, marked: index == (focused ?? enter), theme: theme)
            widget.render(in: Rect(x: x, y: area.y, width: widget.width, height: area.height), frame: &frame)
            x += widget.width + 2
        }
    }
}

public enum ProgressDots {
    /// "● ● ○ ○" for step `current` (0-based) of `total`.
    public static func text(current: Int, total: Int) -> String {
        (0..<total).map { $0 <= current ? "\u{25CF}" : "\u{25CB}" }.joined(separator: " ")
    }
}

/// Horizontal bars, one per row: label, bar scaled to the largest value, value.
public struct BarChart: Widget {
    public struct Bar: Hashable, Sendable {
        public var label: String
        public var value: Int
        public init(label: String, value: Int) {
            self.label = label
            self.value = value
        }
    }

    public var bars: [Bar]
    public var theme: Theme

    public init(_ bars: [Bar], theme: Theme) {
        self.bars = bars
        self.theme = theme
    }

    public func height(width: Int) -> Int { bars.count }

    public func render(in rect: Rect, frame: inout Frame) {
        let labelWidth = min(rect.width / 3, (bars.map { CharacterWidth.of($0.label) }.max() ?? 0))
        let valueWidth = (bars.map { String($0.value).count }.max() ?? 1)
        let barWidth = max(1, rect.width - labelWidth - valueWidth - 3)
        let largest = max(1, bars.map(\.value).max() ?? 1)
        for (row, bar) in bars.prefix(rect.height).enumerated() {
            let y = rect.y + row
            frame.buffer.put(CharacterWidth.truncate(bar.label, to: labelWidth), x: rect.x, y: y, style: theme[.text])
            let length = bar.value == 0 ? 0 : max(1, bar.value * barWidth / largest)
            frame.buffer.put(String(repeating: "\u{2588}", count: length), x: rect.x + labelWidth + 1, y: y, style: theme[.chartBar])
            frame.buffer.put(String(bar.value), x: rect.x + labelWidth + 2 + length, y: y, style: theme[.muted])
        }
    }
}

/// One row: segments from the left, then from the right, each with its style.
public struct StatusBar: Widget {
    public var left: [(String, Style)]
    public var right: [(String, Style)]
    public var theme: Theme

    public init(left: [(String, Style)], right: [(String, Style)], theme: Theme) {
        self.left = left
        self.right = right
        self.theme = theme
    }

    public func render(in rect: Rect, frame: inout Frame) {
        frame.buffer.fill(rect, style: theme[.statusBar])
        var x = rect.x
        for (text, style) in left where x < rect.maxX {
            x += frame.buffer.put(" \(text) ", x: x, y: rect.y, style: style, clip: rect) + 1
        }
        var end = rect.maxX
        for (text, style) in right.reversed() {
            let width = CharacterWidth.of(text) + 2
            guard end - width > x else { break }
            end -= width
            frame.buffer.put(" \(text) ", x: end, y: rect.y, style: style, clip: rect)
            end -= 1
        }
    }
}

/// A message box over the bottom right of an area.
public struct Toast: Widget {
    public var message: String
    public var hint: String?
    public var isError: Bool
    public var theme: Theme

    public init(_ message: String, hint: String?, isError: Bool, theme: Theme) {
        self.message = message
        self.hint = hint
        self.isError = isError
        self.theme = theme
    }

    private var boxWidth: Int { max(24, min(60, CharacterWidth.of(message) + 4)) }

    /// Where it goes in `area`.
    public func rect(in area: Rect) -> Rect {
        let width = min(area.width, boxWidth)
        let height = min(area.height, Text.wrap(message, width: width - 2).count + (hint == nil ? 0 : 1))
        return Rect(x: area.maxX - width, y: area.maxY - height, width: width, height: height)
    }

    public func render(in area: Rect, frame: inout Frame) {
        let box = rect(in: area)
        let style = isError ? theme[.toastError] : theme[.toastInfo]
        frame.buffer.fill(box, style: style)
        for (index, line) in Text.wrap(message, width: box.width - 2).prefix(box.height).enumerated() {
            frame.buffer.put(line, x: box.x + 1, y: box.y + index, style: style, clip: box)
        }
        if let hint { frame.buffer.put(hint, x: box.x + 1, y: box.maxY - 1, style: style.adding(.bold), clip: box) }
    }
}
