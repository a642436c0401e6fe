import Foundation
import Logging
import PostgresKit
import PostgresNIO
import _ConnectionPoolModule
import SQLKit
import Synchronization

/// The shared engine: a PostgreSQL database that several server instances use at once, through
/// a pool of connections per instance.
///
/// Every write transaction is SERIALIZABLE (a queued one, the fold's, REPEATABLE READ under its
/// key alone): whatever must happen once (an Idempotency-Key's
/// answer, one discount per subscription, one pause, one App Store notification per UUID, the
/// settlement of a subscription's billing) is read and written in one transaction, and
/// PostgreSQL aborts whichever of two overlapping transactions would break that. The loser is
/// run again from the start, where it sees the winner's committed work and answers as a repeat
/// does. A transaction that keeps losing is refused with 503 and Retry-After, never a 500.
///
/// Changes to one customer would race all the time (fifty taps on one offer), so a transaction
/// with a key that meets another of it (`KeysInFlight`) first takes a session advisory lock on it
/// and only then begins: its snapshot is taken after the previous holder committed, so it sees
/// that work and does not conflict.
final class PostgresEngine: StoreEngine {
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let logger: Logger
    /// The names given to the statements transactions run (see `PostgresPreparedDatabase`).
    private let names = PreparedNames()
    /// The keys this instance's transactions are working on now.
    private let keysInFlight = KeysInFlight()
    /// The calls waiting for a connection, and the task that bounds their waits.
    private let leases = LeaseWatch(limit: PostgresEngine.leaseTimeout)
    private let sweeper: Task<Void, Never>

    /// How long an instance waits at start for its database to answer.
    static let startTimeout: Duration = .seconds(10)

    /// Attempts of one transaction before it is refused as busy.
    static let attempts = 12

    /// How long a session waits for a lock before the attempt fails (and is retried).
    static let lockTimeoutMilliseconds = 5_000
    /// How long one statement may run before PostgreSQL cancels it.
    static let statementTimeoutMilliseconds = 30_000
    /// How long `close` waits for the pool to shut down before it gives up on it.
    static let closeTimeout: Duration = .seconds(5)

    var kind: Store.Kind { .postgres }

    private init(client: PostgresClient, runner: Task<Void, Never>, logger: Logger) {
        self.client = client
        self.runner = runner
        sweeper = Task { [leases] in await leases.run() }
        self.logger = logger
    }

