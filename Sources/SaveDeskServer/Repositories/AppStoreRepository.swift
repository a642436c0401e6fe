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
    /// How many cancellations of a mode were read out within `[from, to)`, and how many were
    /// confirmed by Apple within it, for one operator or all (one statement).
    func countCancellations(livemode: Bool, from: Int64?, to: Int64?, readOutBy: String?) async throws -> (readOut: Int, confirmed: Int)
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

    func countCancellations(livemode: Bool, from: Int64?, to: Int64?, readOutBy: String?) async throws -> (readOut: Int, confirmed: Int) {
        func count(_ milestone: AppStoreCancellationRecord.Milestone) -> SQLQueryString {
            let column = milestone.rawValue
            var count: SQLQueryString = "SELECT count(*) FROM appstore_cancellations WHERE livemode = \(bind: livemode) AND \(ident: column) IS NOT NULL"
            if let from { count += " AND \(ident: column) >= \(bind: from)" }
            if let to { count += " AND \(ident: column) < \(bind: to)" }
            if let readOutBy { count += " AND read_out_by = \(bind: readOutBy)" }
            return count
        }
        let row = try await db.raw("SELECT (\(count(.readOut))) AS read_out, (\(count(.confirmed))) AS confirmed").first()
        return (try row?.decode(column: "read_out", as: Int.self) ?? 0, try row?.decode(column: "confirmed", as: Int.self) ?? 0)
    }
}
