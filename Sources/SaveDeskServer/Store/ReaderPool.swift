import Synchronization

/// The store's read-only connections: a request that only reads borrows one, so reads run side by
/// side and never queue behind the writer (WAL gives each its own snapshot of committed data).
/// Borrowers beyond the pool's size wait first come, first served. A lock rather than an actor:
/// a free connection is taken without a hop.
final class ReaderPool: Sendable {
    private struct State {
        var idle: [SQLiteThreadConnection]
        var waiters: [CheckedContinuation<SQLiteThreadConnection, Never>] = []
    }

    private let state: Mutex<State>
    private let all: [SQLiteThreadConnection]

    init(_ connections: [SQLiteThreadConnection]) {
        state = Mutex(State(idle: connections))
        all = connections
    }

    func borrow() async -> SQLiteThreadConnection {
        if let connection = state.withLock({ $0.idle.popLast() }) { return connection }
        return await withCheckedContinuation { waiting in
            // Given back meanwhile: taken at once; else the next to be given back is this one's.
            let free = state.withLock { state -> SQLiteThreadConnection? in
                if let connection = state.idle.popLast() { return connection }
                state.waiters.append(waiting)
                return nil
            }
            if let free { waiting.resume(returning: free) }
        }
    }

    func giveBack(_ connection: SQLiteThreadConnection) {
        let next = state.withLock { state -> CheckedContinuation<SQLiteThreadConnection, Never>? in
            if state.waiters.isEmpty {
                state.idle.append(connection)
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume(returning: connection)
    }

    /// Statements the readers have prepared.
    var preparations: Int { all.reduce(0) { $0 + $1.preparations.load(ordering: .relaxed) } }

    func close() async {
        for connection in all { await connection.close() }
    }
}
