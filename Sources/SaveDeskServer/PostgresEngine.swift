import Foundation
import Logging
import PostgresKit
import PostgresNIO
import SQLKit

/// The shared engine: a PostgreSQL database that several server instances use at once, through
/// a pool of connections per instance.
///
/// Every write transaction is SERIALIZABLE: whatever must happen once (an Idempotency-Key's
/// answer, one discount per subscription, one pause, one App Store notification per UUID, the
/// settlement of a subscription's billing) is read and written in one transaction, and
/// PostgreSQL aborts whichever of two overlapping transactions would break that. The loser is
/// run again from the start, where it sees the winner's committed work and answers as a repeat
/// does. A transaction that keeps losing is refused with 503 and Retry-After, never a 500.
///
/// Changes to one customer would race all the time (fifty taps on one offer), so a transaction
/// with a key first takes a session advisory lock on it and only then begins: its snapshot is
/// taken after the previous holder committed, so it sees that work and does not conflict.
final class PostgresEngine: StoreEngine {
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let logger: Logger

    /// How long an instance waits at start for its database to answer.
    static let startTimeout: Duration = .seconds(10)

    /// Attempts of one transaction before it is refused as busy.
    static let attempts = 12

    var kind: Store.Kind { .postgres }

    private init(client: PostgresClient, runner: Task<Void, Never>, logger: Logger) {
        self.client = client
        self.runner = runner
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
        runner.cancel()
        await runner.value
    }

    func read<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await client.withConnection { connection in try await body(connection.sql(queryLogLevel: nil)) }
    }

    func exclusive<T>(_ body: (any SQLDatabase) async throws -> T) async throws -> T {
        try await read(body)
    }

    func transaction<T>(key: String?, _ body: (any SQLDatabase) async throws -> T) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await client.withConnection { connection in
                    if let key { try await connection.query("SELECT pg_advisory_lock(hashtextextended(\(key), 0))", logger: logger) }
                    let outcome: Result<T, any Error>
                    do {
                        try await connection.query("BEGIN ISOLATION LEVEL SERIALIZABLE", logger: logger)
                        let value = try await body(connection.sql(queryLogLevel: nil))
                        try await connection.query("COMMIT", logger: logger)
                        outcome = .success(value)
                    } catch {
                        _ = try? await connection.query("ROLLBACK", logger: logger)
                        outcome = .failure(error)
                    }
                    if let key {
                        do {
                            try await connection.query("SELECT pg_advisory_unlock(hashtextextended(\(key), 0))", logger: logger)
                        } catch {
                            // A lock left on a pooled connection would stall this key for good: close
                            // the connection, and PostgreSQL drops its locks with it.
                            try? await connection.close()
                        }
                    }
                    return try outcome.get()
                }
            } catch where Self.lostRace(error) {
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

    /// SQLSTATEs of a transaction that lost a race and may succeed when run again: a
    /// serialization failure, a deadlock, and a unique key another transaction took first.
    static let retryableStates: Set<String> = ["40001", "40P01", "23505"]

    static func lostRace(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, let state = error.serverInfo?[.sqlState] else { return false }
        return retryableStates.contains(state)
    }
}
