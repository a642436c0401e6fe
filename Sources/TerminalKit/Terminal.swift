/// A backend plus the frame it shows: draws a frame by sending only the cells that differ from
/// the previous one (a resize, or the first frame, sends all), then the cursor, then one flush.
@MainActor
public final class Terminal<B: Backend> {
    public let backend: B
    /// The last frame drawn (nil: the next frame is drawn whole).
    public private(set) var previous: Buffer?
    /// Cells the last `draw` sent (what a frame cost).
    public private(set) var lastDrawnCells = 0

    public init(backend: B) { self.backend = backend }

    public var size: (width: Int, height: Int) { backend.size }

    /// The screen no longer shows the last frame (resized, or redrawn by someone else).
    public func invalidate() { previous = nil }

    public func draw(_ frame: Frame) {
        let buffer = frame.buffer
        let sameSize = previous.map { $0.width == buffer.width && $0.height == buffer.height } ?? false
        if !sameSize { backend.clear() }
        let runs = BufferDiff.runs(from: sameSize ? previous : nil, to: buffer)
        backend.draw(runs)
        backend.setCursor(frame.cursor)
        backend.flush()
        lastDrawnCells = runs.reduce(0) { $0 + $1.cells.count }
        previous = buffer
    }
}