    static func open(_ location: StoreLocation.PostgresLocation, logger: Logger) async throws -> PostgresEngine {
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: .disable
        )
        configuration.options.maximumConnections = location.maximumConnections
        configuration.options.minimumConnections = 0
        configuration.options.connectTimeout = .seconds(5)
        // No wait is unbounded: a lock (a customer's advisory lock included) that is not granted
        // within `lockTimeout` is an error that is retried, and a statement that runs past
        // `statementTimeout` is cancelled, so an app's request never hangs on the database.
        configuration.options.additionalStartupParameters = [
            ("lock_timeout", "\(Self.lockTimeoutMilliseconds)"),
            ("statement_timeout", "\(Self.statementTimeoutMilliseconds)"),
        ]
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let runner = Task { await client.run() }
        let engine = PostgresEngine(client: client, runner: runner, logger: logger)
        do {
            // The pool retries a refused connection for ever: a server that cannot reach its
            // database says so within a bound instead of hanging at start.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await client.query("SELECT 1", logger: logger) }
                group.addTask {
                    try await Task.sleep(for: Self.startTimeout)
                    throw SaveDeskError(status: 500, code: "database_unavailable", "no answer within \(Self.startTimeout)")
                }
                try await group.next()
                group.cancelAll()
            }
        } catch {
            await engine.close()
            let place = "\(location.username)@\(location.host):\(location.port)/\(location.database)"
            throw SaveDeskError(status: 500, code: "database_unavailable", "cannot reach the PostgreSQL database \(place): \(String(reflecting: error))")
        }
        return engine
    }

    func close() async {
        sweeper.cancel()
        if await !Self.stop(runner, within: Self.closeTimeout) {
            logger.warning("the PostgreSQL connection pool did not shut down within \(Self.closeTimeout); left to end on its own")
        }
    }

    /// Cancels the pool's task and waits for it to end, no longer than `limit` (false: it had
    /// not). A pool that never finishes shutting down must not keep whoever closes the store
    /// waiting: a test's seed once waited here for ever (the wait was a task group, which waits
    /// for its children however it is cancelled), and the whole test pass with it.
    static func stop(_ runner: Task<Void, Never>, within limit: Duration) async -> Bool {
        runner.cancel()
        if case .none = await Deadline.value(of: runner, within: limit) { return false }
        return true
    }

    func read<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await read(prepared: false, body)
    }

    /// A read of a few rows by their key (an Idempotency-Key's fingerprint, looked up before every
    /// change; the notification after it): its statements are prepared as a transaction's are
    /// (`PostgresPreparedDatabase`), so PostgreSQL binds and runs them without parsing and
    /// planning them each time. Other reads (searches, ranges of days) stay unnamed: each is
    /// planned for its own values, except the funnel's sums, a `report`.
    func lookup<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await read(prepared: true, body)
    }

    /// A report whose statements' one plan suits any of their values (the funnel's sums): prepared
    /// as a lookup's are, and planned once for any values (a generic plan) from their first run,
    /// by the connection's `plan_cache_mode` while the body runs (set back after it). PostgreSQL
    /// otherwise plans a prepared statement for each run's values five times before it weighs a
    /// generic plan, and kept doing so for the funnel of a week: planning its two dozen parts
    /// (3–5 ms) cost more than running them, and the generic plan ran faster too (1.1 against
    /// 3.0 ms, 4M responses).
    func report<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await read(prepared: true, generic: true, body)
    }

    private func read<T>(prepared: Bool, generic: Bool = false, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
        do {
            return try await withConnection { connection in
                guard prepared else { return try await body(connection.sql(queryLogLevel: nil)) }
                do {
                    if generic { try await connection.query("SET plan_cache_mode = force_generic_plan", logger: logger) }
                    let value = try await body(PostgresPreparedDatabase(connection: connection, names: names, logger: logger))
                    if generic { try await connection.query("RESET plan_cache_mode", logger: logger) }
                    return value
                } catch {
                    // A statement whose name cannot be used on this connection again, or a plan
                    // mode that could not be set back (every later statement on the connection,
                    // a search's too, would take a generic plan): a fresh one.
                    var spoiled = PostgresPreparedDatabase.spoilsConnection(error)
                    if generic, !spoiled { spoiled = (try? await connection.query("RESET plan_cache_mode", logger: logger)) == nil }
                    if spoiled { try? await connection.close() }
                    throw error
                }
            }
        } catch {
            throw Self.unavailable(error) ?? error
        }
    }

    func exclusive<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await read(body)
    }

    /// Listens on `channels` on a connection of its own until cancelled or the connection fails
    /// (then it throws): `ready` once every channel listens, `received` for each notification.
    func listen(
        _ channels: [String], ready: @Sendable () -> Void, received: @escaping @Sendable (_ channel: String, _ payload: String) -> Void
    ) async throws {
        try await client.withConnection { connection in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for channel in channels {
                    let notifications = try await connection.listen(channel)
                    group.addTask { for try await notification in notifications { received(channel, notification.payload) } }
                }
                ready()
                try await group.next()
                group.cancelAll()
            }
        }
    }

    func transaction<Prior, T>(
        keys: [String], queued: Bool, prelude: (any SQLDatabase) async throws -> Prior, _ body: (any SQLDatabase, Prior) async throws -> T
    ) async throws -> T {
        do {
            return try await attemptTransaction(keys: keys, queued: queued && !keys.isEmpty, prelude: prelude, body)
        } catch {
            throw Self.unavailable(error) ?? error
        }
    }

    private func attemptTransaction<Prior, T>(
        keys: [String], queued: Bool, prelude: (any SQLDatabase) async throws -> Prior, _ body: (any SQLDatabase, Prior) async throws -> T
    ) async throws -> T {
        // Alone in this instance on its keys, a first run goes without their locks (see `KeysInFlight`).
        let alone = keysInFlight.enter(keys)
        defer { keysInFlight.leave(keys) }
        var attempt = 1
        while true {
            let locking = queued || !keys.isEmpty && !(alone && attempt == 1)
            do {
                return try await withConnection { connection in
                    // Every statement prepared once per connection, the key's lock and release too.
                    let db = PostgresPreparedDatabase(connection: connection, names: names, logger: logger)
                    let outcome: Result<T, any Error>
                    do {
                        if locking {
                            for key in keys { try await db.raw("SELECT pg_advisory_lock(hashtextextended(\(bind: key), 0))").run() }
                        }
                        let prior = try await prelude(db)
                        try await connection.query(queued ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN ISOLATION LEVEL SERIALIZABLE", logger: logger)
                        let value = try await body(db, prior)
                        try await connection.query("COMMIT", logger: logger)
                        outcome = .success(value)
                    } catch {
                        if PostgresPreparedDatabase.spoilsConnection(error) {
                            // PostgreSQL ends the transaction and drops the connection's locks.
                            try? await connection.close()
                            throw error
                        }
                        _ = try? await connection.query("ROLLBACK", logger: logger)
                        outcome = .failure(error)
                    }
                    if locking {
                        do {
                            // Every key taken (some, if one was not granted in time).
                            try await db.raw("SELECT pg_advisory_unlock_all()").run()
                        } catch {
                            // A lock left on a pooled connection would stall its key for good: close
                            // the connection, and PostgreSQL drops its locks with it.
                            try? await connection.close()
                        }
                    }
                    return try outcome.get()
                }
            } catch where Self.lostRace(error) {
                if Self.state(of: error) == "55P03" {
                    logger.warning("a lock was not granted in time; trying again", metadata: ["keys": "\(keys.joined(separator: ","))", "attempt": "\(attempt)"])
                }
                guard attempt < Self.attempts else {
                    logger.warning("a transaction kept conflicting with others; refused as busy", metadata: ["attempts": "\(attempt)"])
                    throw SaveDeskError(status: 503, code: "busy", "the store is busy with the same data elsewhere; try again", retryAfter: 1)
                }
                // Back off a little, more each time, with jitter so the racers fall apart.
                try await Task.sleep(for: .milliseconds(Int.random(in: 1...(2 << min(attempt, 6)))))
                attempt += 1
            }
        }
    }

    /// How long a call waits for a connection from the pool. While the database cannot be
    /// reached, the pool retries connecting with a growing backoff and only fails its waiters
    /// when its circuit breaker trips (15 s after the first failed connect, at the next failure:
    /// half a minute and more); past this bound the call is a 503 instead of a hang.
    static let leaseTimeout: Duration = .seconds(10)

    /// `body` on a connection of the pool, leased within `leaseTimeout` (503 otherwise; the
    /// bound is checked once a second, by `LeaseWatch`, so a wait ends within a second of it).
    /// The body runs in a task of its own only so that the wait can be cancelled from outside:
    /// its caller awaits it, so it never runs beside the caller's own code.
    private func withConnection<T>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        let client = self.client
        let wait = leases.start()
        defer { leases.end(wait) }
        return try await withoutActuallyEscaping(body) { body in
            let work = UnsafeTransfer(body)
            let lease = Task {
                UnsafeTransfer(try await client.withConnection { connection in
                    wait.leased()
                    // On the connection's event loop: each statement is written and its answer
                    // read there, and the body goes on there, without waking another thread.
                    return try await withTaskExecutorPreference(EventLoopExecutor(connection.eventLoop)) {
                        try await work.value(connection)
                    }
                })
            }
            wait.cancels(lease)
            do {
                return try await withTaskCancellationHandler { try await lease.value.value } onCancel: { lease.cancel() }
            } catch where wait.expired {
                throw SaveDeskError(
                    status: 503, code: "database_unavailable", "no database connection within \(Self.leaseTimeout); try again", retryAfter: 1
                )
            }
        }
    }

    /// The calls waiting for a connection, and one task that looks at them once a second and
    /// cancels those past `leaseTimeout`: a timer per lease (a 10 s `Task.sleep` beside each
    /// wait, two or three a change) kept the dispatch's timer heap and its thread busy.
    final class LeaseWatch: Sendable {
        /// One call's wait: its start, and the task to cancel if it lasts too long.
        final class Wait: Sendable {
            let id: Int
            let since: ContinuousClock.Instant
            private let state = Mutex<(cancel: (@Sendable () -> Void)?, leased: Bool, expired: Bool)>((nil, false, false))

            init(id: Int, since: ContinuousClock.Instant) {
                self.id = id
                self.since = since
            }

            func cancels<V>(_ task: Task<V, any Error>) {
                let expiredAlready = state.withLock { state -> Bool in
                    state.cancel = { task.cancel() }
                    return state.expired
                }
                if expiredAlready { task.cancel() }
            }

            func leased() { state.withLock { $0.leased = true } }

            var expired: Bool { state.withLock { $0.expired } }

            /// Cancels the wait if it has not got its connection yet.
            func expire() {
                let cancel = state.withLock { state -> (@Sendable () -> Void)? in
                    guard !state.leased else { return nil }
                    state.expired = true
                    return state.cancel
                }
                cancel?()
            }
        }

        private let waits = Mutex<(next: Int, all: [Int: Wait])>((0, [:]))
        private let limit: Duration

        init(limit: Duration) { self.limit = limit }

        func start() -> Wait {
            waits.withLock { waits in
                let wait = Wait(id: waits.next, since: .now)
                waits.next += 1
                waits.all[wait.id] = wait
                return wait
            }
        }

        func end(_ wait: Wait) { _ = waits.withLock { $0.all.removeValue(forKey: wait.id) } }

        /// Cancels every wait older than the limit (that has no connection yet).
        func sweep(now: ContinuousClock.Instant = .now) {
            let old = waits.withLock { waits in waits.all.values.filter { now - $0.since > limit } }
            for wait in old { wait.expire() }
        }

        /// Sweeps once a second until cancelled.
        func run() async {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                sweep()
            }
        }
    }

    /// Runs a task's jobs on an event loop (a connection's): a task preferring it runs its body
    /// there between statements, where PostgresNIO writes them and reads their answers.
    final class EventLoopExecutor: TaskExecutor {
        private let loop: any EventLoop

        init(_ loop: any EventLoop) { self.loop = loop }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    /// The keys of this instance's transactions under way, each with how many hold it. A
    /// transaction whose keys no other one here holds runs first without their advisory locks:
    /// the lock and its release were two of a change's ten round trips, and a change alone on its
    /// customer waits for nobody. SERIALIZABLE still settles a race it meets (another instance's
    /// change of the same customer, or one that began here meanwhile and took the lock): the
    /// loser runs again, and every run after the first takes the locks, so it queues. A change
    /// that finds another of its customer under way here takes them at once (fifty taps queue
    /// from the second).
    final class KeysInFlight: Sendable {
        private let counts = Mutex<[String: Int]>([:])

        /// Counts `keys` as held once more; whether none of them was held before.
        func enter(_ keys: [String]) -> Bool {
            guard !keys.isEmpty else { return true }
            return counts.withLock { counts in
                var alone = true
                for key in keys {
                    let held = counts[key, default: 0]
                    if held > 0 { alone = false }
                    counts[key] = held + 1
                }
                return alone
            }
        }

        func leave(_ keys: [String]) {
            guard !keys.isEmpty else { return }
            counts.withLock { counts in
                for key in keys {
                    let held = counts[key, default: 1] - 1
                    counts[key] = held > 0 ? held : nil
                }
            }
        }
    }

    /// A value handed between a task and the child it awaits (never used by both at once).
    private struct UnsafeTransfer<Value>: @unchecked Sendable {
        let value: Value
        init(_ value: Value) { self.value = value }
    }

    /// SQLSTATEs of a transaction that lost a race and may succeed when run again: a
    /// serialization failure, a deadlock, a unique key another transaction took first, and a
    /// lock not granted within `lockTimeoutMilliseconds`.
    static let retryableStates: Set<String> = ["40001", "40P01", "23505", "55P03"]

    static func lostRace(_ error: any Error) -> Bool {
        state(of: error).map(retryableStates.contains) ?? false
    }

    static func state(of error: any Error) -> String? {
        (error as? PSQLError)?.serverInfo?[.sqlState]
    }

    /// The database's own trouble (a statement past its timeout, a lost or refused connection)
    /// as the 503 an app can retry, rather than a 500.
    static func unavailable(_ error: any Error) -> SaveDeskError? {
        // The pool gave up making connections (its circuit breaker), or is shutting down.
        if let pool = error as? _ConnectionPoolModule.ConnectionPoolError, pool == .connectionCreationCircuitBreakerTripped || pool == .poolShutdown {
            return SaveDeskError(status: 503, code: "database_unavailable", "the database cannot be reached; try again", retryAfter: 1)
        }
        guard let error = error as? PSQLError else { return nil }
        if state(of: error) == "57014" || error.code == .queryCancelled {
            return SaveDeskError(status: 503, code: "busy", "the database took too long to answer; try again", retryAfter: 1)
        }
        let lost: [PSQLError.Code] = [.connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .poolClosed]
        if lost.contains(error.code) {
            return SaveDeskError(status: 503, code: "database_unavailable", "the database cannot be reached; try again", retryAfter: 1)
        }
        return nil
    }
}
