import Foundation
import Synchronization

/// Token buckets by name (a client address, a key's digest): each holds up to `burst` tokens and
/// refills at `rate` per second. A charge that the bucket cannot pay is refused with the seconds
/// until it could, and takes nothing. In memory, per server instance; at most `capacity` names are
/// kept (full buckets are the same as none and are dropped first).
final class TokenBuckets: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    let rate: Double
    let burst: Double
    let capacity: Int
    private let buckets = Mutex<[String: Bucket]>([:])

    init(rate: Double, burst: Double, capacity: Int = 100_000) {
        self.rate = rate
        self.burst = burst
        self.capacity = capacity
    }

    /// Takes `cost` tokens from `name`'s bucket, or says how long until it could (nil: taken).
    /// A cost over the burst can never be paid; it waits as long as a full refill.
    func take(_ cost: Double, from name: String, now: ContinuousClock.Instant = .now) -> Double? {
        buckets.withLock { buckets in
            var bucket = buckets[name].map { refilled($0, now: now) } ?? Bucket(tokens: burst, updated: now)
            guard bucket.tokens >= cost else {
                return max((min(cost, burst) - bucket.tokens) / rate, 0.001)
            }
            bucket.tokens -= cost
            if buckets[name] == nil, buckets.count >= capacity { evict(&buckets, now: now) }
            buckets[name] = bucket
            return nil
        }
    }

    /// Gives back tokens taken for work that did not happen (a refused request's bytes).
    func giveBack(_ cost: Double, to name: String) {
        buckets.withLock { buckets in
            guard var bucket = buckets[name] else { return }
            bucket.tokens = min(bucket.tokens + cost, burst)
            buckets[name] = bucket
        }
    }

    private func refilled(_ bucket: Bucket, now: ContinuousClock.Instant) -> Bucket {
        let elapsed = now - bucket.updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Bucket(tokens: min(burst, bucket.tokens + max(seconds, 0) * rate), updated: now)
    }

    private func evict(_ buckets: inout [String: Bucket], now: ContinuousClock.Instant) {
        buckets = buckets.filter { refilled($0.value, now: now).tokens < burst }
        // Still full of busy names: forget half (they start again with a full bucket).
        if buckets.count >= capacity { buckets = Dictionary(uniqueKeysWithValues: buckets.prefix(capacity / 2).map { ($0.key, $0.value) }) }
    }
}

/// The server's rate limits (`[rate_limits]`): requests and body bytes per client address and per
/// publishable key.
final class RateLimiter: Sendable {
    let settings: ServerConfig.RateLimitSettings
    private let addressRequests: TokenBuckets
    private let addressBytes: TokenBuckets
    private let keyRequests: TokenBuckets
    private let keyBytes: TokenBuckets
    /// Where refusals are counted, by payer and budget.
    let metrics: ServerMetrics?

    init(_ settings: ServerConfig.RateLimitSettings, metrics: ServerMetrics? = nil) {
        self.settings = settings
        self.metrics = metrics
        addressRequests = TokenBuckets(rate: settings.perAddress.requestsPerSecond, burst: settings.perAddress.burstRequests)
        addressBytes = TokenBuckets(rate: settings.perAddress.bytesPerSecond, burst: settings.perAddress.burstBytes)
        keyRequests = TokenBuckets(rate: settings.perKey.requestsPerSecond, burst: settings.perKey.burstRequests)
        keyBytes = TokenBuckets(rate: settings.perKey.bytesPerSecond, burst: settings.perKey.burstBytes)
    }

    /// Who a request is charged to: its address, and its publishable key's digest if it has one.
    struct Payer: Sendable {
        var address: String
        var key: String?
    }

    /// Charges one request; a refusal says how long to wait.
    func admit(_ payer: Payer) -> SaveDeskError? {
        guard settings.enabled else { return nil }
        if let wait = addressRequests.take(1, from: payer.address) {
            return refusal("too many requests from this address", wait: wait, payer: "address", budget: "requests")
        }
        if let key = payer.key, let wait = keyRequests.take(1, from: key) {
            addressRequests.giveBack(1, to: payer.address)
            return refusal("too many requests with this key", wait: wait, payer: "key", budget: "requests")
        }
        return nil
    }

    /// Charges `bytes` of body; a refusal says how long to wait.
    func charge(bytes: Int, to payer: Payer) -> SaveDeskError? {
        guard settings.enabled, bytes > 0 else { return nil }
        if let wait = addressBytes.take(Double(bytes), from: payer.address) {
            return refusal("too much data from this address", wait: wait, payer: "address", budget: "bytes")
        }
        if let key = payer.key, let wait = keyBytes.take(Double(bytes), from: key) {
            addressBytes.giveBack(Double(bytes), to: payer.address)
            return refusal("too much data with this key", wait: wait, payer: "key", budget: "bytes")
        }
        return nil
    }

    func refusal(_ what: String, wait: Double, payer: String, budget: String) -> SaveDeskError {
        metrics?.rateLimited(payer: payer, budget: budget)
        let seconds = max(1, wait.rounded(.up))
        return SaveDeskError(status: 429, code: "rate_limited", "\(what); try again in \(Int(seconds)) s", retryAfter: seconds)
    }
}
