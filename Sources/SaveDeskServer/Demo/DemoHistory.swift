import Foundation
import RetentionDomain
import SaveDeskAPI

/// About 90 days of generated history for the demo, so every analytics chart has shape: cancel
/// flows across the demo operators and the app (web and App Store customers, each ending as it
/// would have: a coupon, a pause, switch and save, an offer code, a cancellation read out and
/// confirmed by Apple), and switch-and-save impressions and conversions.
///
/// It is deterministic (a fixed seed; times relative to `now`, like the demo seed) and clearly
/// test mode: every row has `livemode` false, the customers are `cus_hist_…` at
/// `history.example`, and each carries a timeline note saying it was generated.
public enum DemoHistory {
    public static let days = 90
    static let seed: UInt64 = 20_261_123

    /// Adds the history once (when no `cus_hist_` customer exists yet); returns the customers added.
    public static func apply(config: ServerConfig, databasePath: String, now: Date = Date()) async throws -> Int {
        let store = try await Store.open(path: databasePath, logger: .init(label: "savedesk.history"))
        do {
            let added = try await store.transaction(key: "seed") { data in
                guard try await data.customers.count(idPrefix: "cus_hist_") == 0 else { return 0 }
                let batch = try generate(config: config, now: now)
                try await batch.insert(into: data)
                return batch.customers.count
            }
            await store.close()
            return added
        } catch {
            await store.close()
            throw error
        }
    }

    // MARK: Generation

    /// Everything the history writes.
    struct Batch {
        var customers: [CustomerRecord] = []
        var subscriptions: [SubscriptionRecord] = []
        var discounts: [DiscountRecord] = []
        var responses: [Response] = []
        var impressions: [(customerId: String, session: String, variant: String, productId: String, at: Int64)] = []
        var conversions: [(customerId: String, variant: String, at: Int64)] = []
        var cancellations: [(id: String, customerId: String, subscriptionId: String, productId: String, at: Int64, by: String, confirmed: Int64?)] = []
        var audit: [AuditRecord] = []
        var retentionRequests: [RetentionRequestRecord] = []

        struct Response {
            var id: String
            var customerId: String
            var productId: String
            var outcome: CancelFlow.Outcome
            var offerShown = false, offerAccepted = false, pauseShown = false, pauseAccepted = false
            var pauseDays: Int?
            var lastStep: Int
            var answers: [CancelFlow.Answer]
            var actor: String
            var at: Int64
        }

        func insert(into data: Repositories) async throws {
            for customer in customers { try await data.customers.insert(customer) }
            for subscription in subscriptions { try await data.ledger.insert(subscription) }
            for discount in discounts { try await data.ledger.insert(discount) }
            for response in responses {
                let answers = try ChangeTransaction.json(response.answers.map {
                    Components.Schemas.CancelFlowAnswer(questionId: $0.questionId, selectedOptionId: $0.selectedOptionId, freeText: $0.freeText)
                })
                try await data.cancelFlow.insert(.init(
                    id: response.id, customerId: response.customerId, productId: response.productId,
                    outcome: response.outcome.wireValue, offerShown: response.offerShown, offerAccepted: response.offerAccepted,
                    pauseShown: response.pauseShown, pauseAccepted: response.pauseAccepted, pauseDurationDays: response.pauseDays,
                    lastStepSeen: response.lastStep,
                    answers: response.answers.map { .init(questionId: $0.questionId, optionId: $0.selectedOptionId, freeText: $0.freeText) },
                    answersJSON: answers, variantId: "202611", actor: response.actor, livemode: false, createdAt: response.at
                ))
            }
            for impression in impressions {
                try await data.switchAndSave.recordImpression(
                    customerId: impression.customerId, sessionId: impression.session, variantId: impression.variant,
                    productId: impression.productId, flowType: SwitchAndSaveService.flowType, at: impression.at, livemode: false
                )
            }
            for conversion in conversions {
                try await data.switchAndSave.recordConversion(
                    customerId: conversion.customerId, variantId: conversion.variant, source: "web_checkout", at: conversion.at, livemode: false
                )
            }
            for row in cancellations {
                try await data.appStore.insert(AppStoreCancellationRecord(
                    id: row.id, customerId: row.customerId, subscriptionId: row.subscriptionId, productId: row.productId,
                    readOutAt: row.at, readOutBy: row.by, confirmedAt: row.confirmed, livemode: false
                ))
            }
            for request in retentionRequests { try await data.retentionMessages.insert(request) }
            for event in audit { try await data.audit.append(event) }
        }
    }

