/// A scrolling list with one selected row, kept in view.
public enum ListView {
    public struct Item: Hashable, Sendable {
        public var text: String
        public var style: Style?
        public init(_ text: String, style: Style? = nil) {
            self.text = text
            self.style = style
        }
    }

    /// The first visible row that keeps `selected` in view (centred while the list scrolls).
    public static func offset(selected: Int, count: Int, height: Int) -> Int {
        guard height > 0, count > height else { return 0 }
        return min(max(0, selected - height / 2), count - height)
    }

    /// Draws the visible items; each row is a hit region "\(hitPrefix)\(index)". The selected row
    /// is marked in its first column (in the selection style), so moving the selection redraws two
    /// cells, not two rows.
    public static func draw(
        _ items: [Item], selected: Int?, in rect: Rect, theme: Theme, hitPrefix: String, into frame: inout Frame
    ) {
        let start = offset(selected: selected ?? 0, count: items.count, height: rect.height)
        for (row, index) in (start..<min(items.count, start + rect.height)).enumerated() {
            let line = rect.row(row)
            let isSelected = index == selected
            frame.buffer.put(isSelected ? "\u{25B8}" : " ", x: line.x, y: line.y, style: isSelected ? theme[.selection] : theme[.text])
            Text.line(" " + items[index].text, in: Rect(x: line.x + 1, y: line.y, width: line.width - 1, height: 1),
                      style: items[index].style ?? theme[.text], into: &frame.buffer)
            frame.hit(line, "\(hitPrefix)\(index)")
        }
        if items.count > rect.height, rect.width > 0 {
            let marker = "\(start + 1)–\(min(items.count, start + rect.height)) of \(items.count)"
            frame.buffer.put(marker, x: rect.maxX - CharacterWidth.of(marker), y: rect.maxY - 1, style: theme[.muted])
        }
    }
}

/// Choices with number keys: "1 (•) Label". Each is a hit region "\(hitPrefix)\(index)".
public enum RadioList {
    public static func draw(
        _ labels: [String], chosen: Int?, focused: Int?, in rect: Rect, theme: Theme, hitPrefix: String, into frame: inout Frame
    ) -> Int {
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
        return y - rect.y
    }
}
