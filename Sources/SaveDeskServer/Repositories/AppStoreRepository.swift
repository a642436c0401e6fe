import SQLKit

/// What SaveDesk keeps of Apple's side besides the subscriptions: the App Store Server
/// Notifications applied (once per UUID), and the App Store cancellations an agent read out.
protocol AppStoreRepository: Sendable {
    func hasNotification(uuid: String) async throws -> Bool
    /// Records a notification once; `signedPayload` is kept only for one no customer could take.
    func recordNotification(
        uuid: String, type: String, subtype: String?, originalTransactionId: String?, outcome: String, at: Int64, signedPayload: String?
    ) async throws
    /// The notifications kept for an original transaction (outcome "unmatched"), oldest first.
    func keptNotifications(originalTransactionId: String) async throws -> [(uuid: String, signedPayload: String)]
    func setOutcome(_ outcome: String, uuid: String) async throws
    func insert(_ cancellation: AppStoreCancellationRecord) async throws
    /// The newest cancellation read out for a subscription.
    func latestCancellation(subscriptionId: String) async throws -> AppStoreCancellationRecord?
    /// Marks a subscription's open cancellations confirmed by Apple.
    func confirmCancellations(subscriptionId: String, at: Int64) async throws
    /// How many cancellations of a mode have `column` (read_out_at or confirmed_at) set within
    /// `[from, to)`, for one operator or all.
    func countCancellations(_ column: AppStoreCancellationRecord.Milestone, livemode: Bool, from: Int64?, to: Int64?, readOutBy: String?) async throws -> Int
}

/// An App Store cancellation an agent read out, waiting for Apple until it is confirmed.
struct AppStoreCancellationRecord: Codable, Sendable {
    enum Milestone: String, Sendable { case readOut = "read_out_at", confirmed = "confirmed_at" }

    var id: String
    var customerId: String
    var subscriptionId: String
    var productId: String
    var readOutAt: Int64
    var readOutBy: String
    var confirmedAt: Int64?
    var livemode: Bool
}

struct SQLAppStoreRepository: AppStoreRepository {
    let db: any SQLDatabase

    func hasNotification(uuid: String) async throws -> Bool {
        try await db.select().column("outcome").from("appstore_notifications").where("notification_uuid", .equal, uuid).first() != nil
    }

    func recordNotification(
        uuid: String, type: String, subtype: String?, originalTransactionId: String?, outcome: String, at time: Int64, signedPayload: String?
    ) async throws {
        try await db.insert(into: "appstore_notifications")
            .columns("notification_uuid", "notification_type", "subtype", "original_transaction_id", "outcome", "received_at", "signed_payload")
            .values(SQLBindings.of(uuid, type, subtype, originalTransactionId, outcome, time, signedPayload))
            .run()
    }

    func keptNotifications(originalTransactionId: String) async throws -> [(uuid: String, signedPayload: String)] {
        try await db.select().column("notification_uuid").column("signed_payload").from("appstore_notifications")
            .where("original_transaction_id", .equal, originalTransactionId).where("outcome", .equal, "unmatched")
            .where("signed_payload", .isNot, SQLLiteral.null).orderBy("received_at").orderBy("notification_uuid").all()
            .map { (try $0.decode(column: "notification_uuid", as: String.self), try $0.decode(column: "signed_payload", as: String.self)) }
    }

    func setOutcome(_ outcome: String, uuid: String) async throws {
        try await db.update("appstore_notifications").set("outcome", to: outcome).set("signed_payload", to: SQLLiteral.null)
            .where("notification_uuid", .equal, uuid).run()
    }

    func insert(_ cancellation: AppStoreCancellationRecord) async throws {
        try await db.insert(cancellation, into: "appstore_cancellations")
    }

    func latestCancellation(subscriptionId: String) async throws -> AppStoreCancellationRecord? {
        try await db.select().column("*").from("appstore_cancellations").where("subscription_id", .equal, subscriptionId)
            .orderBy("read_out_at", .descending).orderBy("id", .descending).limit(1)
            .first(decoding: AppStoreCancellationRecord.self, with: SQLCoding.decoder)
    }

    func confirmCancellations(subscriptionId: String, at time: Int64) async throws {
        try await db.update("appstore_cancellations").set("confirmed_at", to: time)
            .where("subscription_id", .equal, subscriptionId).where("confirmed_at", .is, SQLLiteral.null).run()
    }

    func countCancellations(
        _ milestone: AppStoreCancellationRecord.Milestone, livemode: Bool, from: Int64?, to: Int64?, readOutBy: String?
    ) async throws -> Int {
        let column = SQLColumn(milestone.rawValue)
        let builder = db.select().column(SQLFunction("count", args: SQLLiteral.all), as: "n").from("appstore_cancellations")
            .where("livemode", .equal, livemode).where(column, .isNot, SQLLiteral.null)
        if let from { builder.where(column, .greaterThanOrEqual, SQLBind(from)) }
        if let to { builder.where(column, .lessThan, SQLBind(to)) }
        if let readOutBy { builder.where("read_out_by", .equal, readOutBy) }
        return try await builder.first()?.decode(column: "n", as: Int.self) ?? 0
    }
}
