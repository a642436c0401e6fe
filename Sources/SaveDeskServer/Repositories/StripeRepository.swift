import SQLKit

/// An action sent to Stripe, until its outcome is recorded with the subscription's change.
struct StripeActionRecord: Codable, Hashable, Sendable {
    var idempotencyKey: String
    var livemode: Bool
    var customerId: String
    var subscriptionId: String?
    var operation: String
    var startedAt: Int64
    var finishedAt: Int64?
    var outcome: String?
}

/// Stripe's webhook events seen (each once) and the actions sent to Stripe.
protocol StripeRepository: Sendable {
    /// Whether an event with this id was already received.
    func hasEvent(id: String) async throws -> Bool
    func recordEvent(id: String, livemode: Bool, type: String, created: Int64, objectId: String?, receivedAt: Int64, outcome: String) async throws
    /// Starts (or starts again, on a retry) an action under its Idempotency-Key.
    func startAction(_ action: StripeActionRecord) async throws
    func finishAction(key: String, at: Int64, outcome: String) async throws
    /// Actions started before `cutoff` with no outcome recorded, oldest first.
    func openActions(livemode: Bool, startedBefore cutoff: Int64, limit: Int) async throws -> [StripeActionRecord]
    func action(key: String) async throws -> StripeActionRecord?
    /// Removes a mode's events received, and its finished actions, at or before `cutoff`.
    func purge(atOrBefore cutoff: Int64, livemode: Bool) async throws -> Int
}

struct SQLStripeRepository: StripeRepository {
    let db: any SQLDatabase

    func hasEvent(id: String) async throws -> Bool {
        try await db.select().column("id").from("stripe_events").where("id", .equal, id).first() != nil
    }

    func recordEvent(id: String, livemode: Bool, type: String, created: Int64, objectId: String?, receivedAt: Int64, outcome: String) async throws {
        try await db.insert(into: "stripe_events")
            .columns("id", "livemode", "type", "created", "object_id", "received_at", "outcome")
            .values(SQLBind(id), SQLBind(livemode), SQLBind(type), SQLBind(created), SQLBind(objectId), SQLBind(receivedAt), SQLBind(outcome))
            .run()
    }

    func startAction(_ action: StripeActionRecord) async throws {
        try await db.delete(from: "stripe_actions").where("idempotency_key", .equal, action.idempotencyKey).run()
        try await db.insert(into: "stripe_actions").model(action, keyEncodingStrategy: .convertToSnakeCase, nilEncodingStrategy: .asNil).run()
    }

    func finishAction(key: String, at: Int64, outcome: String) async throws {
        try await db.update("stripe_actions").set("finished_at", to: at).set("outcome", to: outcome)
            .where("idempotency_key", .equal, key).run()
    }

    func openActions(livemode: Bool, startedBefore cutoff: Int64, limit: Int) async throws -> [StripeActionRecord] {
        try await db.select().column("*").from("stripe_actions").where("finished_at", .is, SQLLiteral.null)
            .where("livemode", .equal, livemode).where("started_at", .lessThan, cutoff).orderBy("started_at").limit(limit)
            .all(decoding: StripeActionRecord.self, with: SQLCoding.decoder)
    }

    func action(key: String) async throws -> StripeActionRecord? {
        try await db.select().column("*").from("stripe_actions").where("idempotency_key", .equal, key)
            .first(decoding: StripeActionRecord.self, with: SQLCoding.decoder)
    }

    func purge(atOrBefore cutoff: Int64, livemode: Bool) async throws -> Int {
        let events = try await db.delete(from: "stripe_events").where("livemode", .equal, livemode)
            .where("received_at", .lessThanOrEqual, cutoff).returning("id").all().count
        let actions = try await db.delete(from: "stripe_actions").where("livemode", .equal, livemode)
            .where("finished_at", .lessThanOrEqual, cutoff).returning("idempotency_key").all().count
        return events + actions
    }
}
