import SQLKit

/// The billing ledger: subscriptions (web and App Store), their discounts and their charges.
protocol LedgerRepository: Sendable {
    /// A customer's subscriptions, oldest first.
    func subscriptions(customerId: String) async throws -> [SubscriptionRecord]
    /// The subscriptions of several customers in one query.
    func subscriptions(customerIds: [String]) async throws -> [SubscriptionRecord]
    /// The App Store subscription of an original transaction id, whatever its mode.
    func subscription(originalTransactionId: String) async throws -> SubscriptionRecord?
    /// The web subscription a Stripe subscription (`sub_…`) keeps.
    func subscription(providerId: String) async throws -> SubscriptionRecord?
    /// Every App Store subscription of a mode, by id.
    func appStoreSubscriptions(livemode: Bool) async throws -> [SubscriptionRecord]
    /// Where a subscription's current period ends.
    func periodEnd(subscriptionId: String) async throws -> Int64?
    func insert(_ subscription: SubscriptionRecord) async throws
    func update(_ subscription: SubscriptionRecord) async throws
    func discounts(subscriptionId: String) async throws -> [DiscountRecord]
    func insert(_ discount: DiscountRecord) async throws
    func insert(_ charge: ChargeRecord) async throws
}

struct SQLLedgerRepository: LedgerRepository {
    let db: any SQLDatabase

    func subscriptions(customerId: String) async throws -> [SubscriptionRecord] {
        try await db.raw("SELECT * FROM subscriptions WHERE customer_id = \(bind: customerId) ORDER BY \(unsafeRaw: Self.order(nil))")
            .all(records: SubscriptionRecord.self)
    }

    /// A customer's subscriptions' order (by start, then id), of the table or of its alias `table`.
    static func order(_ table: String?) -> String {
        let column = table.map { $0 + "." } ?? ""
        return "\(column)started_at, \(column)id"
    }

    func subscriptions(customerIds: [String]) async throws -> [SubscriptionRecord] {
        guard !customerIds.isEmpty else { return [] }
        return try await db.select().column("*").from("subscriptions").where("customer_id", .in, customerIds)
            .orderBy("started_at").orderBy("id").all(records: SubscriptionRecord.self)
    }

    func subscription(originalTransactionId otid: String) async throws -> SubscriptionRecord? {
        try await db.select().column("*").from("subscriptions").where("original_transaction_id", .equal, otid)
            .first(record: SubscriptionRecord.self)
    }

    func subscription(providerId id: String) async throws -> SubscriptionRecord? {
        try await db.select().column("*").from("subscriptions").where("provider_id", .equal, id)
            .first(record: SubscriptionRecord.self)
    }

    func appStoreSubscriptions(livemode: Bool) async throws -> [SubscriptionRecord] {
        try await db.select().column("*").from("subscriptions").where("source", .equal, "app_store")
            .where("livemode", .equal, livemode).orderBy("id")
            .all(records: SubscriptionRecord.self)
    }

    func periodEnd(subscriptionId id: String) async throws -> Int64? {
        try await db.select().column("current_period_end").from("subscriptions").where("id", .equal, id).first()?
            .decode(column: "current_period_end", as: Int64?.self)
    }

    func insert(_ subscription: SubscriptionRecord) async throws { try await db.insert(subscription, into: "subscriptions") }

    func update(_ subscription: SubscriptionRecord) async throws {
        try await db.update("subscriptions").set(model: subscription, with: SQLCoding.encoder)
            .where("id", .equal, subscription.id).run()
    }

    func discounts(subscriptionId: String) async throws -> [DiscountRecord] {
        try await db.select().column("*").from("discounts").where("subscription_id", .equal, subscriptionId)
            .orderBy("starts_at").all(decoding: DiscountRecord.self, with: SQLCoding.decoder)
    }

    func insert(_ discount: DiscountRecord) async throws { try await db.insert(discount, into: "discounts") }
    func insert(_ charge: ChargeRecord) async throws { try await db.insert(charge, into: "charges") }
}
