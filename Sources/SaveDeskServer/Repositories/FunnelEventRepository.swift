import SQLKit

/// The SDK's paywall and checkout funnel events, as sent.
protocol FunnelEventRepository: Sendable {
    func record(
        id: String, type: String, userId: String, productId: String?, screenName: String?, metadata: String?, livemode: Bool, at: Int64
    ) async throws
}

struct SQLFunnelEventRepository: FunnelEventRepository {
    let db: any SQLDatabase

    func record(
        id: String, type: String, userId: String, productId: String?, screenName: String?, metadata: String?, livemode: Bool, at time: Int64
    ) async throws {
        try await db.insert(into: "funnel_events")
            .columns("id", "event_type", "user_id", "product_id", "screen_name", "metadata", "livemode", "created_at")
            .values(SQLBindings.of(id, type, userId, productId, screenName, metadata, livemode, time))
            .run()
    }
}
