import Foundation
import RetentionDomain
import SaveDeskAPI

/// Win-back for lapsed subscribers: a lapsed web subscription restarts with the configured
/// discount; a lapsed App Store subscriber gets one unused App Store offer code (each code goes to
/// at most one customer, recorded with the operator who handed it out).
final class WinBackService: Sendable {
    typealias Schemas = Components.Schemas
    let changes: ChangeTransaction
    let config: ServerConfig
    let ledger: BillingLedger

    init(changes: ChangeTransaction, config: ServerConfig) {
        self.changes = changes
        self.config = config
        ledger = changes.settlement.ledger
    }

    func winBack(customerId: String, request: Schemas.WinBackRequest, scope: RequestScope, idempotencyKey: String?) async throws -> Schemas.WinBackResponse {
        guard let settings = config.winBack else {
            throw SaveDeskError.unprocessable("win-back is not configured; add a [win_back] section", code: "win_back_not_configured")
        }
        let product = try config.requireProduct(request.productId)
        let policy = config.billing.lifecyclePolicy
        return try await changes.mutate(
            scope, operation: "winBackCustomer", request: ["customer_id": customerId, "product_id": request.productId],
            idempotencyKey: idempotencyKey, customerId: customerId, action: "win_back"
        ) { data, now in
            let customer = try await data.customers.existing(customerId, scope)
            let records = try await data.ledger.subscriptions(customerId: customerId).filter { $0.productId == product.id }
            if let live = records.last(where: { $0.entitlementStatus.isLive }) {
                throw SaveDeskError.conflict(
                    "\(customer.name) still has \(product.displayName) (\(live.status)); win-back is for lapsed subscribers", code: "not_lapsed"
                )
            }
            let lapsed = records.filter {
                EntitlementMapping.lifecycle($0, now: Date(unixSeconds: now), policy: policy).winBackEligible
            }
            if var web = lapsed.last(where: { $0.source == .web }) {
                let before = web
                let terms = settings.terms
                ledger.restart(&web, periodEnd: BillingLedger.add(product.interval, to: now))
                web.updatedAt = now
                let discount = DiscountRecord(
                    id: "di_" + UUID.random().uuidString.lowercased(), subscriptionId: web.id, offerKey: "win_back:\(now)",
                    percentOff: settings.discountPercent, freeDays: nil, duration: "repeating",
                    durationInMonths: settings.durationInMonths, startsAt: now,
                    endsAt: BillingLedger.add(.month, settings.durationInMonths, to: now)
                )
                try await data.ledger.insert(discount)
                try await data.ledger.insert(ChargeRecord(
                    subscriptionId: web.id, amountMicros: ledger.amount(for: web, discounts: [discount], at: now),
                    currency: web.currency, from: now, to: web.currentPeriodEnd ?? now, paid: !customer.cardFailing, at: now
                ))
                if customer.cardFailing {
                    web.status = Entitlement.Status.pastDue.wireValue
                    web.pastDueSince = now
                }
                try await data.ledger.update(web)
                return ChangeTransaction.Change(
                    output: Schemas.WinBackResponse(
                        kind: "web_reactivated", message: "\(product.displayName) restarted at \(terms.message)",
                        renewsAt: web.currentPeriodEnd.map(Date.init(unixSeconds:))
                    ),
                    before: before, after: web
                )
            }
            guard lapsed.contains(where: { $0.source == .appStore }) else {
                throw SaveDeskError.notFound("\(customer.name) has no lapsed \(product.displayName) subscription to win back", code: "no_lapsed_subscription")
            }
            let code = try await OfferCodePool.winBack.issue(
                to: customerId, by: scope.actor, data, now: now, configKey: "win_back.offer_codes"
            ).code
            return ChangeTransaction.Change(
                output: Schemas.WinBackResponse(
                    kind: "offer_code",
                    message: "Read out App Store offer code \(code). The customer redeems it in the App Store: their account, then Redeem Gift Card or Code.",
                    offerCode: code
                ),
                before: nil, after: nil
            )
        }
    }
}
