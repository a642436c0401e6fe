/// A one-line text field: UTF-8 text edited by grapheme, with a cursor.
public struct TextFieldState: Hashable, Sendable {
    public private(set) var text: String
    /// The cursor, in graphemes from the start.
    public private(set) var cursor: Int

    public init(_ text: String = "") {
        self.text = text
        cursor = text.count
    }

    public mutating func insert(_ character: Character) {
        let index = text.index(text.startIndex, offsetBy: cursor)
        text.insert(character, at: index)
        cursor += 1
    }

    public mutating func set(_ value: String) {
        text = value
        cursor = value.count
    }

    /// Whether `handle` takes the key (an edit or a cursor move), without applying it.
    public static func isEdit(_ key: KeyEvent) -> Bool {
        var probe = TextFieldState()
        return probe.handle(key)
    }

    /// Applies an editing key; false when the key is not an edit (the screen handles it).
    public mutating func handle(_ key: KeyEvent) -> Bool {
        switch key {
        case .character(let c) where !c.isNewline:
            insert(c)
        case .backspace:
            guard cursor > 0 else { return true }
            text.remove(at: text.index(text.startIndex, offsetBy: cursor - 1))
            cursor -= 1
        case .delete:
            guard cursor < text.count else { return true }
            text.remove(at: text.index(text.startIndex, offsetBy: cursor))
        case .left: cursor = max(0, cursor - 1)
        case .right: cursor = min(text.count, cursor + 1)
        case .home, .control("a"): cursor = 0
        case .end, .control("e"): cursor = text.count
        case .control("u"): set("")
        default: return false
        }
        return true
    }
}

/// How a one-line text field is drawn (its text and cursor are the screen's `TextFieldState`):
/// scrolled so the cursor shows, the placeholder while empty, and the frame's cursor in it when
/// it has the focus.
public struct TextField: StatefulWidget {
    public var placeholder: String
    public var focused: Bool
    public var theme: Theme

    public init(placeholder: String = "", focused: Bool, theme: Theme) {
        self.placeholder = placeholder
        self.focused = focused
        self.theme = theme
    }

    public func render(in rect: Rect, frame: inout Frame, state: TextFieldState) {
        let text = state.text, cursor = state.cursor
        guard rect.width > 0 else { return }
        frame.buffer.fill(rect, style: theme[.input])
        if text.isEmpty {
            frame.buffer.put(CharacterWidth.truncate(placeholder, to: rect.width), x: rect.x, y: rect.y, style: theme[.muted].adding(.underline))
            if focused { frame.cursor = (rect.x, rect.y) }
            return
        }
        let before = String(text.prefix(cursor))
        var start = text.startIndex
        // Scroll: drop graphemes from the left until the cursor fits.
        while CharacterWidth.of(text[start..<text.index(text.startIndex, offsetBy: cursor)]) > rect.width - 1 {
            start = text.index(after: start)
        }
        let visible = CharacterWidth.prefix(text[start...], fitting: rect.width).text
        frame.buffer.put(visible, x: rect.x, y: rect.y, style: theme[.input], clip: rect)
        if focused {
            let column = CharacterWidth.of(before) - CharacterWidth.of(text[text.startIndex..<start])
            frame.cursor = (rect.x + column, rect.y)
        }
    }
}
