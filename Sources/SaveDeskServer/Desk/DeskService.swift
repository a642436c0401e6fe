import Foundation
import RetentionDomain
import SaveDeskAPI

/// Reads for operators: customer search, detail with lifecycle, and the audit timeline.
final class DeskService: Sendable {
    typealias Schemas = Components.Schemas
    let store: Store
    let clock: DataClock
    let config: ServerConfig
    let settlement: Settlement
    let retention: RetentionService
    let admission: CustomerAdmission?

    init(
        store: Store, clock: DataClock, config: ServerConfig, settlement: Settlement, retention: RetentionService,
        admission: CustomerAdmission? = nil
    ) {
        self.admission = admission
        self.store = store
        self.clock = clock
        self.config = config
        self.settlement = settlement
        self.retention = retention
    }

    /// The customers app calls made in the key's mode in the last 24 hours, and the limits on them
    /// (the console's status; `savedesk-server` logs each refusal past the cap).
    func newCustomerFigures(scope: RequestScope) async throws -> Schemas.NewCustomerFigures {
        let since = clock.now(scope).unixSeconds - Seconds.wholeDay
        let created = try await store.read { data in try await data.customers.createdByApps(livemode: scope.livemode, since: since) }
        return .init(
            createdLast24h: created, dailyCapPerKey: config.rateLimits.newCustomers.perKeyPerDay,
            refusedSinceStart: admission?.refusedSinceStart ?? 0
        )
    }

    /// Customers of the key's mode whose id is the query, or whose email or name contains it
    /// (three characters or more) or starts with it (one or two), ignoring case, by name; past
    /// 1,000 matches, the first 1,000 found and `total_capped` (see `CustomerRepository.search`). `page` and `perPage` are within the spec's ranges (checked
    /// before this runs). One query for the page and its total, one for the page's subscriptions.
    func search(query: String?, kind: CustomerRecord.Kind? = nil, page: Int, perPage: Int, scope: RequestScope) async throws -> Schemas.CustomerPage {
        let now = clock.now(scope)
        let livemode = scope.livemode
        let text = (query ?? "").trimmingCharacters(in: .whitespaces).lowercased()
        let found = try await store.read { data in
            let (customers, total, capped) = try await data.customers.search(text, kind: kind, livemode: livemode, page: page, perPage: perPage)
            let subscriptionsByCustomer = Dictionary(grouping: try await data.ledger.subscriptions(customerIds: customers.map(\.id)), by: \.customerId)
            let summaries = customers.map { customer in
                Schemas.CustomerSummary(
                    id: customer.id, name: customer.name, email: customer.email, country: customer.country,
                    createdAt: Date(unixSeconds: customer.createdAt), summary: summary(of: subscriptionsByCustomer[customer.id] ?? [], now: now),
                    kind: .init(rawValue: customer.kind.rawValue) ?? .customer, story: customer.story
                )
            }
            return Schemas.CustomerPage(customers: summaries, page: page, perPage: perPage, total: total ?? 0, totalCapped: capped)
        }
        // Past the last page no row carries the total: the first page's is the same.
        guard found.customers.isEmpty, page > 1 else { return found }
        let first = try await search(query: query, kind: kind, page: 1, perPage: 1, scope: scope)
        return Schemas.CustomerPage(customers: [], page: page, perPage: perPage, total: first.total, totalCapped: first.totalCapped)
    }

    /// One line on the customer's most relevant subscription.
    private func summary(of subscriptions: [SubscriptionRecord], now: Date) -> String {
        guard let main = subscriptions.last(where: { $0.entitlementStatus.isLive })
            ?? subscriptions.last
        else { return "No subscriptions" }
        let name = config.product(id: main.productId)?.displayName ?? main.productId
        let source = main.source == .web ? "Web" : "App Store"
        let display = EntitlementMapping.lifecycle(main, now: now, policy: config.billing.lifecyclePolicy)
        return "\(name) (\(source)) · \(display.summary)"
    }

