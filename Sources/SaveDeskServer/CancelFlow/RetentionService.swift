import Foundation
import RetentionDomain
import SaveDeskAPI

/// The App Store half of the cancel flow: a cancellation the agent read out stays waiting for
/// Apple until the App Store reports auto-renew off, and an App Store subscriber who stays can get
/// one offer code from the cancel flow's pool.
final class RetentionService: Sendable {
    typealias Schemas = Components.Schemas
    let changes: ChangeTransaction
    let config: ServerConfig

    init(changes: ChangeTransaction, config: ServerConfig) {
        self.changes = changes
        self.config = config
    }

    /// Records that the steps to cancel in Settings were read out. A repeat while Apple has not
    /// confirmed answers with the same record; when Apple already reports renewal off, it is
    /// confirmed at once.
    func recordAppStoreCancellation(
        customerId: String, request: Schemas.AppStoreCancellationRequest, scope: RequestScope, idempotencyKey: String?
    ) async throws -> Schemas.AppStoreCancellation {
        let product = try config.requireProduct(request.productId)
        return try await changes.mutate(
            scope, operation: "recordAppStoreCancellation", request: ["customer_id": customerId, "product_id": request.productId],
            idempotencyKey: idempotencyKey, customerId: customerId, action: "app_store.cancellation_read_out"
        ) { data, now in
            let customer = try await data.customers.existing(customerId, scope)
            let record = try await appStoreSubscription(data, customer: customer, product: product, purpose: "cancellation")
            if var latest = try await data.appStore.latestCancellation(subscriptionId: record.id), latest.confirmedAt == nil || Self.appleSaysOff(record) {
                // Still waiting (or already confirmed and still off): the same record answers.
                let confirmsNow = latest.confirmedAt == nil && Self.appleSaysOff(record)
                if confirmsNow {
                    try await Self.confirmCancellations(data, of: record, at: now)
                    latest.confirmedAt = now
                }
                return ChangeTransaction.Change(output: try wire(latest, record: record), before: nil, after: nil, changed: confirmsNow)
            }
            let row = AppStoreCancellationRecord(
                id: "asc_" + UUID.random().uuidString.lowercased(), customerId: customer.id, subscriptionId: record.id,
                productId: product.id, readOutAt: now, readOutBy: scope.actor,
                confirmedAt: Self.appleSaysOff(record) ? now : nil, livemode: record.livemode
            )
            try await data.appStore.insert(row)
            return ChangeTransaction.Change(output: try wire(row, record: record), before: nil, after: nil, changed: true)
        }
    }

    /// Hands an App Store subscriber who stays one offer code from the cancel flow's pool.
    func issueOfferCode(
        customerId: String, request: Schemas.AppStoreCancellationRequest, scope: RequestScope, idempotencyKey: String?
    ) async throws -> Schemas.RetentionOfferCode {
        guard config.cancelFlow.appStoreOffer != nil else {
            throw SaveDeskError.unprocessable(
                "no App Store offer codes are configured for the cancel flow; add [cancel_flow.app_store_offer]", code: "no_app_store_offer"
            )
        }
        let product = try config.requireProduct(request.productId)
        return try await changes.mutate(
            scope, operation: "issueRetentionOfferCode", request: ["customer_id": customerId, "product_id": request.productId],
            idempotencyKey: idempotencyKey, customerId: customerId, action: "cancel_flow.offer_code"
        ) { data, now in
            let customer = try await data.customers.existing(customerId, scope)
            _ = try await appStoreSubscription(data, customer: customer, product: product, purpose: "offer code")
            let (code, isNew) = try await OfferCodePool.cancelFlow.issue(
                to: customer.id, by: scope.actor, data, now: now, configKey: "cancel_flow.app_store_offer.offer_codes"
            )
            return ChangeTransaction.Change(
                output: Schemas.RetentionOfferCode(
                    offerCode: code,
                    message: "Read out App Store offer code \(code). The customer redeems it in the App Store: their account, then Redeem Gift Card or Code."
                ),
                before: nil, after: nil, changed: isNew
            )
        }
    }

    /// What the cancel flow can offer this customer on Apple's side, and the cancellations read out.
    func retention(_ data: Repositories, customerId: String, subscriptions records: [SubscriptionRecord]) async throws -> Schemas.CustomerRetention {
        var cancellations: [Schemas.AppStoreCancellation] = []
        for record in records where record.source == .appStore {
            if let latest = try await data.appStore.latestCancellation(subscriptionId: record.id) { cancellations.append(try wire(latest, record: record)) }
        }
        let offer = try await config.cancelFlow.appStoreOffer.asyncMap { settings in
            Schemas.AppStoreOffer(
                title: settings.title, body: settings.body, ctaText: settings.ctaText,
                hasCode: try await OfferCodePool.cancelFlow.hasCode(for: customerId, data)
            )
        }
        return Schemas.CustomerRetention(appStoreOffer: offer, appStoreCancellations: cancellations)
    }

    /// Confirms the open cancellations of an App Store subscription once Apple reports renewal
    /// off (or the subscription has ended). Called wherever App Store data is applied.
    static func confirmCancellations(_ data: Repositories, of record: SubscriptionRecord, at time: Int64) async throws {
        guard record.source == .appStore, appleSaysOff(record) else { return }
        try await data.appStore.confirmCancellations(subscriptionId: record.id, at: time)
    }

    static func appleSaysOff(_ record: SubscriptionRecord) -> Bool {
        !record.willRenew || [.expired, .revoked, .cancelled].contains(record.entitlementStatus)
    }

    // MARK: Private

    /// The customer's live App Store subscription for the product; a live web one means the
    /// cancel flow acts on the web instead.
    private func appStoreSubscription(
        _ data: Repositories, customer: CustomerRecord, product: ServerConfig.ProductConfig, purpose: String
    ) async throws -> SubscriptionRecord {
        let records = try await data.ledger.subscriptions(customerId: customer.id).filter { $0.productId == product.id }
        let live = records.filter { $0.entitlementStatus.isLive }
        if live.contains(where: { $0.source == .web }) {
            throw SaveDeskError.conflict(
                "\(customer.name)'s \(product.displayName) is billed on the web: the cancel flow acts on that subscription, not Apple's",
                code: "billed_on_the_web"
            )
        }
        guard let record = live.last(where: { $0.source == .appStore }) else {
            throw SaveDeskError.notFound(
                "\(customer.name) has no live App Store \(product.displayName) subscription for an App Store \(purpose)",
                code: "no_app_store_subscription"
            )
        }
        return record
    }

    private func wire(_ row: AppStoreCancellationRecord, record: SubscriptionRecord) throws -> Schemas.AppStoreCancellation {
        let name = config.product(id: row.productId)?.displayName ?? row.productId
        return Schemas.AppStoreCancellation(
            id: row.id, productId: row.productId, readOutAt: Date(unixSeconds: row.readOutAt), readOutBy: row.readOutBy,
            state: row.confirmedAt == nil ? .waitingForApple : .confirmed, confirmedAt: row.confirmedAt.map(Date.init(unixSeconds:)),
            accessUntil: record.currentPeriodEnd.map(Date.init(unixSeconds:)), steps: AppStore.cancellationSteps(productName: name)
        )
    }
}
