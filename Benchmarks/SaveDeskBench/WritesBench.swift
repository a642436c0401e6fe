import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import SQLKit
import SaveDeskServer

/// What one durable mutation costs PostgreSQL: the statements it runs, counted by the server's
/// own pg_stat_statements (`make bench` starts the cluster with it loaded). PostgresNIO sends one
/// statement per round trip, so statements are round trips; and how many of them PostgreSQL
/// planned (and so parsed) on every run: the ones sent unnamed. The jobs that run beside
/// requests (the funnel's fold, the event hub's heartbeat) are counted apart: a statement run
/// fewer than once per two mutations is theirs.
enum WritesBench {
    static func statements(postgresURL: String, baseURL: String, body: @Sendable (Int) -> String, key: String, client: HTTPClient) async {
        let mutations = 200
        do {
            let store = try await Store.open(path: postgresURL, logger: Logger(label: "bench"))
            defer { Task { await store.close() } }
            // Planning is tracked only while the mutations are counted: tracked under load, it
            // would cost the throughput runs before and the benches after.
            try await store.bulkLoad { db in
                try await db.raw("CREATE EXTENSION IF NOT EXISTS pg_stat_statements").run()
                try await Self.trackPlanning(true, db)
                try await db.raw("SELECT pg_stat_statements_reset()").run()
            }
            for n in 0..<mutations {
                var request = HTTPClientRequest(url: baseURL + "/v1/iap/cancel-flow/respond")
                request.method = .POST
                request.headers.add(name: "X-ZeroSettle-Key", value: key)
                request.headers.add(name: "Content-Type", value: "application/json")
                request.headers.add(name: "Idempotency-Key", value: "statements-\(n)-\(UUID().uuidString)")
                request.body = .bytes(ByteBuffer(string: body(n)))
                let response = try await client.execute(request, timeout: .seconds(10))
                _ = try await response.body.collect(upTo: 1 << 20)
                guard response.status == .ok else { throw CancellationError() }
            }
            let rows = try await store.bulkLoad { db in
                try await db.raw("""
                    SELECT query, calls, plans, toplevel, current_setting('pg_stat_statements.track_planning') AS planning FROM pg_stat_statements
                    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat_statements%'
                    ORDER BY toplevel DESC, calls DESC
                    """).all()
            }
            try await store.bulkLoad { db in try await Self.trackPlanning(false, db) }
            // A statement a trigger runs is no round trip: it is shown apart, marked "in the
            // database". The audit row's deferred trigger runs at COMMIT, which PostgreSQL counts as
            // top level, so its two statements (the order lock, the event's insert) go by their text.
            var perRequest: [(String, Double, Bool)] = [], background = 0.0, planned = 0.0
            let planningTracked = try rows.first?.decode(column: "planning", as: String.self) == "on"
            for row in rows {
                let calls = Double(try row.decode(column: "calls", as: Int.self)) / Double(mutations)
                let plans = Double(try row.decode(column: "plans", as: Int.self)) / Double(mutations)
                let query = try row.decode(column: "query", as: String.self)
                let topLevel = try row.decode(column: "toplevel", as: Bool.self)
                    && !query.hasPrefix("SELECT pg_advisory_xact_lock(") && !query.hasPrefix("INSERT INTO desk_events (")
                if calls >= 0.5 {
                    perRequest.append((query, calls, topLevel))
                    if topLevel { planned += plans }
                } else if topLevel {
                    background += calls
                }
            }
            let total = perRequest.filter(\.2).map(\.1).reduce(0, +)
            let nested = perRequest.filter { !$0.2 }.map(\.1).reduce(0, +)
            // A statement PostgreSQL plans on every run is parsed on every run too: one sent
            // unnamed. A prepared one is planned for its first runs, then its plan is kept.
            let planning = planningTracked ? String(format: ", %.1f of them planned on each run", planned) : ""
            print(String(format: "PostgreSQL, one durable mutation (%d sequential): %.1f statements = %.1f round trips in the request%@ (and %.1f run by its trigger in the database); %.2f per mutation more by the jobs beside it",
                         mutations, total, total, planning, nested, background))
            for (query, calls, topLevel) in perRequest {
                let short = query.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
                print(String(format: "  %4.1f × ", calls) + (topLevel ? "" : "(in the database) ") + String(short.prefix(110)))
            }
        } catch {
            print("PostgreSQL statements per mutation: not counted (\(error); make bench loads pg_stat_statements)")
        }
    }

    /// Turns pg_stat_statements' planning counts on or off for every session, the servers' pooled
    /// ones included (they read it again at their next statement).
    static func trackPlanning(_ on: Bool, _ db: any SQLDatabase) async throws {
        try await db.raw(on ? "ALTER SYSTEM SET pg_stat_statements.track_planning = on" : "ALTER SYSTEM RESET pg_stat_statements.track_planning").run()
        try await db.raw("SELECT pg_reload_conf()").run()
    }
}
