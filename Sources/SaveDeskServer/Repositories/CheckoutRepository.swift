import SQLKit

/// Web checkouts, from created to completed or failed.
protocol CheckoutRepository: Sendable {
    func find(id: String) async throws -> CheckoutRecord?
    /// A customer's checkouts of a mode.
    func checkouts(customerId: String, livemode: Bool) async throws -> [CheckoutRecord]
    func insert(_ checkout: CheckoutRecord) async throws
    func setClientSecret(_ secret: String, id: String) async throws
    func setStoreKitStatus(_ status: Int, id: String) async throws
    func markFailed(id: String) async throws
    func markCompleted(id: String, at: Int64, subscriptionId: String) async throws
    /// Removes checkouts still pending that were created at or before `cutoff` (abandoned);
    /// returns how many.
    func purgePending(createdAtOrBefore cutoff: Int64, livemode: Bool) async throws -> Int
}

struct SQLCheckoutRepository: CheckoutRepository {
    let db: any SQLDatabase

    func find(id: String) async throws -> CheckoutRecord? {
        try await db.select().column("*").from("checkout_transactions").where("id", .equal, id)
            .first(decoding: CheckoutRecord.self, with: SQLCoding.decoder)
    }

    func checkouts(customerId: String, livemode: Bool) async throws -> [CheckoutRecord] {
        try await db.select().column("*").from("checkout_transactions").where("customer_id", .equal, customerId)
            .where("livemode", .equal, livemode).all(decoding: CheckoutRecord.self, with: SQLCoding.decoder)
    }

    func insert(_ checkout: CheckoutRecord) async throws { try await db.insert(checkout, into: "checkout_transactions") }

    func setClientSecret(_ secret: String, id: String) async throws {
        try await db.update("checkout_transactions").set("client_secret", to: secret).where("id", .equal, id).run()
    }

    func setStoreKitStatus(_ status: Int, id: String) async throws {
        try await db.update("checkout_transactions").set("storekit_status", to: status).where("id", .equal, id).run()
    }

    func markFailed(id: String) async throws {
        try await db.update("checkout_transactions").set("status", to: "failed").where("id", .equal, id).run()
    }

    func markCompleted(id: String, at time: Int64, subscriptionId: String) async throws {
        try await db.update("checkout_transactions").set("status", to: "completed").set("purchased_at", to: time)
            .set("subscription_id", to: subscriptionId).where("id", .equal, id).run()
    }

    func purgePending(createdAtOrBefore cutoff: Int64, livemode: Bool) async throws -> Int {
        try await db.deleteCounting(from: "checkout_transactions") {
            _ = $0.where("livemode", .equal, livemode).where("status", .equal, "pending").where("created_at", .lessThanOrEqual, cutoff)
        }
    }
}

/// A web checkout as it is stored (amounts in minor units).
struct CheckoutRecord: Codable, Hashable, Sendable {
    var id: String
    var customerId: String
    var productId: String
    /// pending, completed or failed.
    var status: String
    var amount: Int64
    var originalAmount: Int64
    var pendingAmount: Int64
    var currency: String
    var discountPercent: Int
    var trialType: String?
    /// When billing starts (the App Store period's end for a switch).
    var trialEnd: Int64?
    var storekitOriginalTransactionId: String?
    var storekitStatus: Int?
    var subscriptionId: String?
    var createdAt: Int64
    var purchasedAt: Int64?
    var livemode: Bool = false
    /// Handed out once by finalize; the same on every repeat.
    var clientSecret: String? = nil
    /// native or browser (a checkout session).
    var mode: String? = nil
}
