import Foundation

/// The lifecycle resolver: an entitlement and `now` → what the agent sees (flows.md table),
/// whether the customer has access, days left, how loud the warning is, and whether a win-back
/// offer applies.
public enum Lifecycle {
    /// Why a subscription ended.
    public enum ExpiryReason: String, Hashable, Sendable, Codable {
        case voluntary, billingError, priceIncrease, productUnavailable, other

        init(intent: AppStore.ExpirationIntent) {
            switch intent {
            case .customerCancelled: self = .voluntary
            case .billingError: self = .billingError
            case .priceIncreaseDeclined: self = .priceIncrease
            case .productUnavailable: self = .productUnavailable
            case .other, .unknown: self = .other
            }
        }

        public var explanation: String {
            switch self {
            case .voluntary: "cancelled"
            case .billingError: "payment failed"
            case .priceIncrease: "price increase not accepted"
            case .productUnavailable: "product no longer available"
            case .other: "other reason"
            }
        }
    }

    /// The display state, one per row of the flows.md table.
    public enum DisplayState: Hashable, Sendable {
        case active(renewsOn: Date?)
        case trialing(endsOn: Date?, isMigration: Bool)
        case cancelsOn(Date)
        case gracePeriod(endsOn: Date?)
        case billingRetry
        case paused(resumesOn: Date?)
        case expired(ExpiryReason)
        case revoked
        /// A status this version does not know; access follows the server's `is_active`.
        case unknown(String)
    }

    /// How prominently the state should be flagged to the agent.
    public enum WarningLevel: Int, Hashable, Sendable, Comparable, Codable {
        case none, notice, warning, critical
        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// Rules a business may set.
    public struct Policy: Hashable, Sendable {
        /// Whether customers keep access during billing retry (default yes, with a payment warning).
        public var billingRetryGrantsAccess: Bool
        /// Grace-period days left at or below which the warning becomes critical.
        public var criticalGraceDays: Int

        public init(billingRetryGrantsAccess: Bool = true, criticalGraceDays: Int = 3) {
            self.billingRetryGrantsAccess = billingRetryGrantsAccess
            self.criticalGraceDays = criticalGraceDays
        }
    }

    /// Facts beyond the entitlement itself.
    public struct Context: Hashable, Sendable {
        /// The App Store's expiration intent, when the subscription came from the App Store.
        public var expirationIntent: AppStore.ExpirationIntent?
        /// True when the trial is a switch-and-save migration trial.
        public var isMigrationTrial: Bool
        public var policy: Policy
        public var timeZone: TimeZone

        public init(
            expirationIntent: AppStore.ExpirationIntent? = nil, isMigrationTrial: Bool = false,
            policy: Policy = Policy(), timeZone: TimeZone = .gmt
        ) {
            self.expirationIntent = expirationIntent
            self.isMigrationTrial = isMigrationTrial
            self.policy = policy
            self.timeZone = timeZone
        }
    }

    /// What the agent sees for one entitlement.
    public struct Display: Hashable, Sendable {
        public var state: DisplayState
        public var hasAccess: Bool
        /// Calendar days to the date that matters (renewal, trial end, access end, grace end, resume).
        public var daysLeft: Int?
        public var warning: WarningLevel
        public var winBackEligible: Bool
        /// One line an agent can read out: "Grace period · 5 days left to fix payment".
        public var summary: String
    }

