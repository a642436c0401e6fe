import Foundation
import Observation
import RetentionDomain
import SaveDeskClient

/// One cancel flow with a customer: the RetentionDomain navigator (questions, early triggers,
/// back), the server calls of the choice made (accept the save offer, pause, cancel), the outcome,
/// and the response submitted at the end whatever happens (through the outbox: never lost).
@MainActor @Observable
public final class CancelFlowSession {
    public typealias NavigationError = CancelFlow.Navigator.NavigationError

    public enum Phase: Hashable, Sendable {
        case loading
        /// The config could not be loaded; `load()` again.
        case unavailable(String)
        /// The navigator's page is on screen.
        case inFlow
        /// A server call for the customer's choice is running.
        case applying(String)
        /// The call failed: `retry()` it, or `giveUp()`. The choice is kept.
        case failed(String)
        case finished(Outcome)
    }

    /// What the flow achieved, for the outcome page.
    public struct Outcome: Hashable, Sendable {
        public var outcome: CancelFlow.Outcome
        /// One line for the agent: "40% off for 3 months", "Paused until 22 Dec 2026"…
        public var message: String
        public var pausedUntil: Date?
        public var accessUntil: Date?
        /// Steps the customer must take themselves (App Store billing).
        public var customerSteps: [String]
    }

    public let userId: String
    public let productId: String
    public private(set) var phase: Phase = .loading
    public private(set) var navigator: CancelFlow.Navigator?
    /// The response as submitted (once, at the end).
    public private(set) var submittedResponse: CancelFlow.Response?
    /// What the customer pays now, and with the save offer (a discount offer), for the offer page.
    public private(set) var currentPrice: Price?
    public private(set) var offerPrice: Price?
    /// When the current period ends: access lasts until then after a cancel at period end.
    public private(set) var periodEnd: Date?
    /// "month" or "year": the billing interval of the subscription.
    public private(set) var billingInterval: String?
    /// The last failed call, with its kind (for exit codes and retries).
    public private(set) var lastError: SaveDeskClientError?

    @ObservationIgnored let client: SaveDeskClient
    /// The server call for the choice made, kept for `retry()`.
    @ObservationIgnored private var pendingCall: (@MainActor () async throws(SaveDeskClientError) -> Outcome)?

    init(userId: String, productId: String, client: SaveDeskClient) {
        self.userId = userId
        self.productId = productId
        self.client = client
    }

    public var config: CancelFlow.Config? { navigator?.config }
    public var page: CancelFlow.Navigator.Page? { navigator?.page }
    /// True from the first answer until the flow has ended (quitting then should ask first).
    public var isMidway: Bool {
        switch phase {
        case .inFlow, .applying, .failed: true
        case .loading, .unavailable, .finished: false
        }
    }

    public func load() async {
        phase = .loading
        do {
            let config = try await client.cancelFlowConfig(userId: userId)
            navigator = CancelFlow.Navigator(config: config, productId: productId, userId: userId)
            await loadPrice(config)
            phase = .inFlow
        } catch {
            lastError = error
            phase = .unavailable(error.message)
        }
    }

    // MARK: Questions

    public func select(optionId: Int) throws(NavigationError) { try step { navigator throws(NavigationError) in try navigator.select(optionId: optionId) } }
    public func setFreeText(_ text: String) throws(NavigationError) { try step { navigator throws(NavigationError) in try navigator.setFreeText(text) } }
    public func proceed() throws(NavigationError) { try step { navigator throws(NavigationError) in try navigator.proceed() } }

    @discardableResult
    public func back() -> Bool {
        guard phase == .inFlow, var navigator else { return false }
        let moved = navigator.back()
        self.navigator = navigator
        return moved
    }

    // MARK: Choices

    public func acceptOffer() async throws(NavigationError) {
        try step { navigator throws(NavigationError) in try navigator.acceptOffer() }
        await run("Applying the save offer…") { [client, userId, productId] () throws(SaveDeskClientError) in
            let result = try await client.acceptSaveOffer(productId: productId, userId: userId)
            return Outcome(outcome: .retained, message: result.message, customerSteps: [])
        }
    }

    public func declineOffer() throws(NavigationError) { try step { navigator throws(NavigationError) in try navigator.declineOffer() } }
    public func declinePause() throws(NavigationError) { try step { navigator throws(NavigationError) in try navigator.declinePause() } }

    /// Pauses by one of the config's options.
    public func choosePause(optionId: Int, now: Date = Date()) async throws(NavigationError) {
        try step { navigator throws(NavigationError) in try navigator.acceptPause(optionId: optionId, now: now) }
        await pause(days: navigator?.pauseDurationDays)
    }

    /// Pauses for a number of days.
    public func choosePause(days: Int) async throws(NavigationError) {
        try step { navigator throws(NavigationError) in try navigator.acceptPause(days: days) }
        await pause(days: days)
    }

