import SQLiteKit

/// The store's read-only connections: a request that only reads borrows one, so reads run side by
/// side and never queue behind the writer (WAL gives each its own snapshot of committed data).
/// Borrowers beyond the pool's size wait first come, first served.
actor ReaderPool {
    private var idle: [SQLiteConnection]
    private let all: [SQLiteConnection]
    private var waiters: [CheckedContinuation<SQLiteConnection, Never>] = []

    init(_ connections: [SQLiteConnection]) {
        idle = connections
        all = connections
    }

    func borrow() async -> SQLiteConnection {
        if let connection = idle.popLast() { return connection }
        return await withCheckedContinuation { waiters.append($0) }
    }

    func giveBack(_ connection: SQLiteConnection) {
        if waiters.isEmpty {
            idle.append(connection)
        } else {
            waiters.removeFirst().resume(returning: connection)
        }
    }

    func close() async {
        for connection in all { try? await connection.close() }
    }
}
