import Foundation
import SaveDeskServer
import SQLKit

extension Store {
    /// `make bench` only (so not in the server): writes `count` generated test-mode cancel-flow responses (each with an
    /// answer, one in ten with a free-text answer too) spread evenly over the `days` days before
    /// `now`, generated inside the database in one statement per table, then rebuilds the daily
    /// rollups from all stored responses. The customers named must exist.
    func loadGeneratedResponses(count: Int, days: Int, customers: [String], now: Date = Date()) async throws {
        precondition(count > 0 && days > 0 && !customers.isEmpty, "generated responses need a count, days and customers")
        let end = Int64(now.timeIntervalSince1970), span = Int64(days) * 86_400
        // Row i: a pseudo-random h picks its outcome, actor and answers; times rise with i.
        let numbers = kind == .sqlite
            ? "(WITH RECURSIVE seq(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM seq WHERE i < \(count - 1)) SELECT i FROM seq) AS numbers"
            : "generate_series(0::bigint, \(count - 1)::bigint) AS numbers(i)"
        let h = "((i * 2654435761) % 1000003)"
        let actors = ["app", "Marco (support)", "Priya (support lead)", "Dana (support)", "Lee (support)"]
        func pick(_ values: [String], by expression: String) -> String {
            "CASE \(expression) % \(values.count) " + values.enumerated().map { "WHEN \($0.offset) THEN '\($0.element)'" }.joined(separator: " ")
                + " END"
        }
        let outcome = pick(["cancelled", "retained", "paused", "dismissed"], by: h)
        let actor = pick(actors, by: "(\(h) / 4)")
        let at = "(\(end - span) + i * \(span) / \(count))"
        try await bulkLoad { db in
            // Millions of rows take longer than a request's statement may.
            if kind == .postgres { try await db.raw("SET statement_timeout = 0").run() }
            try await db.raw(SQLQueryString("""
                INSERT INTO cancel_flow_responses (
                    id, customer_id, product_id, outcome, offer_shown, offer_accepted, pause_shown, pause_accepted,
                    pause_duration_days, last_step_seen, answers, variant_id, actor, created_at, livemode)
                SELECT 'cr_gen_' || i, \(pick(customers, by: "(\(h) / 20)")), 'premium_monthly', \(outcome),
                    \(h) % 4 <> 3, \(h) % 4 = 1, \(h) % 4 = 2, \(h) % 4 = 2,
                    CASE WHEN \(h) % 4 = 2 THEN 30 * (1 + (\(h) / 60) % 3) END, (\(h) / 180) % 4, '[]', NULL, \(actor), \(at), 1 = 0
                FROM \(numbers)
                """)).run()
            try await db.raw(SQLQueryString("""
                INSERT INTO cancel_flow_answers (response_id, question_id, option_id, free_text, has_text, actor, created_at, livemode)
                SELECT 'cr_gen_' || i, 1, 11 + (\(h) / 720) % 4, NULL, 1 = 0, \(actor), \(at), 1 = 0 FROM \(numbers)
                """)).run()
            try await db.raw(SQLQueryString("""
                INSERT INTO cancel_flow_answers (response_id, question_id, option_id, free_text, has_text, actor, created_at, livemode)
                SELECT 'cr_gen_' || i, 3, NULL, 'Generated comment ' || i, 1 = 1, \(actor), \(at), 1 = 0 FROM \(numbers) WHERE i % 10 = 0
                """)).run()
            if kind == .postgres { try await db.raw("RESET statement_timeout").run() }
        }
        try await rebuildRollups()
    }
}
