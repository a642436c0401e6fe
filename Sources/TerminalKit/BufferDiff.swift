/// The cells that differ between two frames, as runs of adjacent cells on a row, so the backend
/// moves the cursor once per run.
public enum BufferDiff {
    public struct Run: Hashable, Sendable {
        public var x: Int
        public var y: Int
        public var cells: [Cell]
    }

    /// Every run of changed cells; everything when the sizes differ (or there is no previous frame).
    public static func runs(from old: Buffer?, to new: Buffer) -> [Run] {
        let sameSize = old.map { $0.width == new.width && $0.height == new.height } ?? false
        var runs: [Run] = []
        for y in 0..<new.height {
            // Most rows are as they were: their bytes compare equal and no cell is looked at. (Cells
            // are plain data; bytes that differ only in padding fall through to the cell by cell
            // comparison, which is what decides.)
            if sameSize, new.rowBytesEqual(y, in: old!) { continue }
            var current: Run?
            for x in 0..<new.width {
                let cell = new[x, y]
                let changed = !sameSize || old![x, y] != cell
                // A wide cell whose continuation changed is redrawn whole.
                let wideChanged = !cell.isContinuation && x + 1 < new.width && new[x + 1, y].isContinuation && (!sameSize || old![x + 1, y] != new[x + 1, y])
                if changed || wideChanged {
                    if current == nil { current = Run(x: x, y: y, cells: []) }
                    current!.cells.append(cell)
                } else if let run = current {
                    runs.append(run)
                    current = nil
                }
            }
            if let run = current { runs.append(run) }
        }
        return runs
    }
}
