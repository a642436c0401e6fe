import Foundation
import RetentionDomain
import Testing

@testable import SaveDeskServer

@Suite("Billing ledger")
struct BillingLedgerTests {
    static let day = BillingLedger.day
    static let t0: Int64 = 1_795_348_800  // 2026-11-22T12:00:00Z

    let ledger: BillingLedger

    init() throws { ledger = BillingLedger(config: try TestServer.demoConfig()) }

    func subscription(status: Entitlement.Status = .active, periodEnd: Int64 = t0 + 10 * day) -> SubscriptionRecord {
        SubscriptionRecord(
            id: "sub_1", customerId: "cus_1", productId: "premium_monthly", source: .web, status: status.wireValue,
            willRenew: true, isTrial: false, trialType: nil, startedAt: Self.t0 - 100 * Self.day, currentPeriodEnd: periodEnd,
            trialEndsAt: nil, cancelledAt: nil, accessUntil: nil, cancelReason: nil, pausedAt: nil, pauseResumesAt: nil,
            gracePeriodEndsAt: nil, pastDueSince: nil, expirationIntent: nil, originalTransactionId: nil,
            priceMicros: 7_990_000, currency: "USD", updatedAt: Self.t0
        )
    }

    @Test func renewalsAreChargedAtTheDiscountedPriceInsideTheWindowOnly() throws {
        var sub = subscription()
        let (discount, result) = try ledger.acceptOffer(
            &sub, terms: .discount(percent: 40, duration: .repeating(months: 3)), existing: [], productName: "Premium", now: Self.t0
        )
        #expect(result.message == "40% off for 3 months")
        let discounts = [try #require(discount)]
        // Five months pass: renewals on day 10, then monthly.
        let (charges, steps) = ledger.settle(&sub, discounts: discounts, cardFailing: false, now: Self.t0 + 155 * Self.day)
        #expect(charges.map(\.amountMicros) == [4_790_000, 4_790_000, 4_790_000, 7_990_000, 7_990_000],
                "$7.99 less 40% = $4.79 for the renewals inside 3 months, then full price")
        #expect(Set(charges.map(\.status)) == ["paid"])
        #expect(steps.allSatisfy { $0 == "renewed" })
        #expect(sub.entitlementStatus == .active)
        for (previous, next) in zip(charges, charges.dropFirst()) { #expect(next.periodStart == previous.periodEnd) }
    }

    @Test func aOnceCouponAppliesToTheNextChargeOnly() throws {
        var sub = subscription()
        let (discount, result) = try ledger.acceptOffer(&sub, terms: .discount(percent: 50, duration: .once), existing: [], productName: "P", now: Self.t0)
        #expect(result.message == "50% off your next payment")
        let (charges, _) = ledger.settle(&sub, discounts: [try #require(discount)], cardFailing: false, now: Self.t0 + 45 * Self.day)
        #expect(charges.map(\.amountMicros) == [4_000_000, 7_990_000], "$3.995 rounds up to $4.00")
    }

    @Test func offersNeverStack() throws {
        var sub = subscription()
        let terms = SaveOfferTerms.discount(percent: 40, duration: .repeating(months: 3))
        let (first, _) = try ledger.acceptOffer(&sub, terms: terms, existing: [], productName: "P", now: Self.t0)
        let (again, result) = try ledger.acceptOffer(&sub, terms: terms, existing: [try #require(first)], productName: "P", now: Self.t0 + Self.day)
        #expect(again == nil && result.message == "40% off for 3 months")
        let (other, otherResult) = try ledger.acceptOffer(
            &sub, terms: .discount(percent: 10, duration: .forever), existing: [try #require(first)], productName: "P", now: Self.t0
        )
        #expect(other == nil, "a second percent-off offer while one runs is not added")
        #expect(otherResult.message == "40% off for 3 months", "the one in force is reported")
    }

    @Test func aFreePeriodMovesTheRenewal() throws {
        var sub = subscription()
        let (record, result) = try ledger.acceptOffer(&sub, terms: .freePeriod(.months(1)), existing: [], productName: "P", now: Self.t0)
        #expect(result.message == "1 month free")
        #expect(record?.freeDays == 31, "Dec 2 → Jan 2")
        #expect(sub.currentPeriodEnd == BillingLedger.add(.month, to: Self.t0 + 10 * Self.day))
    }

    @Test func aFailingCardGoesPastDueThenExpires() {
        var sub = subscription()
        let (charges, _) = ledger.settle(&sub, discounts: [], cardFailing: true, now: Self.t0 + 11 * Self.day)
        #expect(charges.map(\.status) == ["failed"])
        #expect(sub.entitlementStatus == .pastDue && sub.pastDueSince == Self.t0 + 10 * Self.day)
        // Still inside the 14-day retry window.
        _ = ledger.settle(&sub, discounts: [], cardFailing: true, now: Self.t0 + 20 * Self.day)
        #expect(sub.entitlementStatus == .pastDue)
        _ = ledger.settle(&sub, discounts: [], cardFailing: true, now: Self.t0 + 25 * Self.day)
        #expect(sub.entitlementStatus == .expired)
        #expect(sub.expirationIntent == AppStore.ExpirationIntent.billingError.code)
        #expect(sub.accessUntil == Self.t0 + 24 * Self.day)
    }

    @Test func aFixedCardPaysDuringTheRetryWindow() {
        var sub = subscription()
        _ = ledger.settle(&sub, discounts: [], cardFailing: true, now: Self.t0 + 11 * Self.day)
        let (charges, steps) = ledger.settle(&sub, discounts: [], cardFailing: false, now: Self.t0 + 13 * Self.day)
        #expect(charges.map(\.status) == ["paid"] && steps == ["payment retried and paid"])
        #expect(sub.entitlementStatus == .active && sub.pastDueSince == nil)
    }

    @Test func cancelAtPeriodEndExpiresThenAndIsUndoableBefore() throws {
        var sub = subscription()
        let (_, until) = try ledger.cancel(&sub, immediate: false, reason: "Too expensive", productName: "P", now: Self.t0)
        #expect(until == Self.t0 + 10 * Self.day && !sub.willRenew && sub.cancelReason == "Too expensive")
        var undone = sub
        try ledger.reactivate(&undone, productName: "P")
        #expect(undone.willRenew && undone.cancelledAt == nil)
        let (charges, _) = ledger.settle(&sub, discounts: [], cardFailing: false, now: Self.t0 + 11 * Self.day)
        #expect(charges.isEmpty, "no charge after cancellation")
        #expect(sub.entitlementStatus == .expired && sub.expirationIntent == 1)
        #expect(throws: SaveDeskError.self) { try ledger.reactivate(&sub, productName: "P") }
    }

    @Test func immediateCancelEndsAccessNowAndIsFinal() throws {
        var sub = subscription()
        let (_, until) = try ledger.cancel(&sub, immediate: true, reason: nil, productName: "P", now: Self.t0)
        #expect(until == Self.t0 && sub.entitlementStatus == .cancelled)
        #expect(throws: SaveDeskError.self) { try ledger.cancel(&sub, immediate: true, reason: nil, productName: "P", now: Self.t0) }
        let (charges, _) = ledger.settle(&sub, discounts: [], cardFailing: false, now: Self.t0 + 400 * Self.day)
        #expect(charges.isEmpty && sub.entitlementStatus == .cancelled)
    }

    @Test func pauseShiftsTheRenewalAndResumesByItself() throws {
        var sub = subscription()
        let resumes = try ledger.pause(&sub, days: 30, productName: "P", now: Self.t0)
        #expect(resumes == Self.t0 + 30 * Self.day)
        // No charge while paused, even past the old renewal date.
        var (charges, _) = ledger.settle(&sub, discounts: [], cardFailing: false, now: Self.t0 + 20 * Self.day)
        #expect(charges.isEmpty && sub.entitlementStatus == .paused)
        (charges, _) = ledger.settle(&sub, discounts: [], cardFailing: false, now: Self.t0 + 31 * Self.day)
        #expect(charges.isEmpty && sub.entitlementStatus == .active)
        #expect(sub.currentPeriodEnd == Self.t0 + 40 * Self.day, "the renewal moved by the 30 paused days")
    }

    @Test func aTrialEndsWithTheFirstCharge() {
        var sub = subscription(status: .trialing, periodEnd: Self.t0 + 5 * Self.day)
        sub.isTrial = true
        sub.trialType = "migration"
        sub.trialEndsAt = Self.t0 + 5 * Self.day
        let (charges, steps) = ledger.settle(&sub, discounts: [], cardFailing: false, now: Self.t0 + 6 * Self.day)
        #expect(charges.count == 1 && charges[0].periodStart == Self.t0 + 5 * Self.day)
        #expect(steps == ["trial ended; first charge paid"])
        #expect(sub.entitlementStatus == .active && !sub.isTrial && sub.trialType == nil)
    }

    @Test func appStoreSubscriptionsAreNotBilledHere() {
        var sub = subscription()
        sub.source = .appStore
        let (charges, steps) = ledger.settle(&sub, discounts: [], cardFailing: true, now: Self.t0 + 400 * Self.day)
        #expect(charges.isEmpty && steps.isEmpty && sub.entitlementStatus == .active)
    }

    @Test func monthsFollowTheCalendar() {
        let jan31 = Int64(1_801_353_600)  // 2027-01-31T00:00:00Z
        #expect(WireFormat.formatDate(Date(unixSeconds: BillingLedger.add(.month, to: jan31))) == "2027-02-28T00:00:00Z")
        #expect(BillingLedger.add(.week, to: jan31) == jan31 + 7 * Self.day)
    }
}
