import Foundation
import RetentionDomain

/// The subscription semantics of billing.md, as pure operations on records: save offers, pause
/// and resume, cancel and reactivate, renewals that honour discount windows, and a failing card
/// moving a subscription to past due and then to expiry. Only web subscriptions are billed here;
/// App Store subscriptions are Apple's to change.
struct BillingLedger: Sendable {
    let config: ServerConfig

    static let day = Seconds.wholeDay

    func interval(of productId: String) -> BillingInterval {
        config.product(id: productId)?.interval ?? .month
    }

    /// `time` moved by `count` intervals on the UTC calendar (Jan 31 + 1 month = Feb 28).
    static func add(_ interval: BillingInterval, _ count: Int = 1, to time: Int64) -> Int64 {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let component: Calendar.Component
        var amount = count
        switch interval {
        case .week: component = .day; amount *= 7
        case .year: component = .year
        case .month, .unknown: component = .month
        }
        let date = calendar.date(byAdding: component, value: amount, to: Date(unixSeconds: time)) ?? Date(unixSeconds: time)
        return date.unixSeconds
    }

    /// The price charged at `time`: the list price less any discount running then, less any
    /// credit due then (never below zero).
    func amount(for subscription: SubscriptionRecord, discounts: [DiscountRecord], at time: Int64) -> Int64 {
        let running = discounts.filter { $0.applies(at: time) }
        let percent = running.compactMap(\.percentOff).max() ?? 0
        let credit = running.compactMap(\.amountOffMicros).reduce(0, +)
        return max(0, Money.discounted(micros: subscription.priceMicros, percentOff: percent, currencyCode: subscription.currency) - credit)
    }

    // MARK: Time passing

    /// Applies every transition due by `now`, in time order: pause auto-resume, trial end and
    /// first charge, renewals, cancel-at-period-end expiry, past due → expired. Returns the
    /// charges made (paid or failed) and a short description of each step.
    /// `appStore` is the customer's active App Store subscription of the same group, if any: a
    /// migration trial never ends while Apple is paid (the web follows Apple's period) or about to
    /// renew (the web waits a day at a time for Apple's answer), so nobody is charged twice.
    func settle(
        _ subscription: inout SubscriptionRecord, discounts: [DiscountRecord], cardFailing: Bool, now: Int64,
        appStore: (paidThrough: Int64, renewing: Bool)? = nil
    ) -> (charges: [ChargeRecord], steps: [String]) {
        guard subscription.source == .web else { return ([], []) }
        var charges: [ChargeRecord] = []
        var steps: [String] = []
        func charge(at time: Int64) -> Bool {
            let end = Self.add(interval(of: subscription.productId), to: time)
            let paid = !cardFailing
            charges.append(ChargeRecord(
                subscriptionId: subscription.id, amountMicros: amount(for: subscription, discounts: discounts, at: time),
                currency: subscription.currency, from: time, to: end, paid: paid, at: time
            ))
            if paid {
                subscription.status = Entitlement.Status.active.wireValue
                subscription.currentPeriodEnd = end
                subscription.pastDueSince = nil
            } else {
                subscription.status = Entitlement.Status.pastDue.wireValue
                subscription.pastDueSince = subscription.pastDueSince ?? time
            }
            return paid
        }
        for _ in 0..<10_000 {  // bounded: each pass moves time or state forward
            switch subscription.entitlementStatus {
            case .paused:
                guard let resumes = subscription.pauseResumesAt, resumes <= now else { return (charges, steps) }
                let paused = resumes - (subscription.pausedAt ?? resumes)
                subscription.currentPeriodEnd = subscription.currentPeriodEnd.map { $0 + paused }
                subscription.status = Entitlement.Status.active.wireValue
                subscription.pausedAt = nil
                subscription.pauseResumesAt = nil
                steps.append("pause ended; resumed automatically")
            case .trialing:
                guard let end = subscription.trialEndsAt ?? subscription.currentPeriodEnd, end <= now else {
                    return (charges, steps)
                }
                if subscription.trialType == "migration", let apple = appStore, apple.paidThrough > end || apple.renewing {
                    let until = apple.paidThrough > end ? apple.paidThrough : end + Self.day
                    subscription.trialEndsAt = until
                    subscription.currentPeriodEnd = until
                    steps.append(apple.paidThrough > end
                        ? "the App Store subscription is paid until \(CalendarDays.display(Date(unixSeconds: until), in: .gmt)); the migration trial follows it (no double charge)"
                        : "Apple still renews; the migration trial waits a day for Apple (no double charge)")
                    continue
                }
                subscription.isTrial = false
                subscription.trialType = nil
                if !subscription.willRenew {
                    expire(&subscription, at: end, intent: .customerCancelled)
                    steps.append("trial ended without renewal; expired")
                } else {
                    steps.append(charge(at: end) ? "trial ended; first charge paid" : "trial ended; first charge failed")
                }
            case .active:
                guard let end = subscription.currentPeriodEnd, end <= now else { return (charges, steps) }
                if !subscription.willRenew {
                    expire(&subscription, at: end, intent: .customerCancelled)
                    steps.append("period ended after cancellation; expired")
                } else {
                    steps.append(charge(at: end) ? "renewed" : "renewal payment failed; past due")
                }
            case .pastDue:
                let since = subscription.pastDueSince ?? now
                let deadline = since + Int64(config.billing.retryWindowDays) * Self.day
                if !cardFailing {
                    _ = charge(at: min(now, deadline))
                    steps.append("payment retried and paid")
                } else if deadline <= now {
                    expire(&subscription, at: deadline, intent: .billingError)
                    steps.append("payment kept failing; expired")
                } else {
                    return (charges, steps)
                }
            default:
                return (charges, steps)
            }
        }
        return (charges, steps)
    }

