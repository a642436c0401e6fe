import Foundation
import Logging
import ServiceLifecycle

/// Data with a lifetime, removed by a job that runs inside the server's service lifecycle:
/// idempotency records after 24 hours (the contract's replay window), portal sessions once they
/// have expired, and checkouts left pending for 24 hours (abandoned). The audit trail is kept.
/// Offer impressions need no purge: they are counted once per user, session and variant at write
/// time, so no duplicate is ever stored.
struct PurgeService: Service {
    let store: Store
    let clock: any ServerClock
    let interval: Duration
    let logger: Logger

    static let abandonedCheckoutAge: Int64 = 86_400

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    do {
                        try await purge()
                    } catch is CancellationError {
                        return
                    } catch {
                        logger.warning("purge failed; it runs again later", metadata: ["error": "\(error)"])
                    }
                    try await Task.sleep(for: interval)
                }
            }
        } catch is CancellationError {
            return
        }
    }

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
