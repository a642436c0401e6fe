/// A rectangle of cells; layout helpers split it into the parts of a screen.
public struct Rect: Hashable, Sendable {
    public var x: Int
    public var y: Int
    public var width: Int
    public var height: Int

    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = max(0, width)
        self.height = max(0, height)
    }

    public var maxX: Int { x + width }
    public var maxY: Int { y + height }
    public var isEmpty: Bool { width == 0 || height == 0 }

    public func contains(x px: Int, y py: Int) -> Bool { px >= x && px < maxX && py >= y && py < maxY }

    /// Shrunk by `dx` columns on each side and `dy` rows at top and bottom.
    public func inset(dx: Int = 1, dy: Int = 1) -> Rect {
        Rect(x: x + dx, y: y + dy, width: width - 2 * dx, height: height - 2 * dy)
    }

    /// The first `rows` rows, and the rest.
    public func splitTop(_ rows: Int) -> (top: Rect, rest: Rect) {
        let rows = min(max(0, rows), height)
        return (Rect(x: x, y: y, width: width, height: rows), Rect(x: x, y: y + rows, width: width, height: height - rows))
    }

    /// The rest, and the last `rows` rows.
    public func splitBottom(_ rows: Int) -> (rest: Rect, bottom: Rect) {
        let rows = min(max(0, rows), height)
        return (Rect(x: x, y: y, width: width, height: height - rows), Rect(x: x, y: maxY - rows, width: width, height: rows))
    }

    /// The first `columns` columns, and the rest (with `gap` columns between them).
    public func splitLeft(_ columns: Int, gap: Int = 0) -> (left: Rect, right: Rect) {
        let columns = min(max(0, columns), width)
        return (Rect(x: x, y: y, width: columns, height: height),
                Rect(x: x + columns + gap, y: y, width: width - columns - gap, height: height))
    }

    /// One row.
    public func row(_ index: Int) -> Rect { Rect(x: x, y: y + index, width: width, height: index < height ? 1 : 0) }

    /// A rectangle of this size centred here (clipped to fit).
    public func centered(width w: Int, height h: Int) -> Rect {
        let w = min(w, width), h = min(h, height)
        return Rect(x: x + (width - w) / 2, y: y + (height - h) / 2, width: w, height: h)
    }
}
