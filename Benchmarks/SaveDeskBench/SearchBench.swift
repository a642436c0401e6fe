import Foundation
import Logging
import SQLKit
import SQLiteKit

/// Customer search over a large table: generated test-mode customers, each with a web
/// subscription, written straight into a server's database (the search index follows by its
/// triggers); the real search endpoint is then measured like the other scenarios.
enum SearchBench {
    static let first = ["Ava", "Ben", "Chloé", "Diego", "Emma", "Farah", "George", "Hana", "Ivan", "Liam", "Maya", "Olivia",
                        "Priya", "Quinn", "Sam", "Noor", "Tomás", "Yuki", "Zoe", "Ravi"]
    static let last = ["Thompson", "Okafor", "Martin", "Ramírez", "Nakamura", "Haddad", "Brown", "Kowalski", "Silva", "Andersen",
                       "Osei", "Dubois", "Rossi", "Novak", "Fischer", "Kaur", "Moreau", "Jensen", "Costa", "Lindqvist"]

    /// `withCustomers` false: the customers are there already (imported); only their subscriptions.
    static func generate(count: Int, databasePath: String, withCustomers: Bool = true) async throws {
        let connection = try await SQLiteConnection.open(storage: .file(path: databasePath), logger: Logger(label: "bench"))
        let db = connection.sql()
        let now = Int64(Date().timeIntervalSince1970)
        try await db.raw("BEGIN").run()
        var written = 0
        while written < count {
            let batch = min(400, count - written)
            let customers = db.insert(into: "customers").columns("id", "name", "email", "country", "created_at", "card_failing", "livemode")
            let subscriptions = db.insert(into: "subscriptions").columns(
                "id", "customer_id", "product_id", "source", "status", "will_renew", "started_at", "current_period_end",
                "price_micros", "currency", "updated_at", "livemode")
            for index in written..<(written + batch) {
                let name = "\(first[index % first.count]) \(last[(index / first.count) % last.count]) \(index)"
                let id = "cus_bench_\(index)"
                customers.values(SQLBind(id), SQLBind(name), SQLBind("customer\(index)@bench.example"), SQLBind("US"),
                                 SQLBind(now - 86_400 * 100), SQLBind(false), SQLBind(false))
                subscriptions.values(SQLBind("sub_bench_\(index)"), SQLBind(id), SQLBind("premium_monthly"), SQLBind("web"),
                                     SQLBind("active"), SQLBind(true), SQLBind(now - 86_400 * 100), SQLBind(now + 86_400 * 20),
                                     SQLBind(9_990_000), SQLBind("USD"), SQLBind(now), SQLBind(false))
            }
            if withCustomers { try await customers.run() }
            try await subscriptions.run()
            written += batch
        }
        try await db.raw("COMMIT").run()
        try await connection.close()
    }
}