    /// SplitMix64: small, fast, and the same sequence on every machine.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= SplitMix64.increment
            return SplitMix64.mix(state)
        }
        /// A number in 0..<bound.
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
        /// True with the given probability (0…1).
        mutating func chance(_ probability: Double) -> Bool { Double(next() % 10_000) < probability * 10_000 }
        mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }
        /// One of the values, by weight.
        mutating func weighted<T>(_ values: [(T, Int)]) -> T {
            var roll = below(values.reduce(0) { $0 + $1.1 })
            for (value, weight) in values {
                if roll < weight { return value }
                roll -= weight
            }
            return values[values.count - 1].0
        }
    }

    static let firstNames = [
        "Aiko", "Amara", "Anders", "Bea", "Caleb", "Dara", "Elena", "Felix", "Grace", "Hugo", "Ines", "Jonas", "Kaia", "Leo",
        "Mila", "Nico", "Omar", "Paula", "Rafael", "Sana", "Tomas", "Uma", "Victor", "Wren", "Yara", "Zane",
    ]
    static let lastNames = [
        "Abbott", "Brandt", "Castillo", "Dubois", "Eriksen", "Fontaine", "Garcia", "Hughes", "Ito", "Jovanovic", "Kowalski",
        "Lindgren", "Moreau", "Nakamura", "Osei", "Park", "Quintero", "Rossi", "Silva", "Tanaka", "Usman", "Varga", "Weber",
    ]
    static let freeTexts = [
        "Too many subscriptions this month", "I mostly read on the web now", "Offline downloads kept failing",
        "Will be back after the holidays", "The price went up", "More comics please", "Family plan would help",
    ]

    static func generate(config: ServerConfig, now: Date) throws -> Batch {
        var rng = Generator(state: seed)
        var batch = Batch()
        let nowSeconds = now.unixSeconds
        let day = Seconds.wholeDay
        let operators = ["Marco (support)", "Priya (support lead)"]
        let questions = config.cancelFlow.config.orderedQuestions
        let product = try requireProduct(config, "premium_monthly")
        let steps = questions.count
        var number = 0

        func newCustomer(at time: Int64) -> CustomerRecord {
            number += 1
            let first = firstNames[(number * 7) % firstNames.count], last = lastNames[(number * 11) % lastNames.count]
            let id = String(format: "cus_hist_%04d", number)
            let customer = CustomerRecord(
                id: id, name: "\(first) \(last)", email: "\(first.lowercased()).\(last.lowercased()).\(number)@history.example",
                country: rng.weighted([("US", 6), ("CA", 2), ("GB", 1), ("DE", 1)]), createdAt: time - Int64(60 + rng.below(500)) * day,
                cardFailing: false, livemode: false, kind: .generated
            )
            batch.customers.append(customer)
            batch.audit.append(AuditRecord(
                id: "ev_hist_\(id)", at: customer.createdAt, actor: "demo history", customerId: id, action: "support.note",
                parameters: (try? ChangeTransaction.json(["note": "Generated demo history (test mode): not a real customer."])) ?? "{}",
                beforeState: nil, afterState: nil, requestId: "demo-history"
            ))
            return customer
        }
        func subscription(_ customer: CustomerRecord, source: SubscriptionRecord.Source, status: Entitlement.Status, started: Int64,
                          periodEnd: Int64, willRenew: Bool = true) -> SubscriptionRecord {
            let price = source == .web ? product.webPrice ?? product.appStorePrice : product.appStorePrice ?? product.webPrice
            let record = SubscriptionRecord(
                id: "sub_\(customer.id.dropFirst(4))_\(source == .web ? "web" : "as")", customerId: customer.id, productId: product.id,
                source: source, status: status.wireValue, willRenew: willRenew, isTrial: false, trialType: nil, startedAt: started,
                currentPeriodEnd: periodEnd, trialEndsAt: nil, cancelledAt: nil, accessUntil: nil, cancelReason: nil, pausedAt: nil,
                pauseResumesAt: nil, gracePeriodEndsAt: nil, pastDueSince: nil, expirationIntent: nil,
                originalTransactionId: source == .appStore ? String(2_000_000_890_000_000 + number) : nil,
                priceMicros: price?.amountMicros ?? 0, currency: price?.currencyCode ?? "USD", updatedAt: nowSeconds, livemode: false
            )
            return record
        }
        /// The next period end after `now`, for a monthly subscription that renewed since `start`.
        func nextRenewal(from start: Int64) -> Int64 {
            var end = start + 30 * day
            while end <= nowSeconds { end += 30 * day }
            return end
        }

        for daysAgo in stride(from: days - 1, through: 0, by: -1) {
            let dayStart = nowSeconds - Int64(daysAgo) * day
            let weekday = (daysAgo + 2) % 7 < 5
            let flows = weekday ? 1 + rng.below(3) : rng.below(2)
            for _ in 0..<flows {
                let at = dayStart - Int64(rng.below(10 * 3600)) - 3600
                let customer = newCustomer(at: at)
                let appStore = rng.chance(0.4)
                let actor = rng.weighted([(operators[0], 5), (operators[1], 3), ("app", 2)])
                // The answers.
                let reason = rng.weighted([(11, 35), (12, 20), (13, 30), (14, 15)])
                var answers = [CancelFlow.Answer(questionId: questions[0].id, selectedOptionId: reason)]
                let triggered = reason == 11 || reason == 12
                if !triggered, steps > 1 {
                    answers.append(CancelFlow.Answer(
                        questionId: questions[1].id, selectedOptionId: rng.chance(0.7) ? rng.weighted([(21, 3), (22, 5), (23, 4)]) : nil))
                    if steps > 2 {
                        answers.append(CancelFlow.Answer(questionId: questions[2].id, freeText: rng.chance(0.35) ? rng.pick(freeTexts) : nil))
                    }
                }
                var response = Batch.Response(
                    id: "cr_hist_\(customer.id.dropFirst(9))", customerId: customer.id, productId: product.id, outcome: .dismissed,
                    lastStep: steps, answers: answers, actor: actor, at: at
                )
                // Some flows end before the retention page: the agent or the app leaves mid-way.
                if !triggered, rng.chance(0.08) {
                    let seen = rng.below(min(2, steps))
                    response.lastStep = seen
                    response.answers = Array(answers.prefix(seen))
                    batch.subscriptions.append(subscription(
                        customer, source: appStore ? .appStore : .web, status: .active, started: at - Int64(40 + rng.below(400)) * day,
                        periodEnd: nextRenewal(from: at - Int64(rng.below(30)) * day)))
                    batch.responses.append(response)
                    continue
                }
                let started = at - Int64(40 + rng.below(400)) * day
                if appStore {
                    var apple = subscription(customer, source: .appStore, status: .active, started: started, periodEnd: at + Int64(3 + rng.below(27)) * day)
                    let eligible = customer.country == "US" || customer.country == "CA" ? rng.chance(0.75) : false
                    // Before the App Store half of the cancel flow (more than 60 days ago), an
                    // App Store subscriber could choose a pause that was never applied.
                    if daysAgo >= 60, reason == 12 {
                        response.pauseShown = true
                        response.pauseAccepted = rng.chance(0.6)
                        response.pauseDays = response.pauseAccepted ? 30 : nil
                    }
                    response.offerShown = true
                    let session = "hist_session_\(customer.id.dropFirst(9))"
                    if eligible {
                        batch.impressions.append((customer.id, session, "", product.id, at))
                    }
                    if rng.chance(eligible ? 0.32 : 0.2) {
                        response.offerAccepted = true
                        response.outcome = .retained
                        if eligible {
                            // Switched: web billing from the App Store period's end, Apple renewal off.
                            batch.conversions.append((customer.id, "", at + 600))
                            // Most have turned Apple's renewal off since; a few recent ones not yet.
                            apple.willRenew = daysAgo < 14 && rng.chance(0.4)
                            if let end = apple.currentPeriodEnd, end <= nowSeconds { apple.status = Entitlement.Status.expired.wireValue; apple.expirationIntent = 1 }
                            var web = subscription(customer, source: .web, status: .active, started: at, periodEnd: nextRenewal(from: apple.currentPeriodEnd ?? at))
                            web.priceMicros = Money.discounted(micros: web.priceMicros, percentOff: config.campaign?.discountPercent ?? 0, currencyCode: web.currency)
                            batch.subscriptions.append(web)
                        }
                    } else if rng.chance(0.85) || response.pauseAccepted {
                        if response.pauseAccepted {
                            response.outcome = .dismissed  // the pause could not be applied
                        } else {
                            response.outcome = .cancelled
                            apple.willRenew = false
                            let confirmed: Int64? = daysAgo < 10 && rng.chance(0.5) ? nil : at + Int64(rng.below(40 * 3600))
                            if let end = apple.currentPeriodEnd, end <= nowSeconds { apple.status = Entitlement.Status.expired.wireValue; apple.expirationIntent = 1 }
                            if confirmed == nil { apple.willRenew = true }
                            batch.cancellations.append((
                                "asc_hist_\(customer.id.dropFirst(9))", customer.id, apple.id, product.id, at,
                                actor == "app" ? operators[0] : actor, confirmed.map { min($0, nowSeconds) }
                            ))
                        }
                    }
                    if apple.status == Entitlement.Status.active.wireValue, apple.willRenew, let end = apple.currentPeriodEnd, end <= nowSeconds {
                        apple.currentPeriodEnd = nextRenewal(from: end - 30 * day)
                    }
                    batch.subscriptions.append(apple)
                } else {
                    var web = subscription(customer, source: .web, status: .active, started: started, periodEnd: nextRenewal(from: started))
                    let offerFirst = reason != 12
                    var order: [CancelFlow.Navigator.RetentionStep] = offerFirst ? [.offer, .pause] : [.pause, .offer]
                    let takes: [CancelFlow.Navigator.RetentionStep: Double] = [
                        .offer: reason == 11 ? 0.4 : 0.15, .pause: reason == 12 ? 0.45 : 0.12,
                    ]
                    while let step = order.first {
                        order.removeFirst()
                        if step == .offer { response.offerShown = true } else { response.pauseShown = true }
                        guard rng.chance(takes[step] ?? 0) else { continue }
                        if step == .offer {
                            response.offerAccepted = true
                            response.outcome = .retained
                            batch.discounts.append(DiscountRecord(
                                id: "di_hist_\(customer.id.dropFirst(9))", subscriptionId: web.id, offerKey: "cancel_flow:\(at)", percentOff: 40,
                                freeDays: nil, duration: "repeating", durationInMonths: 3, startsAt: at, endsAt: at + 91 * day
                            ))
                        } else {
                            let days = rng.weighted([(30, 5), (60, 3), (90, 2)])
                            response.pauseAccepted = true
                            response.pauseDays = days
                            response.outcome = .paused
                            if at + Int64(days) * day > nowSeconds {
                                web.status = Entitlement.Status.paused.wireValue
                                web.pausedAt = at
                                web.pauseResumesAt = at + Int64(days) * day
                            }
                        }
                        break
                    }
                    if response.outcome == .dismissed, rng.chance(0.85) {
                        response.outcome = .cancelled
                        let end = at + Int64(1 + rng.below(29)) * day
                        web.willRenew = false
                        web.cancelledAt = at
                        web.currentPeriodEnd = end
                        web.accessUntil = end
                        web.cancelReason = questions[0].options.first { $0.id == reason }?.label
                        if end <= nowSeconds { web.status = Entitlement.Status.expired.wireValue }
                    }
                    batch.subscriptions.append(web)
                }
                if triggered { response.lastStep = steps }
                batch.responses.append(response)
            }
            // Switch and save outside the cancel flow: the app shows it to App Store subscribers.
            if rng.chance(0.6) {
                let at = dayStart - Int64(rng.below(10 * 3600)) - 3600
                let customer = newCustomer(at: at)
                var apple = subscription(customer, source: .appStore, status: .active, started: at - Int64(40 + rng.below(300)) * day,
                                         periodEnd: at + Int64(3 + rng.below(27)) * day)
                batch.impressions.append((customer.id, "hist_app_\(customer.id.dropFirst(9))", "202611", product.id, at))
                if rng.chance(0.3) {
                    batch.conversions.append((customer.id, "202611", at + 900))
                    var web = subscription(customer, source: .web, status: .active, started: at, periodEnd: nextRenewal(from: apple.currentPeriodEnd ?? at))
                    web.priceMicros = Money.discounted(micros: web.priceMicros, percentOff: config.campaign?.discountPercent ?? 0, currencyCode: web.currency)
                    batch.subscriptions.append(web)
                    // Most turn Apple's renewal off; a few recent ones still have to.
                    apple.willRenew = daysAgo < 10 && rng.chance(0.5)
                    if !apple.willRenew, let end = apple.currentPeriodEnd, end <= nowSeconds {
                        apple.status = Entitlement.Status.expired.wireValue
                        apple.expirationIntent = 1
                    }
                }
                if apple.willRenew, let end = apple.currentPeriodEnd, end <= nowSeconds { apple.currentPeriodEnd = nextRenewal(from: end - 30 * day) }
                batch.subscriptions.append(apple)
            }
        }
        addCancelPages(to: &batch, config: config, now: nowSeconds)
        return batch
    }

    /// Apple's cancel page, opened once in the last 60 days by most of the history's App Store
    /// subscribers and answered by the same decision the server makes, so its analytics have a save
    /// rate per message and for the holdout. Its own generator: the rest of the history is as it
    /// was. (No answer body is kept for these: nothing was signed.)
    static func addCancelPages(to batch: inout Batch, config: ServerConfig, now: Int64) {
        guard let settings = config.appStore?.retentionMessaging else { return }
        var rng = Generator(state: seed ^ 0x00C4_11CE_1BA6_E000)
        let day = Seconds.wholeDay
        for (index, subscription) in batch.subscriptions.enumerated() where subscription.source == .appStore {
            guard let otid = subscription.originalTransactionId, rng.chance(0.75) else { continue }
            let earliest = max(subscription.startedAt, now - 60 * day), latest = min(now, subscription.currentPeriodEnd ?? now)
            guard latest > earliest else { continue }
            let at = earliest + Int64(rng.below(Int(latest - earliest)))
            let earlier = batch.responses.filter { $0.customerId == subscription.customerId && $0.at < at }
            let facts = RetentionMessaging.Facts(
                productId: subscription.productId, tenureDays: Int((at - subscription.startedAt) / day),
                answeredOptionIds: Set(earlier.flatMap { $0.answers.compactMap(\.selectedOptionId) }), cancelFlows: earlier.count
            )
            let request = AppStoreRetentionRequest(
                originalTransactionId: otid, appAppleId: settings.appAppleId,
                productId: config.product(id: subscription.productId)?.storekitProductId ?? subscription.productId,
                userLocale: rng.chance(0.15) ? "fr-FR" : "en-US",
                requestIdentifier: String(format: "%08x-%04x-4%03x-8%03x-%012llx", UInt32(truncatingIfNeeded: rng.next()), rng.below(0x10000),
                                          rng.below(0x1000), rng.below(0x1000), rng.next() & 0xFFFF_FFFF_FFFF),
                environment: "Sandbox", signedDate: at * 1000
            )
            let choice = RetentionMessaging.decide(settings.decision, facts: facts, originalTransactionId: otid, userLocale: request.userLocale)
            var record = RetentionMessagingService.record(request, livemode: false, customerId: subscription.customerId, receivedAt: at, choice: choice)
            record.latencyMicros = Int64(700 + rng.below(3_000))
            if record.offerIdentifier != nil, subscription.willRenew, rng.chance(0.7) { record.redeemedAt = min(now, at + Int64(1 + rng.below(20)) * day) }
            // Some of the held-out subscribers who were still renewing went on to cancel on Apple's
            // default page: the lift the answers are measured against.
            if choice == .holdout, subscription.willRenew, rng.chance(0.4) { batch.subscriptions[index].willRenew = false }
            // Most of those shown the cheaper plan took it there and then: on Basic, renewing.
            if let storeId = record.alternateProductId, let basic = config.product(appStoreProductId: storeId), rng.chance(0.6) {
                batch.subscriptions[index].productId = basic.id
                batch.subscriptions[index].willRenew = true
                batch.subscriptions[index].status = Entitlement.Status.active.wireValue
                batch.subscriptions[index].expirationIntent = nil
                batch.subscriptions[index].currentPeriodEnd = now + Int64(1 + rng.below(28)) * day
                batch.subscriptions[index].priceMicros = basic.appStorePrice?.amountMicros ?? subscription.priceMicros
            }
            batch.retentionRequests.append(record)
            let sentence = RetentionMessagingService.shown(record, settings: settings, config: config).sentence
            if let audit = try? RetentionMessagingService.auditRecord(
                record, customerId: subscription.customerId, sentence: sentence, id: "ev_hist_page_\(otid)", requestId: "demo-history"
            ) { batch.audit.append(audit) }
        }
    }

    private static func requireProduct(_ config: ServerConfig, _ id: String) throws -> ServerConfig.ProductConfig {
        guard let product = config.product(id: id) ?? config.products.first else {
            throw InvalidConfig(file: "config", issues: [ConfigIssue(path: "products", message: "the demo history needs a product")])
        }
        return product
    }
}
