/// What a screen renders into: the buffer, the regions a mouse click acts on, and where the
/// text cursor is (nil: hidden).
public struct Frame: Sendable {
    /// A clickable region and the name of what it does.
    public struct Hit: Hashable, Sendable {
        public var rect: Rect
        public var id: String
    }

    public var buffer: Buffer
    public private(set) var hits: [Hit] = []
    public var cursor: (x: Int, y: Int)?

    public init(width: Int, height: Int) { buffer = Buffer(width: width, height: height) }

    public var area: Rect { buffer.area }

    public mutating func hit(_ rect: Rect, _ id: String) { hits.append(Hit(rect: rect, id: id)) }

    /// The topmost region under a click (the last one drawn wins, as modals are drawn last).
    public func hit(x: Int, y: Int) -> String? { hits.last { $0.rect.contains(x: x, y: y) }?.id }

    /// Forgets the regions under a modal, so clicks outside it do nothing.
    public mutating func clearHits() { hits.removeAll() }
}
