/// A piece of a screen: a value that says what to draw, drawn into an area of a frame (its
/// buffer, plus the regions a click acts on and the text cursor, which Ratatui keeps apart and
/// this console needs with the cells). Drawing changes nothing but the frame.
public protocol Widget {
    func render(in area: Rect, frame: inout Frame)
    /// The rows it needs at this width (a `Column` places it with that many).
    func height(width: Int) -> Int
}

extension Widget {
    public func height(width: Int) -> Int { 1 }
}

/// A widget whose state outlives a frame and belongs to the screen (a text field's text and
/// cursor): the widget says how to draw it, the state is handed in, and drawing does not change it.
public protocol StatefulWidget {
    associatedtype State
    func render(in area: Rect, frame: inout Frame, state: State)
}

extension Frame {
    public mutating func render(_ widget: some Widget, in area: Rect) { widget.render(in: area, frame: &self) }

    public mutating func render<W: StatefulWidget>(_ widget: W, in area: Rect, state: W.State) {
        widget.render(in: area, frame: &self, state: state)
    }
}

/// Widgets one under another from the top of an area, each given the rows it needs (at most what
/// is left): the layout of a page of flowing text, where a paragraph's height is known only once
/// it is wrapped.
public struct Column {
    /// What is left below the widgets placed so far.
    public private(set) var rest: Rect

    public init(_ area: Rect) { rest = area }

    /// The next row's y (where the next widget goes).
    public var y: Int { rest.y }

    /// Renders `widget` in the next rows (as many as it needs, at most `maxHeight` and what is
    /// left, at most `width` wide, `indent` columns in); returns where it went.
    @discardableResult
    public mutating func place(
        _ widget: some Widget, maxHeight: Int = .max, width: Int? = nil, indent: Int = 0, into frame: inout Frame
    ) -> Rect {
        let columns = min(width ?? rest.width, rest.width - indent)
        let rows = min(widget.height(width: columns), maxHeight)
        let area = take(rows, width: columns, indent: indent)
        widget.render(in: area, frame: &frame)
        return area
    }

    /// The next `rows` rows (clipped to what is left), and moves past them.
    public mutating func take(_ rows: Int, width: Int? = nil, indent: Int = 0) -> Rect {
        let (top, rest) = rest.splitTop(rows)
        self.rest = rest
        return Rect(x: top.x + indent, y: top.y, width: min(width ?? top.width, top.width - indent), height: top.height)
    }

    /// Leaves `rows` blank rows.
    public mutating func skip(_ rows: Int = 1) { _ = take(rows) }
}
