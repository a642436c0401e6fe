import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import SQLKit
import SQLiteKit

/// The cancel-flow funnel over a large table: generated responses (and their answers) written
/// straight into the server's database, then the real analytics endpoint timed over HTTP.
enum FunnelBench {
    static let operators = ["app", "Marco (support)", "Priya (support lead)", "Dana (support)", "Lee (support)"]
    static let outcomes = ["cancelled", "retained", "paused", "dismissed"]
    static let customers = [
        "cus_ava", "cus_ben", "cus_chloe", "cus_diego", "cus_emma", "cus_farah", "cus_george", "cus_hana", "cus_ivan",
        "cus_liam", "cus_maya", "cus_olivia", "cus_priya", "cus_quinn", "cus_sam",
    ]

    /// Inserts `count` responses over the last 90 days, 500 rows a statement, in one transaction.
    static func generate(count: Int, databasePath: String) async throws {
        let connection = try await SQLiteConnection.open(storage: .file(path: databasePath), logger: Logger(label: "bench"))
        let db = connection.sql()
        var generator = SystemRandomNumberGenerator()
        let now = Int64(Date().timeIntervalSince1970)
        try await db.raw("BEGIN").run()
        var written = 0
        while written < count {
            let batch = min(500, count - written)
            let responses = db.insert(into: "cancel_flow_responses").columns(
                "id", "customer_id", "product_id", "outcome", "offer_shown", "offer_accepted", "pause_shown", "pause_accepted",
                "pause_duration_days", "last_step_seen", "answers", "variant_id", "actor", "created_at")
            let answers = db.insert(into: "cancel_flow_answers").columns(
                "response_id", "question_id", "option_id", "free_text", "has_text", "actor", "created_at")
            for index in written..<(written + batch) {
                let id = "cr_bench_\(index)"
                let outcome = outcomes.randomElement(using: &generator)!
                let actor = operators.randomElement(using: &generator)!
                let at = now - Int64.random(in: 0..<(90 * 86_400), using: &generator)
                let paused = outcome == "paused"
                responses.values(
                    SQLBind(id), SQLBind(customers.randomElement(using: &generator)!), SQLBind("premium_monthly"), SQLBind(outcome),
                    SQLBind(outcome != "dismissed"), SQLBind(outcome == "retained"), SQLBind(paused), SQLBind(paused),
                    paused ? SQLBind([30, 60, 90].randomElement(using: &generator)!) as any SQLExpression : SQLLiteral.null,
                    SQLBind(Int.random(in: 0...3, using: &generator)), SQLBind("[]"), SQLLiteral.null, SQLBind(actor), SQLBind(at)
                )
                answers.values(SQLBind(id), SQLBind(1), SQLBind(Int.random(in: 11...14, using: &generator)), SQLLiteral.null, SQLBind(false), SQLBind(actor), SQLBind(at))
                if index % 10 == 0 {
                    answers.values(SQLBind(id), SQLBind(3), SQLLiteral.null, SQLBind("Generated comment \(index)"), SQLBind(true), SQLBind(actor), SQLBind(at))
                }
            }
            try await responses.run()
            try await answers.run()
            written += batch
        }
        try await db.raw("COMMIT").run()
        try await db.raw("ANALYZE").run()
        try await connection.close()
    }

    /// Milliseconds for one GET of the analytics endpoint.
    static func time(_ url: String, key: String, client: HTTPClient) async throws -> Double {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "X-ZeroSettle-Key", value: key)
        let start = ContinuousClock.now
        let response = try await client.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 22)
        guard response.status == .ok else { throw CancellationError() }
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }
}