    public static func resolve(_ entitlement: Entitlement, now: Date, context: Context = Context()) -> Display {
        let tz = context.timeZone
        func days(to date: Date?) -> Int? { date.map { CalendarDays.remaining(from: now, until: $0, in: tz) } }
        func on(_ date: Date?) -> String { date.map { CalendarDays.display($0, in: tz) } ?? "an unknown date" }

        func expired(_ reason: ExpiryReason) -> Display {
            Display(
                state: .expired(reason), hasAccess: false, daysLeft: nil, warning: .notice,
                winBackEligible: reason != .productUnavailable, summary: "Expired (\(reason.explanation))"
            )
        }
        func cancelsOn(_ date: Date) -> Display {
            let left = days(to: date)
            return Display(
                state: .cancelsOn(date), hasAccess: true, daysLeft: left, warning: .notice, winBackEligible: false,
                summary: "Cancels on \(on(date)) · access until then"
            )
        }
        let endedReason = context.expirationIntent.map(ExpiryReason.init(intent:))
        // The SDK's protocol sends a trial as `active` with `is_trial`: it is a trial.
        let status: Entitlement.Status = entitlement.status == .active && entitlement.isTrial ? .trialing : entitlement.status

        switch status {
        case .active:
            if let end = entitlement.expiresAt, end <= now {
                return expired(endedReason ?? (entitlement.willRenew ? .billingError : .voluntary))
            }
            if !entitlement.willRenew, let end = entitlement.expiresAt { return cancelsOn(end) }
            let renews = entitlement.expiresAt
            return Display(
                state: .active(renewsOn: renews), hasAccess: true, daysLeft: days(to: renews), warning: .none,
                winBackEligible: false, summary: renews == nil ? "Active" : "Active · renews \(on(renews))"
            )
        case .trialing:
            let end = entitlement.trialEndsAt ?? entitlement.expiresAt
            if let end, end <= now, !entitlement.isActive { return expired(endedReason ?? .voluntary) }
            if !entitlement.willRenew, let end { return cancelsOn(end) }
            let label = context.isMigrationTrial ? "Migration trial" : "Trial"
            return Display(
                state: .trialing(endsOn: end, isMigration: context.isMigrationTrial), hasAccess: true,
                daysLeft: days(to: end), warning: .none, winBackEligible: false, summary: "\(label) · ends \(on(end))"
            )
        case .gracePeriod:
            if let end = entitlement.gracePeriodEndsAt, end <= now {
                return billingRetry(context.policy)
            }
            let left = days(to: entitlement.gracePeriodEndsAt)
            let critical = (left ?? 0) <= context.policy.criticalGraceDays
            let leftText = left.map { "\(CalendarDays.phrase($0)) left to fix payment" } ?? "payment failed"
            return Display(
                state: .gracePeriod(endsOn: entitlement.gracePeriodEndsAt), hasAccess: true, daysLeft: left,
                warning: critical ? .critical : .warning, winBackEligible: false, summary: "Grace period · \(leftText)"
            )
        case .pastDue:
            return billingRetry(context.policy)
        case .paused:
            let resumes = entitlement.pauseResumesAt
            return Display(
                state: .paused(resumesOn: resumes), hasAccess: false, daysLeft: days(to: resumes), warning: .notice,
                winBackEligible: false,
                summary: resumes == nil ? "Paused · no resume date" : "Paused · resumes \(on(resumes))"
            )
        case .cancelled:
            if let end = entitlement.expiresAt, end > now { return cancelsOn(end) }
            return expired(endedReason ?? .voluntary)
        case .expired:
            return expired(endedReason ?? .other)
        case .revoked:
            return Display(
                state: .revoked, hasAccess: false, daysLeft: nil, warning: .notice, winBackEligible: false,
                summary: "Revoked (refunded)"
            )
        case .unknown(let raw):
            return Display(
                state: .unknown(raw), hasAccess: entitlement.isActive, daysLeft: days(to: entitlement.expiresAt),
                warning: .notice, winBackEligible: false, summary: "Status \"\(raw)\""
            )
        }
    }

    private static func billingRetry(_ policy: Policy) -> Display {
        Display(
            state: .billingRetry, hasAccess: policy.billingRetryGrantsAccess, daysLeft: nil, warning: .critical,
            winBackEligible: false, summary: "Billing retry · payment failing, card needs updating"
        )
    }
}

extension Lifecycle.Context {
    /// The context for an App Store status code, as the server and the seeds map it.
    public static func appStore(
        expirationIntent: AppStore.ExpirationIntent?, policy: Lifecycle.Policy = .init(), timeZone: TimeZone = .gmt
    ) -> Lifecycle.Context {
        Lifecycle.Context(expirationIntent: expirationIntent, policy: policy, timeZone: timeZone)
    }
}

extension Entitlement.Status {
    /// The entitlement status for an App Store subscription status code.
    public init(appStore status: AppStore.SubscriptionStatus) {
        switch status {
        case .active: self = .active
        case .expired: self = .expired
        case .billingRetry: self = .pastDue
        case .gracePeriod: self = .gracePeriod
        case .revoked: self = .revoked
        case .unknown(let code): self = .unknown("app_store_status_\(code)")
        }
    }
}

extension Lifecycle {
    /// A display state's name on the wire and in every report, written once (the server writes it,
    /// the console reads it back).
    public enum StateName: String, CaseIterable, Hashable, Sendable {
        case active, trialing, paused, expired, revoked, unknown
        case migrationTrial = "migration_trial", cancelsOn = "cancels_on", gracePeriod = "grace_period", billingRetry = "billing_retry"

        public init(_ state: DisplayState) {
            self = switch state {
            case .active: .active
            case .trialing(_, let migration): migration ? .migrationTrial : .trialing
            case .cancelsOn: .cancelsOn
            case .gracePeriod: .gracePeriod
            case .billingRetry: .billingRetry
            case .paused: .paused
            case .expired: .expired
            case .revoked: .revoked
            case .unknown: .unknown
            }
        }

        /// A state the agent must hear about even when the customer's overall standing says
        /// something else (a banner on the customer screen).
        public var needsAttention: Bool {
            switch self {
            case .gracePeriod, .billingRetry, .paused, .cancelsOn, .expired, .revoked: true
            case .active, .trialing, .migrationTrial, .unknown: false
            }
        }
    }
}

extension Lifecycle.WarningLevel {
    /// The level's name on the wire.
    public var wireName: String {
        switch self {
        case .none: "none"
        case .notice: "notice"
        case .warning: "warning"
        case .critical: "critical"
        }
    }

    /// From the wire's name; an unknown name is a notice.
    public init(wireName: String) {
        self = Self.allLevels.first { $0.wireName == wireName } ?? .notice
    }

    static let allLevels: [Self] = [.none, .notice, .warning, .critical]
}
