import Foundation

/// Data with a lifetime, removed by a job (`PeriodicJob`) in the server's service lifecycle:
/// idempotency records after 24 hours (the contract's replay window), portal sessions once they
/// have expired, and checkouts left pending for 24 hours (abandoned). The audit trail is kept.
/// Offer impressions need no purge: they are counted once per user, session and variant at write
/// time, so no duplicate is ever stored.
struct PurgeJob: Sendable {
    let store: Store
    let clock: any ServerClock

    static let abandonedCheckoutAge: Int64 = 86_400

    /// Removes what has outlived its purpose, by the server's clock (test time only ever runs
    /// ahead of it, so nothing is removed before it expired in either mode).
    func purge() async throws {
        let now = clock.now().unixSeconds
        // One instance at a time.
        try await store.transaction(key: "purge") { data in
            try await data.idempotency.purge(storedAtOrBefore: now - ChangeTransaction.idempotencyLifetime)
            try await data.portalSessions.purge(expiredAtOrBefore: now)
            try await data.checkouts.purgePending(createdAtOrBefore: now - Self.abandonedCheckoutAge)
        }
    }
}
