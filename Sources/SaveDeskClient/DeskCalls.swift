import Foundation
import RetentionDomain
import SaveDeskAPI

/// The Desk API (`/v1/desk/…`): operators' calls. They need a secret key; the server refuses a
/// publishable one, and refuses live keys on the clock and the simulators.
extension SaveDeskClient {
    /// Customers by id, email or name, one page at a time (pages start at 1).
    public func searchCustomers(
        query: String? = nil, page: Int = 1, perPage: Int = 20, kind: Wire.CustomerKind? = nil
    ) async throws(SaveDeskClientError) -> Wire.CustomerPage {
        let query = query?.trimmedOfWhitespace
        let kind = kind.flatMap { Operations.SearchCustomers.Input.Query.KindPayload(rawValue: $0.rawValue) }
        return try await send(retry: true, {
            try await api.searchCustomers(query: .init(query: query?.isEmpty == false ? query : nil, page: page, perPage: perPage, kind: kind))
        }) { try $0.ok.body.json }
    }

    /// Profile, subscriptions, and entitlements with their lifecycle display.
    public func customer(id: String) async throws(SaveDeskClientError) -> Wire.CustomerDetail {
        try await send(retry: true, { try await api.getCustomer(path: .init(customerId: id)) }) { try $0.ok.body.json }
    }

    /// Says this console's agent is on a customer, doing `activity` (a heartbeat; `.left` when leaving).
    @discardableResult
    public func announcePresence(
        customerId: String, session: String, activity: Wire.DeskActivity
    ) async throws(SaveDeskClientError) -> Wire.DeskPresence {
        try await send(retry: false, {
            try await api.announceDeskPresence(body: .json(.init(customerId: customerId, session: session, activity: activity)))
        }) { try $0.ok.body.json }
    }

    /// The version of a customer a change is built on (`CustomerDetail.version`): the calls made
    /// in `body` carry it as `If-Match`, and the server refuses them (409 `customer_changed`,
    /// naming what changed) if someone else changed the customer since.
    public static func expecting<T>(
        version: Int64?, isolation: isolated (any Actor)? = #isolation, _ body: () async throws(SaveDeskClientError) -> T
    ) async throws(SaveDeskClientError) -> T {
        do {
            return try await VersionPrecondition.$expected.withValue(version, operation: { try await body() }, isolation: isolation)
        } catch let error as SaveDeskClientError {
            throw error
        } catch {
            throw SaveDeskClientError(kind: .invalidResponse, message: "\(error)")
        }
    }

    /// The fields of a customer an operator brings or changes (nil: not given).
    public struct CustomerFieldsInput: Sendable {
        public var name, email, country, appAccountToken, billingCustomerId: String?
        public var appStoreOriginalTransactionIds: [String]?

        public init(
            name: String? = nil, email: String? = nil, country: String? = nil, appAccountToken: String? = nil,
            billingCustomerId: String? = nil, appStoreOriginalTransactionIds: [String]? = nil
        ) {
            self.name = name
            self.email = email
            self.country = country
            self.appAccountToken = appAccountToken
            self.billingCustomerId = billingCustomerId
            self.appStoreOriginalTransactionIds = appStoreOriginalTransactionIds
        }
    }

    /// A new customer in the key's mode (409 `customer_exists` when the id is taken); audited.
    public func createCustomer(
        id: String, _ fields: CustomerFieldsInput, idempotencyKey key: String = newIdempotencyKey()
    ) async throws(SaveDeskClientError) -> Wire.CustomerDetail {
        try await send(retry: true, {
            try await api.createCustomer(headers: .init(idempotencyKey: key), body: .json(.init(
                id: id, name: fields.name, email: fields.email, country: fields.country, appAccountToken: fields.appAccountToken,
                billingCustomerId: fields.billingCustomerId, appStoreOriginalTransactionIds: fields.appStoreOriginalTransactionIds
            )))
        }) { try $0.ok.body.json }
    }

    /// Changes the given fields of a customer (the others stay); audited.
    public func updateCustomer(
        id: String, _ fields: CustomerFieldsInput, idempotencyKey key: String = newIdempotencyKey()
    ) async throws(SaveDeskClientError) -> Wire.CustomerDetail {
        try await send(retry: true, {
            try await api.updateCustomer(path: .init(customerId: id), headers: .init(idempotencyKey: key), body: .json(.init(
                name: fields.name, email: fields.email, country: fields.country, appAccountToken: fields.appAccountToken,
                billingCustomerId: fields.billingCustomerId, appStoreOriginalTransactionIds: fields.appStoreOriginalTransactionIds
            )))
        }) { try $0.ok.body.json }
    }

    /// The customer's audit trail, newest first.
    public func timeline(customerId: String, limit: Int = 100) async throws(SaveDeskClientError) -> [Wire.AuditEvent] {
        try await send(retry: true, {
            try await api.getCustomerTimeline(path: .init(customerId: customerId), query: .init(limit: limit))
        }) { try $0.ok.body.json.events }
    }

    public func cancelFlowAnalytics(from: Date? = nil, to: Date? = nil, operator: String? = nil) async throws(SaveDeskClientError) -> Wire.CancelFlowAnalytics {
        try await send(retry: true, {
            try await api.getCancelFlowAnalytics(query: .init(from: from, to: to, _operator: `operator`))
        }) { try $0.ok.body.json }
    }

    public func switchAndSaveAnalytics(from: Date? = nil, to: Date? = nil) async throws(SaveDeskClientError) -> Wire.SwitchAndSaveAnalytics {
        try await send(retry: true, { try await api.getSwitchAndSaveAnalytics(query: .init(from: from, to: to)) }) { try $0.ok.body.json }
    }

