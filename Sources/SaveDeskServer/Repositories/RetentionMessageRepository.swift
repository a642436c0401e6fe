import SQLKit

/// Apple's real-time retention requests and the answers given, and what the decision reads of a
/// subscriber: earlier cancel flows and the promotional offers already used.
protocol RetentionMessageRepository: Sendable {
    func find(requestIdentifier: String) async throws -> RetentionRequestRecord?
    /// Inserts a request (callers hold the lock of its identifier and looked it up first).
    func insert(_ record: RetentionRequestRecord) async throws
    /// The promotional offers shown on Apple's page to this subscriber, or redeemed.
    func offersUsed(originalTransactionId: String) async throws -> Set<String>
    /// The option ids a customer picked in earlier cancel flows, and how many flows there were.
    func earlierCancelFlows(customerId: String) async throws -> (flows: Int, optionIds: Set<Int>)
    /// Marks the requests that showed `offerIdentifier` to this subscriber before `at` redeemed.
    func markRedeemed(originalTransactionId: String, offerIdentifier: String, at: Int64) async throws
    /// The requests of a mode received within `[from, to)`, counted by what they showed and by the
    /// subscriber's state now (renewal on, lapsed) and whether the offer was redeemed.
    func outcomes(livemode: Bool, from: Int64?, to: Int64?) async throws -> [RetentionOutcomeCount]
}

/// One real-time retention request as recorded.
struct RetentionRequestRecord: Codable, Sendable, Equatable {
    var requestIdentifier: String
    var livemode: Bool
    var originalTransactionId: String
    var customerId: String?
    var appStoreProductId: String
    var userLocale: String
    var signedAt: Int64
    var receivedAt: Int64
    /// "message", "alternate_product", "promotional_offer", "holdout", "none" or "fallback".
    var choice: String
    var rule: String?
    var messageKey: String?
    var offerIdentifier: String?
    var alternateProductId: String?
    var latencyMicros: Int64
    /// The answer's JSON body as sent; nil when none was (holdout, no rule).
    var answer: String?
    var redeemedAt: Int64? = nil
}

/// Requests of one kind, message and subscriber state.
struct RetentionOutcomeCount: Sendable, Equatable {
    var choice: String
    var messageKey: String?
    var willRenew: Bool?
    var status: String?
    var redeemed: Bool
    var count: Int
}

struct SQLRetentionMessageRepository: RetentionMessageRepository {
    let db: any SQLDatabase

    func find(requestIdentifier: String) async throws -> RetentionRequestRecord? {
        try await db.select().column("*").from("retention_requests").where("request_identifier", .equal, requestIdentifier)
            .first(decoding: RetentionRequestRecord.self, with: SQLCoding.decoder)
    }

    func insert(_ record: RetentionRequestRecord) async throws {
        try await db.insert(into: "retention_requests").model(record, with: SQLCoding.encoder).run()
    }

    func offersUsed(originalTransactionId: String) async throws -> Set<String> {
        let rows = try await db.select().distinct().column("offer_identifier").from("retention_requests")
            .where("original_transaction_id", .equal, originalTransactionId).where("offer_identifier", .isNot, SQLLiteral.null).all()
        return Set(try rows.map { try $0.decode(column: "offer_identifier", as: String.self) })
    }

    func earlierCancelFlows(customerId: String) async throws -> (flows: Int, optionIds: Set<Int>) {
        let rows = try await db.select().column(SQLColumn("id", table: "r")).column(SQLColumn("option_id", table: "a"))
            .from(SQLAlias(SQLIdentifier("cancel_flow_responses"), as: SQLIdentifier("r")))
            .join(SQLAlias(SQLIdentifier("cancel_flow_answers"), as: SQLIdentifier("a")), method: SQLJoinMethod.left,
                  on: SQLColumn("response_id", table: "a"), .equal, SQLColumn("id", table: "r"))
            .where(SQLColumn("customer_id", table: "r"), .equal, SQLBind(customerId)).all()
        var flows = Set<String>(), options = Set<Int>()
        for row in rows {
            flows.insert(try row.decode(column: "id", as: String.self))
            if let option = try row.decodeNil(column: "option_id") ? nil : row.decode(column: "option_id", as: Int.self) { options.insert(option) }
        }
        return (flows.count, options)
    }

    func markRedeemed(originalTransactionId: String, offerIdentifier: String, at time: Int64) async throws {
        try await db.update("retention_requests").set("redeemed_at", to: time)
            .where("original_transaction_id", .equal, originalTransactionId).where("offer_identifier", .equal, offerIdentifier)
            .where("received_at", .lessThanOrEqual, time).where("redeemed_at", .is, SQLLiteral.null).run()
    }

    func outcomes(livemode: Bool, from: Int64?, to: Int64?) async throws -> [RetentionOutcomeCount] {
        var query = db.select()
            .column(SQLColumn("choice", table: "r")).column(SQLColumn("message_key", table: "r"))
            .column(SQLColumn("will_renew", table: "s")).column(SQLColumn("status", table: "s"))
            .column(SQLAlias(SQLQueryString("CASE WHEN r.redeemed_at IS NULL THEN 0 ELSE 1 END"), as: SQLIdentifier("redeemed")))
            .column(SQLAlias(SQLQueryString("COUNT(*)"), as: SQLIdentifier("n")))
            .from(SQLAlias(SQLIdentifier("retention_requests"), as: SQLIdentifier("r")))
            .join(SQLAlias(SQLIdentifier("subscriptions"), as: SQLIdentifier("s")), method: SQLJoinMethod.left,
                  on: SQLQueryString("s.original_transaction_id = r.original_transaction_id AND s.livemode = r.livemode"))
            .where(SQLColumn("livemode", table: "r"), .equal, SQLBind(livemode))
        if let from { query = query.where(SQLColumn("received_at", table: "r"), .greaterThanOrEqual, SQLBind(from)) }
        if let to { query = query.where(SQLColumn("received_at", table: "r"), .lessThan, SQLBind(to)) }
        let rows = try await query.groupBy(SQLColumn("choice", table: "r")).groupBy(SQLColumn("message_key", table: "r"))
            .groupBy(SQLColumn("will_renew", table: "s")).groupBy(SQLColumn("status", table: "s")).groupBy(SQLIdentifier("redeemed")).all()
        return try rows.map { row in
            RetentionOutcomeCount(
                choice: try row.decode(column: "choice", as: String.self), messageKey: try row.decode(column: "message_key", as: String?.self),
                willRenew: try row.decode(column: "will_renew", as: Bool?.self), status: try row.decode(column: "status", as: String?.self),
                redeemed: try row.decode(column: "redeemed", as: Int.self) == 1, count: try row.decode(column: "n", as: Int.self)
            )
        }
    }
}
