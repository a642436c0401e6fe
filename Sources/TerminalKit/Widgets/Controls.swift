/// Small pieces of a screen: buttons, progress dots, a bar chart, the status bar, toasts.
public enum Button {
    /// "[ Label ]"; returns its width. A hit region named `id`.
    @discardableResult
    public static func draw(_ label: String, id: String, x: Int, y: Int, focused: Bool, theme: Theme, into frame: inout Frame) -> Int {
        let text = "[ \(label) ]"
        let width = frame.buffer.put(text, x: x, y: y, style: focused ? theme[.buttonFocused] : theme[.button])
        frame.hit(Rect(x: x, y: y, width: width, height: 1), id)
        return width
    }

    /// Buttons in a row, two spaces apart; returns the width used.
    @discardableResult
    public static func row(_ buttons: [(label: String, id: String)], focused: Int?, x: Int, y: Int, theme: Theme, into frame: inout Frame) -> Int {
        var column = x
        for (index, button) in buttons.enumerated() {
            column += draw(button.label, id: button.id, x: column, y: y, focused: index == focused, theme: theme, into: &frame) + 2
        }
        return column - x
    }
}

public enum ProgressDots {
    /// "● ● ○ ○" for step `current` (0-based) of `total`.
    public static func text(current: Int, total: Int) -> String {
        (0..<total).map { $0 <= current ? "\u{25CF}" : "\u{25CB}" }.joined(separator: " ")
    }
}

public enum BarChart {
    public struct Bar: Hashable, Sendable {
        public var label: String
        public var value: Int
        public init(label: String, value: Int) {
            self.label = label
            self.value = value
        }
    }

    /// Horizontal bars, one per row: label, bar scaled to the largest value, value.
    public static func draw(_ bars: [Bar], in rect: Rect, theme: Theme, into buffer: inout Buffer) {
        let labelWidth = min(rect.width / 3, (bars.map { CharacterWidth.of($0.label) }.max() ?? 0))
        let valueWidth = (bars.map { String($0.value).count }.max() ?? 1)
        let barWidth = max(1, rect.width - labelWidth - valueWidth - 3)
        let largest = max(1, bars.map(\.value).max() ?? 1)
        for (row, bar) in bars.prefix(rect.height).enumerated() {
            let y = rect.y + row
            buffer.put(CharacterWidth.truncate(bar.label, to: labelWidth), x: rect.x, y: y, style: theme[.text])
            let length = bar.value == 0 ? 0 : max(1, bar.value * barWidth / largest)
            buffer.put(String(repeating: "\u{2588}", count: length), x: rect.x + labelWidth + 1, y: y, style: theme[.chartBar])
            buffer.put(String(bar.value), x: rect.x + labelWidth + 2 + length, y: y, style: theme[.muted])
        }
    }
}

public enum StatusBar {
    /// One row: segments from the left, then from the right, each with its style.
    public static func draw(left: [(String, Style)], right: [(String, Style)], in rect: Rect, theme: Theme, into buffer: inout Buffer) {
        buffer.fill(rect, style: theme[.statusBar])
        var x = rect.x
        for (text, style) in left where x < rect.maxX {
            x += buffer.put(" \(text) ", x: x, y: rect.y, style: style, clip: rect) + 1
        }
        var end = rect.maxX
        for (text, style) in right.reversed() {
            let width = CharacterWidth.of(text) + 2
            guard end - width > x else { break }
            end -= width
            buffer.put(" \(text) ", x: end, y: rect.y, style: style, clip: rect)
            end -= 1
        }
    }
}

public enum Toast {
    /// A message box over the bottom right of `rect`; returns where it went.
    @discardableResult
    public static func draw(_ message: String, hint: String?, isError: Bool, in rect: Rect, theme: Theme, into frame: inout Frame) -> Rect {
        let width = min(rect.width, max(24, min(60, CharacterWidth.of(message) + 4)))
        let lines = Text.wrap(message, width: width - 2)
        let height = min(rect.height, lines.count + (hint == nil ? 0 : 1))
        let box = Rect(x: rect.maxX - width, y: rect.maxY - height, width: width, height: height)
        let style = isError ? theme[.toastError] : theme[.toastInfo]
        frame.buffer.fill(box, style: style)
        for (index, line) in lines.prefix(height).enumerated() {
            frame.buffer.put(line, x: box.x + 1, y: box.y + index, style: style, clip: box)
        }
        if let hint { frame.buffer.put(hint, x: box.x + 1, y: box.maxY - 1, style: style.adding(.bold), clip: box) }
        return box
    }
}