    /// Apple's cancel page: per message and for the holdout, how many were shown and saved.
    public func retentionMessageAnalytics(from: Date? = nil, to: Date? = nil) async throws(SaveDeskClientError) -> Wire.RetentionMessageAnalytics {
        try await send(retry: true, { try await api.getRetentionMessageAnalytics(query: .init(from: from, to: to)) }) { try $0.ok.body.json }
    }

    /// Test mode: the customer opens Apple's cancel page; what Apple shows them (the server signs
    /// the App Store's request with the local StoreKit CA and answers it). Each call is a new
    /// request of Apple's, so it is not retried.
    public func simulateCancelPage(originalTransactionId: String, locale: String? = nil) async throws(SaveDeskClientError) -> Wire.CancelPageShown? {
        try await send(retry: false, {
            try await api.simulateCancelPage(body: .json(.init(originalTransactionId: originalTransactionId, locale: locale)))
        }) { try $0.ok.body.json.shown }
    }

    /// Test mode: moves the server's clock forward and runs every billing transition that falls due.
    public func advanceClock(days: Int = 0, hours: Int = 0, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) -> Wire.ClockAdvance {
        return try await send(retry: true, {
            try await api.advanceClock(headers: .init(idempotencyKey: key), body: .json(.init(days: days, hours: hours)))
        }) { try $0.ok.body.json }
    }

    /// Wins back a lapsed subscriber (web: a discounted restart; App Store: an offer code).
    public func winBack(customerId: String, productId: String, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) -> Wire.WinBack {
        return try await send(retry: true, {
            try await api.winBackCustomer(path: .init(customerId: customerId), headers: .init(idempotencyKey: key), body: .json(.init(productId: productId)))
        }) { try $0.ok.body.json }
    }

    /// Records that the steps to cancel an App Store subscription in Settings were read out; it
    /// stays waiting for Apple until the App Store reports renewal off. A repeat answers with the
    /// same record (confirmed once Apple has).
    public func recordAppStoreCancellation(customerId: String, productId: String, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) -> Wire.AppStoreCancellation {
        return try await send(retry: true, {
            try await api.recordAppStoreCancellation(
                path: .init(customerId: customerId), headers: .init(idempotencyKey: key), body: .json(.init(productId: productId)))
        }) { try $0.ok.body.json }
    }

    /// One App Store offer code from the cancel flow's pool for an App Store subscriber who stays.
    public func issueRetentionOfferCode(customerId: String, productId: String, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) -> Wire.RetentionOfferCode {
        return try await send(retry: true, {
            try await api.issueRetentionOfferCode(
                path: .init(customerId: customerId), headers: .init(idempotencyKey: key), body: .json(.init(productId: productId)))
        }) { try $0.ok.body.json }
    }

    /// Clears a recorded switch-and-save dismissal; true when there was one.
    @discardableResult
    public func resetOfferDismissal(customerId: String, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) -> Bool {
        return try await send(retry: true, {
            try await api.resetOfferDismissal(path: .init(customerId: customerId), headers: .init(idempotencyKey: key))
        }) { try $0.ok.body.json.status == "reset" }
    }

    /// Test mode: completes a pending checkout as the payment webhook would.
    public func simulateCheckout(transactionId: String, outcome: Wire.CheckoutOutcome, idempotencyKey key: String = newIdempotencyKey()) async throws(SaveDeskClientError) -> Wire.CheckoutTransaction {
        return try await send(retry: true, {
            try await api.simulateCheckout(headers: .init(idempotencyKey: key), body: .json(.init(transactionId: transactionId, outcome: outcome)))
        }) { try $0.ok.body.json }
    }

    /// Test mode: a signed App Store Server Notification through the webhook path; returns its status.
    @discardableResult
    public func simulateAppStoreEvent(
        originalTransactionId: String, event: Wire.AppStoreEvent, graceDays: Int? = nil, idempotencyKey key: String = newIdempotencyKey()
    ) async throws(SaveDeskClientError) -> String {
        return try await send(retry: true, {
            try await api.simulateAppStoreEvent(headers: .init(idempotencyKey: key), body: .json(.init(
                originalTransactionId: originalTransactionId, event: event, graceDays: graceDays)))
        }) { try $0.ok.body.json.status }
    }

    /// Test mode: what the demo device's StoreKit hands over after a purchase or renewal.
    public func simulateStoreKitPurchase(
        productId: String, originalTransactionId: String? = nil, idempotencyKey key: String = newIdempotencyKey()
    ) async throws(SaveDeskClientError) -> Wire.SimulatedStoreKitTransaction {
        return try await send(retry: true, {
            try await api.simulateStoreKitPurchase(headers: .init(idempotencyKey: key), body: .json(.init(
                productId: productId, originalTransactionId: originalTransactionId)))
        }) { try $0.ok.body.json }
    }
}

extension SaveDeskClient {
    /// Who the key acts as, test or live, and the server's clock. Also the connection check.
    public func session() async throws(SaveDeskClientError) -> DeskSession {
        try await send(retry: true, { try await api.getDeskSession() }) { output in
            let body = try output.ok.body.json
            return DeskSession(operatorName: body._operator, isTestMode: body.mode == .test, serverTime: body.serverTime)
        }
    }
}

/// The operator's session as the server sees it.
public struct DeskSession: Sendable, Equatable {
    public var operatorName: String
    public var isTestMode: Bool
    public var serverTime: Date
}
