/// Splits an area into parts along one direction by constraints (Ratatui's `Layout`, small):
/// `.fixed(n)` takes n cells, `.min(n)` at least n and a share of what is left when nothing
/// fills, `.fill(weight)` shares what is left by weight. Parts that do not fit are clipped, the
/// last first.
public struct Layout: Sendable {
    public enum Direction: Sendable { case vertical, horizontal }

    public enum Constraint: Hashable, Sendable {
        case fixed(Int)
        case min(Int)
        case fill(Int = 1)
    }

    public var direction: Direction
    public var constraints: [Constraint]
    /// Cells between neighbouring parts.
    public var spacing: Int

    public static func vertical(_ constraints: [Constraint], spacing: Int = 0) -> Layout {
        Layout(direction: .vertical, constraints: constraints, spacing: spacing)
    }

    public static func horizontal(_ constraints: [Constraint], spacing: Int = 0) -> Layout {
        Layout(direction: .horizontal, constraints: constraints, spacing: spacing)
    }

    /// The parts of `area`, one per constraint, in order.
    public func split(_ area: Rect) -> [Rect] {
        let total = direction == .vertical ? area.height : area.width
        let sizes = Self.sizes(constraints, total: max(0, total - spacing * max(0, constraints.count - 1)))
        var offset = 0
        return sizes.map { size in
            let start = min(offset, total)
            let length = max(0, min(size, total - start))
            offset += size + spacing
            return direction == .vertical
                ? Rect(x: area.x, y: area.y + start, width: area.width, height: length)
                : Rect(x: area.x + start, y: area.y, width: length, height: area.height)
        }
    }

    /// Sizes along the direction: the fixed and minimum sizes first; what is left goes to the
    /// fills by weight (the remainder to the first ones), or, with no fill, shared by the minimums.
    static func sizes(_ constraints: [Constraint], total: Int) -> [Int] {
        var sizes = constraints.map { constraint -> Int in
            switch constraint {
            case .fixed(let n), .min(let n): max(0, n)
            case .fill: 0
            }
        }
        var left = max(0, total - sizes.reduce(0, +))
        let fills = constraints.indices.compactMap { index -> (Int, Int)? in
            if case .fill(let weight) = constraints[index] { return (index, max(0, weight)) }
            return nil
        }
        let growing = fills.isEmpty ? constraints.indices.filter { if case .min = constraints[$0] { true } else { false } }.map { ($0, 1) } : fills
        let weights = growing.reduce(0) { $0 + $1.1 }
        guard weights > 0, left > 0 else { return sizes }
        let share = left
        for (index, weight) in growing {
            let part = share * weight / weights
            sizes[index] += part
            left -= part
        }
        for (index, _) in growing where left > 0 {
            sizes[index] += 1
            left -= 1
        }
        return sizes
    }
}
