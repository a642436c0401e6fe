import SQLKit

/// What the store runs on: the embedded SQLite file or a PostgreSQL database. Both hand the
/// services an `SQLDatabase`, so every query is written once in SQLKit.
protocol StoreEngine: Sendable {
    var kind: Store.Kind { get }
    /// Runs `body` where it sees only committed data; a write there fails (SQLite) or runs on its
    /// own (PostgreSQL): services only read in it.
    func read<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T
    /// Runs `body` in one transaction, committed before this returns; a body that throws leaves
    /// nothing behind. The body may run more than once (PostgreSQL retries a transaction that
    /// lost a race with another instance), so it does nothing but database work. Transactions
    /// that share one of their `keys` (a customer's changes; sorted, so two transactions take
    /// them in the same order) run one after another across instances rather than racing and
    /// being retried.
    func transaction<T>(keys: [String], _ body: (any SQLDatabase) async throws -> T) async throws -> T
    /// Runs `body` outside any transaction (schema work; tests).
    func exclusive<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T
    func close() async
}
