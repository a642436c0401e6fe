import Foundation
import RetentionDomain
import SQLKit
import SaveDeskAPI
import Synchronization

struct CheckoutRecord: Codable, Hashable, Sendable {
    var id: String
    var customerId: String
    var productId: String
    /// pending, completed or failed.
    var status: String
    var amount: Int64
    var originalAmount: Int64
    var pendingAmount: Int64
    var currency: String
    var discountPercent: Int
    var trialType: String?
    /// When billing starts (the App Store period's end for a switch).
    var trialEnd: Int64?
    var storekitOriginalTransactionId: String?
    var storekitStatus: Int?
    var subscriptionId: String?
    var createdAt: Int64
    var purchasedAt: Int64?
    var livemode: Bool = false
}

/// Web checkout (billing.md). With an App Store expiry it bridges the paid App Store period with
/// a migration trial: nothing is charged now and the discounted price at the trial's end, so the
/// customer never pays twice. With under 48 h left there is no trial: billing starts at the
/// boundary. Paying creates the web subscription and entitlement.
final class CheckoutService: Sendable {
    typealias Schemas = Components.Schemas
    let subscriptions: SubscriptionService
    let portal: PortalService
    private let inFlight = Mutex<Set<String>>([])

    init(subscriptions: SubscriptionService, portal: PortalService) {
        self.subscriptions = subscriptions
        self.portal = portal
    }

    var config: ServerConfig { subscriptions.config }
    static let minimumTrial: Int64 = 48 * 3_600
    static let maximumTrial: Int64 = 730 * 86_400
    static let lifetime: Int64 = 86_400

    func create(_ request: Schemas.CheckoutRequest, idempotencyKey: String?) async throws -> Schemas.CheckoutResponse {
        let product = try subscriptions.product(request.productId)
        guard let price = product.webPrice else {
            throw SaveDeskError.notFound("\(product.displayName) has no web price", code: "unknown_product")
        }
        let key = "\(request.userId)|\(request.productId)"
        guard inFlight.withLock({ $0.insert(key).inserted }) else {
            throw SaveDeskError.conflict("a checkout for this customer and product is being created; try again shortly",
                                         code: "checkout_in_progress", retryAfter: 1)
        }
        defer { _ = inFlight.withLock { $0.remove(key) } }
        let switching = request.storekitSubscriptionEnd != nil
        let discount = switching ? (config.campaign?.prompt(forProductId: product.id).discountPercent ?? 0) : 0
        let original = Money.minorUnits(fromMicros: price.amountMicros, currencyCode: price.currencyCode)
        let discounted = Money.minorUnits(
            fromMicros: Money.discounted(micros: price.amountMicros, percentOff: discount, currencyCode: price.currencyCode),
            currencyCode: price.currencyCode
        )
        let base = portal.baseURL.withLock { $0 }
        return try await subscriptions.mutate(
            operation: "createCheckout", request: request, idempotencyKey: idempotencyKey, customerId: request.userId,
            action: "checkout.created"
        ) { db, now in
            _ = try await subscriptions.customer(db, id: request.userId)
            var record = CheckoutRecord(
                id: "txn_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20), customerId: request.userId,
                productId: product.id, status: "pending", amount: original, originalAmount: original, pendingAmount: 0,
                currency: price.currencyCode, discountPercent: discount, trialType: nil, trialEnd: nil,
                storekitOriginalTransactionId: request.storekitOriginalTransactionId, storekitStatus: nil, subscriptionId: nil,
                createdAt: now, purchasedAt: nil, livemode: RequestScope.current?.livemode ?? false
            )
            if let end = request.storekitSubscriptionEnd?.unixSeconds {
                guard end > now else {
                    throw SaveDeskError.unprocessable("the App Store subscription has already ended; use a plain checkout", code: "storekit_period_over")
                }
                guard end - now <= Self.maximumTrial else {
                    throw SaveDeskError.badRequest("storekit_subscription_end is more than 730 days away", code: "invalid_storekit_end")
                }
                record.amount = 0
                record.pendingAmount = discounted
                record.trialEnd = end
                record.trialType = end - now >= Self.minimumTrial ? "migration" : nil
            }
            try await db.insert(record, into: "checkout_transactions")
            return .init(output: Schemas.CheckoutResponse(
                transactionId: record.id, checkoutUrl: "\(base)/checkout/\(record.id)", amount: Int(record.amount),
                currency: record.currency, originalAmount: Int(original), productName: product.displayName, isSubscription: true,
                subscriptionInterval: product.interval.wireValue, trialType: record.trialType, trialEnd: record.trialEnd.map(Int.init),
                pendingAmount: Int(record.pendingAmount)
            ), before: nil, after: nil)
        }
    }

