import Foundation
import Testing

@testable import RetentionDomain

@Suite("Lifecycle resolver")
struct LifecycleTests {
    static let now = WireFormat.parseDate("2026-11-22T12:00:00Z")!
    static func at(_ days: Double) -> Date { now.addingTimeInterval(days * 86_400) }

    func entitlement(
        _ status: Entitlement.Status, source: Entitlement.Source = .webCheckout, active: Bool = true,
        expires: Double? = 20, willRenew: Bool = true, configure: (inout Entitlement) -> Void = { _ in }
    ) -> Entitlement {
        var value = Entitlement(id: "e", productId: "premium_monthly", source: source, status: status, isActive: active,
                                expiresAt: expires.map(Self.at), purchasedAt: Self.at(-100), willRenew: willRenew)
        configure(&value)
        return value
    }

    func resolve(_ entitlement: Entitlement, _ context: Lifecycle.Context = .init()) -> Lifecycle.Display {
        Lifecycle.resolve(entitlement, now: Self.now, context: context)
    }

    @Test func activeRenews() {
        let display = resolve(entitlement(.active))
        #expect(display.state == .active(renewsOn: Self.at(20)))
        #expect(display.hasAccess && display.daysLeft == 20 && display.warning == .none && !display.winBackEligible)
        #expect(display.summary == "Active · renews Dec 12, 2026")
    }

    @Test func trialAndMigrationTrial() {
        let trial = entitlement(.trialing) { $0.isTrial = true; $0.trialEndsAt = Self.at(9) }
        #expect(resolve(trial).state == .trialing(endsOn: Self.at(9), isMigration: false))
        let migration = resolve(trial, .init(isMigrationTrial: true))
        #expect(migration.state == .trialing(endsOn: Self.at(9), isMigration: true))
        #expect(migration.hasAccess && migration.daysLeft == 9)
        #expect(migration.summary == "Migration trial · ends Dec 1, 2026")
    }

    @Test func cancelsOnKeepsAccessUntilTheDate() {
        let display = resolve(entitlement(.active, willRenew: false) { $0.cancelledAt = Self.at(-1) })
        #expect(display.state == .cancelsOn(Self.at(20)))
        #expect(display.hasAccess && display.daysLeft == 20 && display.warning == .notice)
        #expect(display.summary == "Cancels on Dec 12, 2026 · access until then")
        // Cancelled status with access still running reads the same way.
        #expect(resolve(entitlement(.cancelled, willRenew: false)).state == .cancelsOn(Self.at(20)))
    }

    @Test func gracePeriodCountsDaysLeft() {
        let grace = entitlement(.gracePeriod, source: .storeKit) { $0.gracePeriodEndsAt = Self.at(6) }
        let display = resolve(grace)
        #expect(display.state == .gracePeriod(endsOn: Self.at(6)))
        #expect(display.hasAccess && display.daysLeft == 6 && display.warning == .warning)
        #expect(display.summary == "Grace period · 6 days left to fix payment")
        let nearlyOver = entitlement(.gracePeriod, source: .storeKit) { $0.gracePeriodEndsAt = Self.at(2) }
        #expect(resolve(nearlyOver).warning == .critical)
        let over = entitlement(.gracePeriod, source: .storeKit) { $0.gracePeriodEndsAt = Self.at(-1) }
        #expect(resolve(over).state == .billingRetry, "a grace period that has ended is billing retry")
    }

    @Test func billingRetryAccessIsConfigurable() {
        let retry = entitlement(.pastDue)
        let display = resolve(retry)
        #expect(display.state == .billingRetry && display.hasAccess && display.warning == .critical)
        let strict = resolve(retry, .init(policy: .init(billingRetryGrantsAccess: false)))
        #expect(!strict.hasAccess)
        // App Store status 3 maps to the same row.
        #expect(Entitlement.Status(appStore: .billingRetry) == .pastDue)
        #expect(Entitlement.Status(appStore: .gracePeriod) == .gracePeriod)
    }

    @Test func pausedHasNoAccess() {
        let display = resolve(entitlement(.paused) { $0.pausedAt = Self.at(-3); $0.pauseResumesAt = Self.at(27) })
        #expect(display.state == .paused(resumesOn: Self.at(27)))
        #expect(!display.hasAccess && display.daysLeft == 27)
        #expect(display.summary == "Paused · resumes Dec 19, 2026")
    }

    @Test(arguments: [
        (AppStore.ExpirationIntent.customerCancelled, Lifecycle.ExpiryReason.voluntary, true),
        (.billingError, .billingError, true),
        (.priceIncreaseDeclined, .priceIncrease, true),
        (.productUnavailable, .productUnavailable, false),
        (.other, .other, true),
    ])
    func expiredWithReason(intent: AppStore.ExpirationIntent, reason: Lifecycle.ExpiryReason, winBack: Bool) {
        let expired = entitlement(.expired, source: .storeKit, active: false, expires: -5, willRenew: false)
        let display = resolve(expired, .appStore(expirationIntent: intent))
        #expect(display.state == .expired(reason))
        #expect(!display.hasAccess)
        #expect(display.winBackEligible == winBack)
        #expect(display.summary == "Expired (\(reason.explanation))")
    }

    @Test func webCancellationsAndLapsesExpire() {
        #expect(resolve(entitlement(.cancelled, active: false, expires: -1, willRenew: false)).state == .expired(.voluntary))
        #expect(resolve(entitlement(.active, expires: -1, willRenew: false)).state == .expired(.voluntary))
        #expect(resolve(entitlement(.active, expires: -1, willRenew: true)).state == .expired(.billingError))
    }

    @Test func revokedIsRefunded() {
        let display = resolve(entitlement(.revoked, source: .storeKit, active: false))
        #expect(display.state == .revoked && !display.hasAccess && !display.winBackEligible)
        #expect(display.summary == "Revoked (refunded)")
    }

    @Test func unknownStatusFollowsTheServer() {
        let display = resolve(entitlement(.unknown("on_hold"), active: false))
        #expect(display.state == .unknown("on_hold") && !display.hasAccess)
    }

    @Test func tiersRankProducts() {
        let ladder = TierLadder(levels: ["basic_monthly": 1, "premium_monthly": 2, "premium_yearly": 2])
        #expect(ladder.accessLevel(for: "premium_monthly") > ladder.accessLevel(for: "basic_monthly"))
        #expect(ladder.change(from: "basic_monthly", to: "premium_monthly") == .upgrade)
        #expect(ladder.change(from: "premium_yearly", to: "basic_monthly") == .downgrade)
        #expect(ladder.change(from: "premium_monthly", to: "premium_yearly") == .crossgrade)
        #expect(ladder.accessLevel(for: "unknown") == 0)
        let paused = entitlement(.paused)
        var basic = entitlement(.active)
        basic.productId = "basic_monthly"
        #expect(ladder.accessLevel(of: [paused, basic], now: Self.now) == 1, "a paused premium gives no access")
    }
}