    private func expire(_ subscription: inout SubscriptionRecord, at time: Int64, intent: AppStore.ExpirationIntent) {
        subscription.status = Entitlement.Status.expired.wireValue
        subscription.willRenew = false
        subscription.accessUntil = time
        subscription.expirationIntent = intent.code
        subscription.pastDueSince = nil
    }

    // MARK: Agent and customer actions

    private func requireLive(_ subscription: SubscriptionRecord, productName: String) throws(SaveDeskError) {
        guard subscription.entitlementStatus.isLive else {
            throw .conflict("\(productName) is \(subscription.status); there is no live subscription to change", code: "subscription_ended")
        }
    }

    /// Applies the cancel flow's save offer. The same offer never stacks: a second accept (or a
    /// second percent-off offer while one is running) returns what is already in force.
    func acceptOffer(
        _ subscription: inout SubscriptionRecord, terms: SaveOfferTerms, existing: [DiscountRecord], productName: String,
        now: Int64
    ) throws(SaveDeskError) -> (discount: DiscountRecord?, result: SaveOfferResult) {
        try requireLive(subscription, productName: productName)
        let key = "cancel_flow:" + terms.message
        if let same = existing.first(where: { $0.offerKey == key }) {
            return (nil, result(of: same, fallback: terms))
        }
        subscription.willRenew = true
        subscription.cancelledAt = nil
        subscription.accessUntil = nil
        subscription.cancelReason = nil
        switch terms {
        case .discount(let percent, let duration):
            if let running = existing.first(where: { $0.percentOff != nil && $0.applies(at: now) }) {
                return (nil, result(of: running, fallback: terms))
            }
            var record = DiscountRecord(
                id: "di_" + UUID.random().uuidString.lowercased(), subscriptionId: subscription.id, offerKey: key,
                percentOff: percent, freeDays: nil, duration: "once", durationInMonths: nil, startsAt: now, endsAt: nil
            )
            switch duration {
            case .once:
                // Applies to the next charge only.
                record.endsAt = (subscription.currentPeriodEnd ?? now) + 1
            case .repeating(let months):
                record.duration = "repeating"
                record.durationInMonths = months
                record.endsAt = Self.add(.month, months, to: now)
            case .forever:
                record.duration = "forever"
            }
            return (record, terms.result)
        case .freePeriod(let period):
            let from = subscription.trialEndsAt ?? subscription.currentPeriodEnd ?? now
            let extended: Int64
            let days: Int
            switch period {
            case .days(let count):
                extended = from + Int64(count) * Self.day
                days = count
            case .months(let count):
                extended = Self.add(.month, count, to: from)
                days = Int((extended - from) / Self.day)
            }
            if subscription.trialEndsAt != nil, subscription.isTrial { subscription.trialEndsAt = extended }
            subscription.currentPeriodEnd = extended
            let record = DiscountRecord(
                id: "di_" + UUID.random().uuidString.lowercased(), subscriptionId: subscription.id, offerKey: key,
                percentOff: nil, freeDays: days, duration: "free_period", durationInMonths: nil, startsAt: now,
                endsAt: extended
            )
            return (record, terms.result)
        }
    }