    func detail(customerId: String, scope: RequestScope) async throws -> Schemas.CustomerDetail {
        let now = clock.now(scope)
        let policy = config.billing.lifecyclePolicy
        return try await store.transaction(key: "customer:" + customerId) { data in
            let customer = try await data.customers.existing(customerId, scope)
            try await settlement.settle(data, customerId: customerId, now: now.unixSeconds, scope: scope)
            var subs: [Schemas.Subscription] = []
            var entitlements: [Schemas.DeskEntitlement] = []
            let records = try await data.ledger.subscriptions(customerId: customerId)
            for record in records {
                let discounts = try await data.ledger.discounts(subscriptionId: record.id)
                subs.append(subscription(record, discounts: discounts, now: now.unixSeconds))
                let entitlement = EntitlementMapping.entitlement(record, now: now, policy: policy)
                let display = EntitlementMapping.lifecycle(record, now: now, policy: policy)
                entitlements.append(Schemas.DeskEntitlement(
                    entitlement: try WireMapping.entitlement(entitlement),
                    lifecycle: Schemas.Lifecycle(
                        state: .init(rawValue: Lifecycle.StateName(display.state).rawValue) ?? .unknown, summary: display.summary,
                        hasAccess: display.hasAccess, daysLeft: display.daysLeft,
                        warning: .init(rawValue: display.warning.wireName) ?? .notice, winBackEligible: display.winBackEligible
                    )
                ))
            }
            // Read last: a settlement above is part of what this view shows.
            let version = try await data.events.version(customerId: customerId)
            return Schemas.CustomerDetail(
                version: version,
                profile: Schemas.CustomerProfile(
                    id: customer.id, name: customer.name, email: customer.email, country: customer.country,
                    createdAt: Date(unixSeconds: customer.createdAt), cardFailing: customer.cardFailing,
                    appAccountToken: customer.appAccountToken, billingCustomerId: customer.billingCustomerId,
                    createdByApp: customer.createdBy != nil
                ),
                subscriptions: subs, entitlements: entitlements,
                retention: try await retention.retention(data, customerId: customerId, subscriptions: records)
            )
        }
    }

    private func subscription(_ record: SubscriptionRecord, discounts: [DiscountRecord], now: Int64) -> Schemas.Subscription {
        let running = discounts.last { $0.percentOff != nil && ($0.endsAt.map { $0 > now } ?? true) }
        return Schemas.Subscription(
            id: record.id, productId: record.productId, source: record.source.rawValue, status: record.status,
            willRenew: record.willRenew, currentPeriodEnd: record.currentPeriodEnd.map(Date.init(unixSeconds:)),
            price: Schemas.Price(amountMicros: record.priceMicros, currencyCode: record.currency),
            discount: running.map { discount in
                let duration: CouponDuration =
                    discount.duration == "repeating" ? .repeating(months: discount.durationInMonths ?? 1)
                    : discount.duration == "forever" ? .forever : .once
                return Schemas.Discount(
                    percentOff: discount.percentOff ?? 0, duration: discount.duration,
                    durationInMonths: discount.durationInMonths, startsAt: Date(unixSeconds: discount.startsAt),
                    endsAt: discount.endsAt.map(Date.init(unixSeconds:)),
                    message: SaveOfferTerms.discount(percent: discount.percentOff ?? 0, duration: duration).message
                )
            },
            pausedAt: record.pausedAt.map(Date.init(unixSeconds:)),
            pauseResumesAt: record.pauseResumesAt.map(Date.init(unixSeconds:)),
            cancelledAt: record.cancelledAt.map(Date.init(unixSeconds:)),
            accessUntil: record.accessUntil.map(Date.init(unixSeconds:)), cancelReason: record.cancelReason
        )
    }

    func timeline(customerId: String, limit: Int, scope: RequestScope) async throws -> Schemas.TimelineResponse {
        return try await store.read { data in
            _ = try await data.customers.existing(customerId, scope)
            let events = try await data.audit.timeline(customerId: customerId, limit: limit)
            return Schemas.TimelineResponse(events: try events.map { event in
                Schemas.AuditEvent(
                    id: event.id, at: Date(unixSeconds: event.at), actor: event.actor, customerId: event.customerId,
                    action: event.action, parameters: try WireMapping.object(event.parameters),
                    before: try event.beforeState.map(WireMapping.object), after: try event.afterState.map(WireMapping.object),
                    requestId: event.requestId
                )
            })
        }
    }
}
