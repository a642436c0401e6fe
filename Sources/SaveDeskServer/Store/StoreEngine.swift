import NIOCore
import SQLKit

/// What the store runs on: the embedded SQLite file or a PostgreSQL database. Both hand the
/// services an `SQLDatabase`, so every query is written once in SQLKit.
protocol StoreEngine: Sendable {
    var kind: Store.Kind { get }
    /// Runs `body` where it sees only committed data; a write there fails (SQLite) or runs on its
    /// own (PostgreSQL): services only read in it.
    func read<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T
    /// `read`, for statements run often whose plan does not depend on their values (a few rows by
    /// their key before every change, the notification after it): an engine may keep them prepared.
    func lookup<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T
    /// `read`, for a report whose statements each have one plan that suits any of their values
    /// (the funnel's sums: every part bounded by its table's index on the range): an engine may
    /// keep them prepared and plan them once, not again for each run's values.
    func report<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T
    /// Runs `body` in one transaction, committed before this returns; a body that throws leaves
    /// nothing behind. The body may run more than once (PostgreSQL retries a transaction that
    /// lost a race with another instance), so it does nothing but database work. Transactions
    /// that share one of their `keys` (a customer's changes; sorted, so two transactions take
    /// them in the same order) run one after another across instances rather than racing and
    /// being retried.
    ///
    /// `prelude` only reads, once the keys are held (on PostgreSQL, if they are taken: see
    /// `PostgresEngine.KeysInFlight`) and before the body, and runs again with each
    /// run of it; what it returns is handed to the body. On PostgreSQL it runs before the
    /// transaction begins: what it reads sees every earlier holder of the keys' commits but is
    /// not part of the SERIALIZABLE transaction, so no commit is checked against it (the
    /// Idempotency-Key's lookup: read in the transaction, its b-tree page's predicate lock made
    /// writes of unrelated keys conflict). On SQLite, whose writer is alone, it runs first in the
    /// transaction.
    ///
    /// `queued`: the keys' holders alone keep this transaction apart from others, because only
    /// transactions of those keys write what it writes (a job's: the cancel-flow fold). On
    /// PostgreSQL it always takes the keys' locks and runs REPEATABLE READ: one snapshot, and no
    /// predicate locks, so the changes beside it (the responses it folds, listed meanwhile) never
    /// lose a race to it.
    func transaction<Prior, T>(
        keys: [String], queued: Bool, prelude: (any SQLDatabase) async throws -> Prior, _ body: (any SQLDatabase, Prior) async throws -> T
    ) async throws -> T
    /// Runs `body` outside any transaction (schema work; tests).
    func exclusive<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T
    func close() async
}

extension StoreEngine {
    func lookup<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T { try await read(body) }
    func report<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T { try await read(body) }
}

/// The store's own `SQLDatabase`s, whose statements run in `async` code: the future-returning
/// `execute` SQLKit also asks for runs that one, completed on the database's event loop.
protocol AsyncSQLDatabase: SQLDatabase {}

extension AsyncSQLDatabase {
    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        promise.completeWithTask { try await execute(sql: query, onRow) }
        return promise.futureResult
    }
}