    private func result(of discount: DiscountRecord, fallback: SaveOfferTerms) -> SaveOfferResult {
        guard let percent = discount.percentOff else { return fallback.result }
        let duration: CouponDuration =
            switch discount.duration {
            case "repeating": .repeating(months: discount.durationInMonths ?? 1)
            case "forever": .forever
            default: .once
            }
        return SaveOfferTerms.discount(percent: percent, duration: duration).result
    }

    /// Pauses for `days`. Access is off until the pause ends; the next renewal moves by the pause.
    func pause(_ subscription: inout SubscriptionRecord, days: Int, productName: String, now: Int64) throws(SaveDeskError) -> Int64 {
        try requireLive(subscription, productName: productName)
        switch subscription.entitlementStatus {
        case .paused:
            // The SDK sends no Idempotency-Key: a second pause answers as the first did.
            if let resumes = subscription.pauseResumesAt { return resumes }
            throw .conflict("\(productName) is already paused", code: "already_paused")
        case .active:
            break
        default:
            throw .conflict("only an active subscription can be paused; \(productName) is \(subscription.status)", code: "not_pausable")
        }
        let resumes = now + Int64(days) * Self.day
        subscription.status = Entitlement.Status.paused.wireValue
        subscription.pausedAt = now
        subscription.pauseResumesAt = resumes
        return resumes
    }

    /// Ends a pause early; the renewal date moves by the time actually paused.
    func resume(_ subscription: inout SubscriptionRecord, productName: String, now: Int64) throws(SaveDeskError) {
        guard subscription.entitlementStatus == .paused else {
            throw .conflict("\(productName) is not paused (it is \(subscription.status))", code: "not_paused")
        }
        let paused = now - (subscription.pausedAt ?? now)
        subscription.currentPeriodEnd = subscription.currentPeriodEnd.map { $0 + paused }
        subscription.status = Entitlement.Status.active.wireValue
        subscription.pausedAt = nil
        subscription.pauseResumesAt = nil
    }

    /// Cancels at period end (undoable until then) or immediately (final).
    func cancel(
        _ subscription: inout SubscriptionRecord, immediate: Bool, reason: String?, productName: String, now: Int64
    ) throws(SaveDeskError) -> (cancelledAt: Int64, accessUntil: Int64) {
        try requireLive(subscription, productName: productName)
        if !immediate, !subscription.willRenew, let cancelledAt = subscription.cancelledAt, let until = subscription.accessUntil {
            return (cancelledAt, until)  // already cancelled at period end: the same answer again
        }
        subscription.willRenew = false
        subscription.cancelledAt = now
        subscription.cancelReason = reason ?? subscription.cancelReason
        if immediate {
            subscription.status = Entitlement.Status.cancelled.wireValue
            subscription.accessUntil = now
            subscription.pausedAt = nil
            subscription.pauseResumesAt = nil
            subscription.pastDueSince = nil
            subscription.expirationIntent = AppStore.ExpirationIntent.customerCancelled.code
        } else {
            subscription.accessUntil = subscription.isTrial
                ? (subscription.trialEndsAt ?? subscription.currentPeriodEnd ?? now)
                : (subscription.currentPeriodEnd ?? now)
        }
        return (now, subscription.accessUntil ?? now)
    }

    /// Starts a subscription afresh (win-back, upgrade): active, renewing, a new period ending at
    /// `periodEnd`, with any cancellation, trial, payment trouble or expiry cleared.
    func restart(_ subscription: inout SubscriptionRecord, periodEnd: Int64) {
        subscription.status = Entitlement.Status.active.wireValue
        subscription.willRenew = true
        subscription.isTrial = false
        subscription.trialType = nil
        subscription.cancelledAt = nil
        subscription.accessUntil = nil
        subscription.cancelReason = nil
        subscription.expirationIntent = nil
        subscription.pastDueSince = nil
        subscription.currentPeriodEnd = periodEnd
    }

    /// Undoes a cancellation at period end.
    func reactivate(_ subscription: inout SubscriptionRecord, productName: String) throws(SaveDeskError) {
        try requireLive(subscription, productName: productName)
        guard !subscription.willRenew else {
            throw .conflict("\(productName) is not cancelled; it already renews", code: "not_cancelled")
        }
        subscription.willRenew = true
        subscription.cancelledAt = nil
        subscription.accessUntil = nil
        subscription.cancelReason = nil
    }
}