    /// A checkout of the request's mode (a test key never sees a live checkout, and the other way round).
    private func load(_ db: any SQLDatabase, _ id: String, anyMode: Bool = false) async throws -> CheckoutRecord {
        guard let record = try await db.select().column("*").from("checkout_transactions").where("id", .equal, id)
            .first(decoding: CheckoutRecord.self, with: SQLRowDecoder(keyDecodingStrategy: .convertFromSnakeCase)),
            anyMode || record.livemode == (RequestScope.current?.livemode ?? record.livemode)
        else { throw SaveDeskError.notFound("no transaction \(id)", code: "unknown_transaction") }
        return record
    }

    private func wire(_ record: CheckoutRecord, expiresAt: Int64?) -> Schemas.CheckoutTransaction {
        Schemas.CheckoutTransaction(
            id: record.id, productId: record.productId, status: record.status, source: "web_checkout",
            purchasedAt: record.purchasedAt.map(Date.init(unixSeconds:)), expiresAt: expiresAt.map(Date.init(unixSeconds:)),
            storekitStatus: record.storekitStatus
        )
    }

    func transaction(id: String) async throws -> Schemas.CheckoutTransaction {
        try await subscriptions.store.exclusive { db in
            let record = try await load(db, id)
            let expires = try await record.subscriptionId.asyncMap { try await subscriptionEnd(db, $0) } ?? nil
            return wire(record, expiresAt: expires)
        }
    }

    private func subscriptionEnd(_ db: any SQLDatabase, _ id: String) async throws -> Int64? {
        try await db.select().column("current_period_end").from("subscriptions").where("id", .equal, id).first()?
            .decode(column: "current_period_end", as: Int64?.self)
    }

    func updateStoreKitStatus(id: String, _ update: Schemas.StoreKitStatusUpdate) async throws -> Schemas.StoreKitStatusUpdateResponse {
        guard [1, 2].contains(update.storekitStatus) else {
            throw SaveDeskError.badRequest("storekit_status is 1 (Apple still renewing) or 2 (Apple renewal off), got \(update.storekitStatus)", code: "invalid_storekit_status")
        }
        let customer = try await subscriptions.store.exclusive { db in try await load(db, id).customerId }
        return try await subscriptions.mutate(
            operation: "updateTransactionStoreKitStatus", request: update, idempotencyKey: nil, customerId: customer,
            action: "checkout.storekit_status"
        ) { db, _ in
            var record = try await load(db, id)
            record.storekitStatus = update.storekitStatus
            try await db.update("checkout_transactions").set("storekit_status", to: update.storekitStatus).where("id", .equal, id).run()
            return .init(output: .init(id: record.id, storekitStatus: update.storekitStatus), before: nil, after: nil)
        }
    }

