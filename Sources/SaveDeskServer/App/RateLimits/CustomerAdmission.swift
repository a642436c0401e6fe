import Foundation
import Logging
import Synchronization

/// New customers made by app calls (a user id the server had not seen, in a write): a
/// publishable key is public, so each creation is charged to the key's and the client address's
/// creation budgets (token buckets, per instance), and the key is held to a hard cap of new
/// customers in any 24 hours (counted in the database, so across instances and restarts). Past a
/// budget the call is 429 with Retry-After; past the cap it is 429 too, and logged, instead of
/// filling the disk. Operators' keys are not charged.
final class CustomerAdmission: Sendable {
    let settings: ServerConfig.RateLimitSettings
    private let byKey: TokenBuckets
    private let byAddress: TokenBuckets
    private let refusals = Atomic<Int>(0)
    let logger: Logger
    let metrics: ServerMetrics?

    init(_ settings: ServerConfig.RateLimitSettings, logger: Logger, metrics: ServerMetrics? = nil) {
        self.settings = settings
        byKey = TokenBuckets(rate: settings.newCustomers.perKeyPerSecond, burst: settings.newCustomers.perKeyBurst)
        byAddress = TokenBuckets(rate: settings.newCustomers.perAddressPerSecond, burst: settings.newCustomers.perAddressBurst)
        self.logger = logger
        self.metrics = metrics
    }

    /// New customers refused since this instance started.
    var refusedSinceStart: Int { refusals.load(ordering: .relaxed) }

    /// Admits one new customer for `scope` (an app's call), or throws the 429. `createdRecently`
    /// counts the key's new customers in the last 24 hours.
    func admit(_ scope: RequestScope, createdRecently: () async throws -> Int) async throws {
        guard settings.enabled, scope.isPublishable else { return }
        let limits = settings.newCustomers
        if let address = scope.clientAddress, let wait = byAddress.take(1, from: address) {
            throw refuse("too many new users from this address", wait: wait, reason: "address")
        }
        if let wait = byKey.take(1, from: scope.principal) {
            if let address = scope.clientAddress { byAddress.giveBack(1, to: address) }
            throw refuse("too many new users with this key", wait: wait, reason: "key")
        }
        let recent = try await createdRecently()
        guard recent < limits.perKeyPerDay else {
            logger.warning("a publishable key reached its cap of new customers in 24 hours; refusing more", metadata: [
                "key_digest": "\(scope.principal.prefix(12))", "cap": "\(limits.perKeyPerDay)", "mode": "\(scope.livemode ? "live" : "test")",
            ])
            throw refuse("this key made \(limits.perKeyPerDay) new users in the last 24 hours, its cap", wait: 3_600, reason: "daily_cap",
                         code: "new_customer_cap")
        }
    }

    private func refuse(_ what: String, wait: Double, reason: String, code: String = "new_customer_rate_limited") -> SaveDeskError {
        refusals.add(1, ordering: .relaxed)
        metrics?.newCustomerRefused(reason: reason)
        let seconds = max(1, wait.rounded(.up))
        return SaveDeskError(status: 429, code: code, "\(what); try again in \(Int(seconds)) s", retryAfter: seconds)
    }
}
