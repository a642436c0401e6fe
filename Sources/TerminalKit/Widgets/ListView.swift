/// A scrolling list with one selected row, kept in view; each row is a click region
/// "\(hitPrefix)\(index)".
public struct ListView: Widget {
    public struct Item: Hashable, Sendable {
        public let text: String
        public var style: Style?
        /// Columns of `text`, measured once when the item is made: a frame that draws the rows
        /// again (every selection move) cuts only those too wide for their row.
        public let width: Int
        public init(_ text: String, style: Style? = nil) {
            self.text = text
            self.style = style
            width = CharacterWidth.of(text)
        }
    }

    public var items: [Item]
    public var selected: Int?
    public var theme: Theme
    public var hitPrefix: String

    public init(_ items: [Item], selected: Int?, theme: Theme, hitPrefix: String) {
        self.items = items
        self.selected = selected
        self.theme = theme
        self.hitPrefix = hitPrefix
    }

    /// The first visible row that keeps `selected` in view (centred while the list scrolls).
    public static func offset(selected: Int, count: Int, height: Int) -> Int {
        guard height > 0, count > height else { return 0 }
        return min(max(0, selected - height / 2), count - height)
    }

    public func height(width: Int) -> Int { items.count }

    /// The selected row is marked in its first column (in the marker style), so moving the
    /// selection redraws two cells, not two rows. When the list is longer than its area, the
    /// position ("1–19 of 20") takes the end of the last row, and that row's text is cut before it.
    public func render(in rect: Rect, frame: inout Frame) {
        let start = Self.offset(selected: selected ?? 0, count: items.count, height: rect.height)
        let position = items.count > rect.height && rect.width > 0
            ? "\(start + 1)\u{2013}\(min(items.count, start + rect.height)) of \(items.count)" : nil
        let positionWidth = position.map { CharacterWidth.of($0) + 1 } ?? 0
        let (textStyle, markerStyle) = (theme[.text], theme[.marker])
        for (row, index) in (start..<min(items.count, start + rect.height)).enumerated() {
            let line = rect.row(row)
            let isSelected = index == selected
            let room = line.width - 1 - (line.y == rect.maxY - 1 ? positionWidth : 0)
            frame.buffer.put(isSelected ? "\u{25B8}" : " ", x: line.x, y: line.y, style: isSelected ? markerStyle : textStyle)
            let item = items[index], area = Rect(x: line.x + 1, y: line.y, width: max(0, room), height: 1)
            if area.width >= 2 {
                // A space, then the text cut with "…" to the rest: what Line(" " + text) draws,
                // without building that string for every row of every frame.
                let style = item.style ?? textStyle
                frame.buffer.put(" ", x: area.x, y: area.y, style: style, clip: area)
                let text = item.width <= area.width - 1 ? item.text : CharacterWidth.truncate(item.text, to: area.width - 1)
                frame.buffer.put(text, x: area.x + 1, y: area.y, style: style, clip: area)
            } else {
                frame.render(Line(" " + item.text, style: item.style ?? textStyle, truncates: true), in: area)
            }
            frame.hit(line, "\(hitPrefix)\(index)")
        }
        if let position {
            frame.buffer.put(position, x: rect.maxX - CharacterWidth.of(position), y: rect.maxY - 1, style: theme[.muted])
        }
    }
}

/// Choices with number keys: "1 (•) Label", labels wrapped. Each is a click region
/// "\(hitPrefix)\(index)".
public struct RadioList: Widget {
    public var labels: [String]
    public var chosen: Int?
    public var focused: Int?
    public var theme: Theme
    public var hitPrefix: String

    public init(_ labels: [String], chosen: Int?, focused: Int?, theme: Theme, hitPrefix: String) {
        self.labels = labels
        self.chosen = chosen
        self.focused = focused
        self.theme = theme
        self.hitPrefix = hitPrefix
    }

    public func height(width: Int) -> Int {
        labels.reduce(0) { $0 + max(1, Text.wrap($1, width: max(1, width - 8)).count) }
    }

    public func render(in rect: Rect, frame: inout Frame) {
        var y = rect.y
        for (index, label) in labels.enumerated() where y < rect.maxY {
            let mark = index == chosen ? "(\u{2022})" : "( )"
            let number = index < 9 ? "\(index + 1)" : " "
            let lines = Text.wrap(label, width: max(1, rect.width - 8))
            let style = index == focused ? theme[.selection] : theme[.text]
            let first = Rect(x: rect.x, y: y, width: rect.width, height: 1)
            if index == focused { frame.buffer.fill(first, style: style) }
            frame.buffer.put("\(number) \(mark) ", x: rect.x, y: y, style: index == focused ? style : theme[.accent])
            for (offset, text) in lines.enumerated() where y + offset < rect.maxY {
                frame.buffer.put(text, x: rect.x + 8, y: y + offset, style: style, clip: rect)
            }
            let height = min(lines.count, rect.maxY - y)
            frame.hit(Rect(x: rect.x, y: y, width: rect.width, height: height), "\(hitPrefix)\(index)")
            y += max(1, height)
        }
    }
}