    /// Where a pause option would resume, for the picker's preview.
    public func resumeDatePreview(optionId: Int, now: Date = Date()) -> Date? {
        config?.pause?.options.first { $0.id == optionId }?.resumesAt(from: now)
    }

    public func confirmCancel(immediately: Bool = false) async throws(NavigationError) {
        try step { navigator throws(NavigationError) in try navigator.confirmCancel(immediately: immediately) }
        await cancel(immediately: immediately)
    }

    /// "Skip and cancel" from any page.
    public func skipAndCancel(immediately: Bool = false) async throws(NavigationError) {
        try step { navigator throws(NavigationError) in try navigator.skipAndCancel(immediately: immediately) }
        await cancel(immediately: immediately)
    }

    /// The agent leaves the flow without a decision: recorded as dismissed.
    public func abandon() async {
        guard var navigator, submittedResponse == nil else { return }
        if case .finished = navigator.page {} else { try? navigator.dismiss() }
        self.navigator = navigator
        await finish(Outcome(outcome: .dismissed, message: "Left without a decision", customerSteps: []))
    }

    /// Runs the failed call again.
    public func retry() async {
        guard case .failed = phase, let pendingCall else { return }
        await run(nil, pendingCall)
    }

    /// Stops retrying: the flow ends as dismissed, and the response still records the choice.
    public func giveUp() async {
        guard case .failed(let message) = phase else { return }
        await finish(Outcome(outcome: .dismissed, message: "Not applied: \(message)", customerSteps: []))
    }

    // MARK: Private

    /// The price on the offer page comes from the customer's subscription (web first); it is
    /// decoration, so a failure leaves it out rather than stopping the flow.
    private func loadPrice(_ config: CancelFlow.Config) async {
        guard let detail = try? await client.customer(id: userId) else { return }
        let subscriptions = detail.subscriptions.filter { $0.productId == productId }
        guard let subscription = subscriptions.first(where: { $0.source == "web" }) ?? subscriptions.first else { return }
        let price = Price(amountMicros: subscription.price.amountMicros, currencyCode: subscription.price.currencyCode)
        currentPrice = price
        periodEnd = subscription.currentPeriodEnd
        billingInterval = try? await client.products().first { $0.id == productId }?.billingInterval.wireValue
        if let offer = config.offer, offer.enabled, offer.type == .discount, let percent = Int(offer.value) {
            offerPrice = Price(amountMicros: Money.discounted(micros: price.amountMicros, percentOff: percent, currencyCode: price.currencyCode),
                               currencyCode: price.currencyCode)
        }
    }

    private func pause(days: Int?) async {
        await run("Pausing…") { [client, userId, productId] () throws(SaveDeskClientError) in
            let resumes = try await client.pauseSubscription(productId: productId, userId: userId, days: days)
            let message = resumes.map { "Paused until \(CalendarDays.display($0, in: .gmt))" } ?? "Paused"
            return Outcome(outcome: .paused, message: message, pausedUntil: resumes, customerSteps: [])
        }
    }

    private func cancel(immediately: Bool) async {
        await run("Cancelling…") { [client, userId, productId] () throws(SaveDeskClientError) in
            let until = try await client.cancelSubscription(productId: productId, userId: userId, immediate: immediately)
            let message = immediately ? "Cancelled; access ended now" : "Cancelled; access until \(CalendarDays.display(until, in: .gmt))"
            return Outcome(outcome: .cancelled, message: message, accessUntil: until, customerSteps: [])
        }
    }

    private func step(_ change: (inout CancelFlow.Navigator) throws(NavigationError) -> Void) throws(NavigationError) {
        guard var navigator else { throw .notOnQuestion }
        if case .finished(let outcome) = phase { throw .alreadyFinished(outcome.outcome) }
        try change(&navigator)
        self.navigator = navigator
    }

    private func run(_ label: String?, _ call: @escaping @MainActor () async throws(SaveDeskClientError) -> Outcome) async {
        pendingCall = call
        phase = .applying(label ?? "Trying again…")
        do {
            let outcome = try await call()
            await finish(outcome)
        } catch where error.code == "managed_by_app_store" {
            // Nothing to retry: the customer acts in Settings. A cancellation ends as cancelled (with
            // the steps to read out); a save or pause that cannot apply ends as dismissed, and the
            // response still records what the customer chose.
            let outcome: CancelFlow.Outcome = navigator?.outcome == .cancelled ? .cancelled : .dismissed
            await finish(Outcome(outcome: outcome, message: error.message, customerSteps: error.steps))
        } catch {
            lastError = error
            phase = .failed(error.message)
        }
    }

    private func finish(_ outcome: Outcome) async {
        pendingCall = nil
        if submittedResponse == nil, let navigator {
            let response = navigator.response(outcome: outcome.outcome)
            client.submitCancelFlowResponse(response)
            submittedResponse = response
        }
        phase = .finished(outcome)
    }
}
