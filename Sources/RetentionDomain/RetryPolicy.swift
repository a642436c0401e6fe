import Foundation

/// Delays between attempts of background work. After each failed attempt the next delay is taken
/// from `delays` (the last one repeats); after `maxAttempts` failures the work is abandoned.
public struct RetryPolicy: Hashable, Sendable {
    public var delays: [Duration]
    /// Nil: never give up (the outbox keeps every record until it is delivered).
    public var maxAttempts: Int?

    public init(delays: [Duration], maxAttempts: Int?) {
        precondition(!delays.isEmpty, "a retry policy needs at least one delay")
        self.delays = delays
        self.maxAttempts = maxAttempts
    }

    /// The StoreKit sync queue (flows.md): 1 s, 5 s, 30 s, 5 min; at most 5 attempts.
    public static let storeKitSync = RetryPolicy(
        delays: [.seconds(1), .seconds(5), .seconds(30), .seconds(300)], maxAttempts: 5
    )

    /// The durable outbox: the same backoff, but a record is never abandoned.
    public static let outbox = RetryPolicy(
        delays: [.seconds(1), .seconds(5), .seconds(30), .seconds(300)], maxAttempts: nil
    )

    /// The wait after `failedAttempts` failures (1 = the first attempt failed), or nil when the
    /// work is to be abandoned.
    public func delay(afterFailedAttempts failedAttempts: Int) -> Duration? {
        guard failedAttempts >= 1 else { return .zero }
        if let maxAttempts, failedAttempts >= maxAttempts { return nil }
        return delays[min(failedAttempts, delays.count) - 1]
    }

    /// When the next attempt is due, or nil when abandoned.
    public func nextAttempt(after failure: Date, failedAttempts: Int) -> Date? {
        delay(afterFailedAttempts: failedAttempts).map { failure.addingTimeInterval($0.timeInterval) }
    }

    /// The wait before the one retry of a 409 with `retry_after` seconds, clamped to 0.1–5 s.
    public static func conflictRetryDelay(retryAfter seconds: Double?) -> Duration {
        let clamped = min(max(seconds ?? 1, 0.1), 5)
        return .milliseconds(Int64((clamped * 1000).rounded()))
    }
}

extension Duration {
    /// The duration in seconds as a `TimeInterval`.
    public var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
