import Foundation
import RetentionDomain
import SaveDeskClient
import Synchronization
import Testing

@testable import SaveDeskViewModels

/// An in-memory server for one web subscriber's cancel flow: it answers like SaveDesk does (an
/// Idempotency-Key seen before gets the stored answer; a second pause is `already_paused`) and can
/// lose answers, as a network that drops the reply after the server applied the call.
final class FakeCancelFlowCalls: CancelFlowCalls {
    struct State {
        var paused = false
        /// Answers stored per Idempotency-Key.
        var pauses: [String: Date?] = [:]
        /// How many of the next mutating calls are applied but their answer lost.
        var answersToLose = 0
        var keys: [String] = []
        var responses: [CancelFlow.Response] = []
    }

    let state = Mutex(State())
    static let now = WireFormat.parseDate("2026-11-20T12:00:00Z")!

    var keys: [String] { state.withLock { $0.keys } }
    var responses: [CancelFlow.Response] { state.withLock { $0.responses } }
    func loseAnswers(_ count: Int) { state.withLock { $0.answersToLose = count } }

    func cancelFlowConfig(userId: String?) async throws(SaveDeskClientError) -> CancelFlow.Config {
        CancelFlow.Config(
            enabled: true,
            questions: [
                .init(id: 1, order: 0, questionText: "Why are you cancelling?", questionType: .singleSelect, isRequired: true, options: [
                    .init(id: 3, order: 0, label: "Too expensive", triggersOffer: true),
                    .init(id: 4, order: 1, label: "Taking a break", triggersPause: true),
                ]),
            ],
            offer: .init(enabled: true, title: "Wait", body: "40% off", ctaText: "Stay", type: .discount, value: "40"),
            pause: .init(enabled: true, title: "Pause", body: "Take a break", ctaText: "Pause", options: [
                .init(id: 1, order: 0, label: "1 month", durationType: .days, durationDays: 30),
            ])
        )
    }

    func customer(id: String) async throws(SaveDeskClientError) -> Wire.CustomerDetail {
        let json = """
            {"profile": {"id": "\(id)", "name": "Ada Fake", "email": "ada@example.com", "created_at": "2025-01-01T00:00:00Z", "card_failing": false},
             "subscriptions": [
               {"id": "sub_old", "product_id": "premium_monthly", "source": "web", "status": "expired", "will_renew": false,
                "price": {"amount_micros": 5990000, "currency_code": "USD"}},
               {"id": "sub_1", "product_id": "premium_monthly", "source": "web", "status": "active", "will_renew": true,
                "current_period_end": "2026-12-01T00:00:00Z", "price": {"amount_micros": 9990000, "currency_code": "USD"}}],
             "entitlements": [{"entitlement": {"id": "sub_1", "product_id": "premium_monthly", "product_type": "auto_renewable_subscription", "source": "web_checkout", "status": "active",
                "is_active": true, "purchased_at": "2025-01-01T00:00:00Z", "will_renew": true, "is_trial": false},
               "lifecycle": {"state": "active", "summary": "Active", "has_access": true, "warning": "none", "win_back_eligible": false}}],
             "retention": {"app_store_cancellations": []}}
            """
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(Wire.CustomerDetail.self, from: Data(json.utf8))
        } catch {
            throw SaveDeskClientError(kind: .invalidResponse, message: "fixture: \(error)")
        }
    }

    func products() async throws(SaveDeskClientError) -> [Product] {
        let json = """
            [{"id": "premium_monthly", "display_name": "Premium Monthly", "product_description": "Everything, monthly",
              "type": "auto_renewable_subscription", "web_price": {"amount_micros": 9990000, "currency_code": "USD"},
              "billing_interval": "month", "synced_to_asc": false}]
            """
        do { return try JSONDecoder().decode([Product].self, from: Data(json.utf8)) } catch {
            throw SaveDeskClientError(kind: .invalidResponse, message: "fixture: \(error)")
        }
    }

    func acceptSaveOffer(productId: String, userId: String, idempotencyKey: String) async throws(SaveDeskClientError) -> SaveOfferResult {
        state.withLock { $0.keys.append(idempotencyKey) }
        return SaveOfferResult(message: "40% off your next payment", discountPercent: 40)
    }

    func issueRetentionOfferCode(customerId: String, productId: String, idempotencyKey: String) async throws(SaveDeskClientError) -> Wire.RetentionOfferCode {
        throw SaveDeskClientError(kind: .server(status: 404, code: "no_offer_code"), message: "no offer codes here")
    }

    func pauseSubscription(
        productId: String, userId: String, days: Int?, pauseOptionId: Int?, idempotencyKey: String
    ) async throws(SaveDeskClientError) -> Date? {
        let outcome: Result<Date?, SaveDeskClientError> = state.withLock { state in
            state.keys.append(idempotencyKey)
            if let stored = state.pauses[idempotencyKey] { return .success(stored) }
            guard !state.paused else {
                return .failure(SaveDeskClientError(kind: .server(status: 409, code: "already_paused"), message: "already paused"))
            }
            state.paused = true
            let resumes = Self.now.addingTimeInterval(Double(days ?? 30) * 86_400)
            state.pauses[idempotencyKey] = resumes
            guard state.answersToLose == 0 else {
                state.answersToLose -= 1
                return .failure(SaveDeskClientError(kind: .unreachable, message: "the server did not answer"))
            }
            return .success(resumes)
        }
        return try outcome.get()
    }

    func cancelSubscription(productId: String, userId: String, immediate: Bool, idempotencyKey: String) async throws(SaveDeskClientError) -> Date {
        state.withLock { $0.keys.append(idempotencyKey) }
        return WireFormat.parseDate("2026-12-01T00:00:00Z")!
    }

    func recordAppStoreCancellation(
        customerId: String, productId: String, idempotencyKey: String
    ) async throws(SaveDeskClientError) -> Wire.AppStoreCancellation {
        throw SaveDeskClientError(kind: .server(status: 422, code: "not_app_store"), message: "billed on the web")
    }

    func submitCancelFlowResponse(_ response: CancelFlow.Response) { state.withLock { $0.responses.append(response) } }
}
