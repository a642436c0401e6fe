import Foundation
import SQLKit

/// The queries of the store, on any SQLDatabase (inside or outside a transaction).
extension SQLDatabase {
    static var encoder: SQLQueryEncoder { SQLQueryEncoder(keyEncodingStrategy: .convertToSnakeCase, nilEncodingStrategy: .asNil) }
    static var decoder: SQLRowDecoder { SQLRowDecoder(keyDecodingStrategy: .convertFromSnakeCase) }
    /// For records whose CodingKeys are the column names (`SubscriptionRecord`).
    static var rowDecoder: SQLRowDecoder { SQLRowDecoder() }

    func insert<T: Encodable & Sendable>(_ record: T, into table: String) async throws {
        try await insert(into: table).model(record, with: Self.encoder).run()
    }

    func customer(id: String) async throws -> CustomerRecord? {
        try await select().column("*").from("customers").where("id", .equal, id)
            .first(decoding: CustomerRecord.self, with: Self.decoder)
    }

    func subscriptions(customerId: String) async throws -> [SubscriptionRecord] {
        try await select().column("*").from("subscriptions").where("customer_id", .equal, customerId)
            .orderBy("started_at").orderBy("id").all(decoding: SubscriptionRecord.self, with: Self.rowDecoder)
    }

    /// The subscriptions of several customers in one query.
    func subscriptions(customerIds: [String]) async throws -> [SubscriptionRecord] {
        guard !customerIds.isEmpty else { return [] }
        return try await select().column("*").from("subscriptions").where("customer_id", .in, customerIds)
            .orderBy("started_at").orderBy("id").all(decoding: SubscriptionRecord.self, with: Self.rowDecoder)
    }

    func update(_ subscription: SubscriptionRecord) async throws {
        try await update("subscriptions").set(model: subscription, with: Self.encoder)
            .where("id", .equal, subscription.id).run()
    }

    func setCardFailing(customerId: String, failing: Bool) async throws {
        try await update("customers").set("card_failing", to: failing).where("id", .equal, customerId).run()
    }

    func discounts(subscriptionId: String) async throws -> [DiscountRecord] {
        try await select().column("*").from("discounts").where("subscription_id", .equal, subscriptionId)
            .orderBy("starts_at").all(decoding: DiscountRecord.self, with: Self.decoder)
    }

    func audit(customerId: String, limit: Int) async throws -> [AuditRecord] {
        try await select().column("*").from("audit_events").where("customer_id", .equal, customerId)
            .orderBy("at", .descending).orderBy("id", .descending).limit(limit)
            .all(decoding: AuditRecord.self, with: Self.decoder)
    }
}
