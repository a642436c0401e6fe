/// Where frames go: a real terminal (curses) or memory (`TestBackend`). A backend draws the runs
/// of cells it is given and nothing else; `Terminal` decides what changed.
@MainActor
public protocol Backend: AnyObject {
    /// The screen's size in cells.
    var size: (width: Int, height: Int) { get }
    /// Forgets what the screen shows (the next runs cover all of it).
    func clear()
    /// Writes runs of cells (each one row, left to right).
    func draw(_ runs: [BufferDiff.Run])
    /// Shows the text cursor at a cell, or hides it.
    func setCursor(_ position: (x: Int, y: Int)?)
    /// Sends what was drawn to the screen.
    func flush()
}

/// Where keys, clicks, resizes and signals come from. The ncurses backend reads stdin; a
/// `TestBackend` is handed a script.
@MainActor
public protocol EventSource: AnyObject {
    /// Starts delivering: `onEvent` for every key, click and resize; `onSignal` for SIGINT,
    /// SIGTERM and SIGHUP (the caller stops, then gives the terminal back with `stop()`).
    func start(onEvent: @escaping @MainActor (KeyEvent) -> Void, onSignal: @escaping @MainActor (Int32) -> Void)
    /// Stops delivering and gives the terminal back (idempotent).
    func stop()
}