    /// Completes a pending checkout as the payment webhook would: paid creates the web
    /// subscription (trialing until the App Store period ends, with the switch-and-save discount).
    func complete(_ request: Schemas.SimulateCheckoutRequest, idempotencyKey: String?) async throws -> Schemas.CheckoutTransaction {
        let customer = try await subscriptions.store.exclusive { db in try await load(db, request.transactionId).customerId }
        return try await subscriptions.mutate(
            operation: "simulateCheckout", request: request, idempotencyKey: idempotencyKey, customerId: customer,
            action: "checkout.\(request.outcome.rawValue)"
        ) { db, now in
            var record = try await load(db, request.transactionId)
            guard record.status == "pending" else {
                throw SaveDeskError.conflict("transaction \(record.id) is already \(record.status)", code: "transaction_not_pending")
            }
            guard now - record.createdAt <= Self.lifetime else {
                throw SaveDeskError(status: 410, code: "checkout_expired", "this checkout expired; create a new one")
            }
            guard request.outcome == .paid else {
                record.status = "failed"
                try await db.update("checkout_transactions").set("status", to: "failed").where("id", .equal, record.id).run()
                return .init(output: wire(record, expiresAt: nil), before: nil, after: nil)
            }
            let product = try subscriptions.product(record.productId)
            let interval = product.interval
            let start = record.trialEnd ?? now
            var subscription = SubscriptionRecord(
                id: "sub_web_\(record.id)", customerId: record.customerId, productId: product.id, source: .web,
                status: record.trialType == "migration" ? "trialing" : "active", willRenew: true,
                isTrial: record.trialType == "migration", trialType: record.trialType,
                startedAt: now, currentPeriodEnd: record.trialEnd ?? BillingLedger.add(interval, to: now),
                trialEndsAt: record.trialType == "migration" ? record.trialEnd : nil, cancelledAt: nil, accessUntil: nil,
                cancelReason: nil, pausedAt: nil, pauseResumesAt: nil, gracePeriodEndsAt: nil, pastDueSince: nil,
                expirationIntent: nil, originalTransactionId: nil, priceMicros: product.webPrice?.amountMicros ?? 0,
                currency: record.currency, updatedAt: now, livemode: record.livemode
            )
            try await db.insert(subscription, into: "subscriptions")
            if record.discountPercent > 0 {
                try await db.insert(DiscountRecord(
                    id: "di_" + UUID().uuidString.lowercased(), subscriptionId: subscription.id, offerKey: "switch_and_save",
                    percentOff: record.discountPercent, freeDays: nil, duration: "forever", durationInMonths: nil,
                    startsAt: now, endsAt: nil
                ), into: "discounts")
            }
            if record.trialEnd == nil {
                // A plain checkout is paid now for its first period.
                try await db.insert(ChargeRecord(
                    subscriptionId: subscription.id, amountMicros: subscription.priceMicros, currency: record.currency,
                    from: start, to: subscription.currentPeriodEnd ?? start, paid: true, at: now
                ), into: "charges")
            }
            subscription.updatedAt = now
            record.status = "completed"
            record.purchasedAt = now
            record.subscriptionId = subscription.id
            try await db.update("checkout_transactions").set("status", to: "completed").set("purchased_at", to: now)
                .set("subscription_id", to: subscription.id).where("id", .equal, record.id).run()
            return .init(output: wire(record, expiresAt: subscription.currentPeriodEnd), before: nil, after: subscription)
        }
    }

    /// The page behind `checkout_url`: what the customer is buying and when they pay.
    func page(id: String) async throws -> PortalService.Page {
        let found = try? await subscriptions.store.exclusive { db in try await load(db, id, anyMode: true) }
        guard let record = found, let product = config.product(id: record.productId) else {
            return .init(status: 404, html: PortalHTML.message(title: "Checkout not found", body: "This checkout link is not valid."))
        }
        let money = { (cents: Int64) in Money.format(minorUnits: cents, currencyCode: record.currency) }
        var lines = ["\(product.displayName): \(money(record.originalAmount))/\(product.interval.wireValue)"]
        if let end = record.trialEnd {
            lines.append("Nothing to pay today. Your App Store subscription is paid until \(CalendarDays.display(Date(unixSeconds: end), in: .gmt)).")
            lines.append("Then \(money(record.pendingAmount)) (\(record.discountPercent)% off) each \(product.interval.wireValue).")
        } else {
            lines.append("Due today: \(money(record.amount)).")
        }
        lines.append("Status: \(record.status).")
        return .init(status: 200, html: PortalHTML.document(
            title: "Checkout", body: "<h1>Checkout</h1>" + lines.map { "<p>\(PortalHTML.escape($0))</p>" }.joined()
        ))
    }
}
