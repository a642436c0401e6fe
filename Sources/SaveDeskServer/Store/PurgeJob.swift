import RetentionDomain
import Foundation

/// Data with a lifetime, removed by a job (`PeriodicJob`) in the server's service lifecycle, once
/// per mode, each pass in its mode's scope: it touches only rows of that mode, at that mode's time
/// (test data at test time, which the test clock may have moved ahead). Idempotency records go
/// after 24 hours of real time (the contract's replay window, the same in both modes), portal
/// sessions once they have expired, and checkouts left pending for 24 hours (abandoned). The audit
/// trail is kept. Offer impressions need no purge: they are counted once per user, session and
/// variant at write time, so no duplicate is ever stored. Stripe's webhook events and the finished
/// Stripe actions go after 30 days (Stripe retries a delivery for 3).
struct PurgeJob: Sendable {
    let store: Store
    let clock: DataClock

    static let abandonedCheckoutAge = Seconds.wholeDay
    static let stripeRecordAge = 30 * Seconds.wholeDay

    /// What one pass removed.
    struct Removed: Sendable, Equatable {
        var idempotencyRecords = 0, portalSessions = 0, abandonedCheckouts = 0, stripeRecords = 0
    }

    /// Removes the desk's events recorded more than `seconds` ago (both modes: one numbering);
    /// a resume from before them is told it missed some.
    func purgeEvents(olderThan seconds: Int64) async throws -> Int {
        try await store.transaction(key: "purge") { data in try await data.events.purge(olderThan: seconds) }
    }

    /// Removes what of `scope`'s mode has outlived its purpose; says how much.
    @discardableResult
    func purge(_ scope: RequestScope) async throws -> Removed {
        let now = clock.now(scope).unixSeconds
        let real = clock.server.now().unixSeconds
        // One instance at a time.
        return try await store.transaction(key: "purge") { data in
            Removed(
                idempotencyRecords: try await data.idempotency.purge(
                    storedAtOrBefore: real - ChangeTransaction.idempotencyLifetime, livemode: scope.livemode),
                portalSessions: try await data.portalSessions.purge(expiredAtOrBefore: now, livemode: scope.livemode),
                abandonedCheckouts: try await data.checkouts.purgePending(createdAtOrBefore: now - Self.abandonedCheckoutAge, livemode: scope.livemode),
                stripeRecords: try await data.stripe.purge(atOrBefore: real - Self.stripeRecordAge, livemode: scope.livemode)
            )
        }
    }
}
