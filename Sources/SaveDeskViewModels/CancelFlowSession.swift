import Foundation
import Observation
import RetentionDomain
import SaveDeskClient

/// One cancel flow with a customer: the RetentionDomain navigator (questions, early triggers,
/// back) narrowed by the retention plan (who bills decides the save offer, and whether a pause
/// can apply), the server calls of the choice made, the outcome, and the response submitted at
/// the end whatever happens (through the outbox: never lost).
///
/// For App Store billing the save offer is switch and save (its checkout runs inline, through a
/// `MigrationManager`) or an App Store offer code, and cancelling is read out as the customer's
/// steps in Settings; the flow then follows Apple (`AppleWait`): waiting until the App Store
/// reports renewal off, then confirmed. What the screen shows is `view(now:)`, plain values; the
/// sentences the agent reads out are RetentionDomain's (`CancelFlow.AgentCopy`).
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
        /// The App Store offer code handed out, to read out.
        public var offerCode: String?

        public init(
            outcome: CancelFlow.Outcome, message: String, pausedUntil: Date? = nil, accessUntil: Date? = nil,
            customerSteps: [String] = [], offerCode: String? = nil
        ) {
            self.outcome = outcome
            self.message = message
            self.pausedUntil = pausedUntil
            self.accessUntil = accessUntil
            self.customerSteps = customerSteps
            self.offerCode = offerCode
        }
    }

    /// Apple's side once the flow has ended.
    public typealias AppleSide = AppleWait.Side

    public let userId: String
    public let productId: String
    public private(set) var phase: Phase = .loading
    public private(set) var navigator: CancelFlow.Navigator?
    /// What the retention page may offer this customer, and how they cancel.
    public private(set) var plan: CancelFlow.RetentionPlan?
    /// The inline switch-and-save flow, when switch and save is the save offer.
    public private(set) var switchAndSave: MigrationManager?
    /// Apple's side after the flow: a cancellation read out, or a paid switch, until Apple reports
    /// renewal off.
    public private(set) var apple: AppleWait?
    /// Why the switch's checkout could not be made or confirmed.
    public private(set) var checkoutMessage: String?
    /// The response as submitted (once, at the end).
    public private(set) var submittedResponse: CancelFlow.Response?
    /// What the customer pays now, and with the save offer (a discount offer), for the offer page.
    public private(set) var currentPrice: Price?
    public private(set) var offerPrice: Price?
    /// When the current period ends: access lasts until then after a cancel at period end.
    public private(set) var periodEnd: Date?
    /// "month" or "year": the billing interval of the subscription.
    public private(set) var billingInterval: String?
    /// Product ids → display names, for copy the agent reads out.
    public private(set) var productNames: [String: String] = [:]
    /// The last failed call, with its kind (for exit codes and retries).
    public private(set) var lastError: SaveDeskClientError?

    @ObservationIgnored let calls: any CancelFlowCalls
    @ObservationIgnored let makeMigrationManager: @MainActor (String) -> MigrationManager
    /// The server call for the choice made, kept for `retry()` (with its Idempotency-Key: a retry
    /// whose first try was applied gets the stored answer, not a refusal).
    @ObservationIgnored private var pendingCall: (@MainActor () async throws(SaveDeskClientError) -> Outcome)?
    /// The customer's version the flow was built on: its changes carry it (`If-Match`), so one
    /// someone else overtook is refused, said, and confirmed by the agent's retry.
    @ObservationIgnored private var version: Int64?

    public init(
        userId: String, productId: String, calls: any CancelFlowCalls,
        makeMigrationManager: @escaping @MainActor (String) -> MigrationManager
    ) {
        self.userId = userId
        self.productId = productId
        self.calls = calls
        self.makeMigrationManager = makeMigrationManager
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

    /// The save offer on the retention page (coupon, switch and save, or an offer code).
    public var saveOffer: CancelFlow.RetentionPlan.SaveOffer? { plan?.saveOffer }

    /// True while the switch's checkout waits for the customer to pay.
    public var isAwaitingSwitchPayment: Bool { switchAndSave?.state == .presented && page == .retention(.offer) }

    /// Why what the customer's answer asked for is not on the page ("Apple has no pause…").
    public var unavailableNote: String? {
        guard let step = navigator?.unavailableTrigger else { return nil }
        return plan?.note(for: step)
    }

    /// Apple's side after the flow ended, when there is one to follow.
    public var appleSide: AppleSide? { apple?.side }
    /// The App Store cancellation read out in this flow (waiting for Apple, then confirmed).
    public var appleCancellation: Wire.AppStoreCancellation? { apple?.cancellation }
    /// The last failure of a check on Apple's side or of the switch's checkout, as a sentence.
    public var appleMessage: String? { apple?.message ?? checkoutMessage }

    /// The display name of a product (its id when unknown).
    public func productName(_ id: String) -> String { productNames[id] ?? id }

    /// Loads the config, the customer's subscriptions and (for App Store billing) the switch-and-save
    /// decision, and plans the retention page from them.
    public func load() async {
        phase = .loading
        do {
            let config = try await calls.cancelFlowConfig(userId: userId)
            let detail = try await calls.customer(id: userId)
            version = detail.version
            let catalog = (try? await calls.products()) ?? []
            productNames = Dictionary(catalog.map { ($0.id, $0.displayName) }, uniquingKeysWith: { first, _ in first })
            var input = CancelFlow.RetentionPlan.Input(
                productId: productId, entitlements: detail.domainEntitlements, config: config, switchAndSave: nil, catalog: catalog,
                appStorePrice: detail.subscriptions.first { $0.source == "app_store" && $0.productId == productId }
                    .map { Price(amountMicros: $0.price.amountMicros, currencyCode: $0.price.currencyCode) },
                offerCodes: detail.retention.appStoreOffer.map { .init(title: $0.title, body: $0.body, ctaText: $0.ctaText, hasCode: $0.hasCode) }
            )
            var plan = CancelFlow.RetentionPlan.plan(input)
            if plan.billing == .appStore, config.offer?.enabled == true {
                // Only App Store billing can switch: ask the server's evaluator.
                let manager = switchAndSave ?? makeMigrationManager(userId)
                await manager.refresh(recordImpression: false)
                input.switchAndSave = manager.evaluation
                plan = CancelFlow.RetentionPlan.plan(input)
                switchAndSave = manager
            }
            self.plan = plan
            navigator = CancelFlow.Navigator(config: config, productId: productId, userId: userId, availability: plan.availability)
            priceTheOffer(detail, plan: plan, catalog: catalog)
            phase = .inFlow
            noteShown()
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

    /// The customer takes the save offer: the coupon is applied, the offer code handed out, or the
    /// switch's checkout created (the flow ends once the customer has paid: `confirmSwitchPayment()`).
    public func acceptOffer() async throws(NavigationError) {
        switch plan?.saveOffer {
        case .switchAndSave?:
            try requireOfferPage()
            await startSwitchCheckout()
        case .offerCode?:
            try step { navigator throws(NavigationError) in try navigator.acceptOffer() }
            let key = SaveDeskClient.newIdempotencyKey()
            await run("Handing out the offer code…") { [calls, userId, productId] () throws(SaveDeskClientError) in
                let code = try await calls.issueRetentionOfferCode(customerId: userId, productId: productId, idempotencyKey: key)
                return Outcome(outcome: .retained, message: code.message, offerCode: code.offerCode)
            }
        case .coupon?, nil:
            try step { navigator throws(NavigationError) in try navigator.acceptOffer() }
            let key = SaveDeskClient.newIdempotencyKey()
            await run("Applying the save offer…") { [calls, userId, productId] () throws(SaveDeskClientError) in
                let result = try await calls.acceptSaveOffer(productId: productId, userId: userId, idempotencyKey: key)
                return Outcome(outcome: .retained, message: result.message)
            }
        }
    }

    /// The customer paid the switch's checkout: the server confirms the payment, the flow ends as
    /// retained, and Apple's side follows (the steps to turn off renewal).
    public func confirmSwitchPayment() async {
        guard let manager = switchAndSave, isAwaitingSwitchPayment, case .switchAndSave(let terms)? = plan?.saveOffer else { return }
        phase = .applying("Confirming the payment…")
        await manager.markCheckoutSucceeded()
        guard manager.state == .accepted || manager.state == .completed else {
            checkoutMessage = manager.checkoutError
            phase = .inFlow
            return
        }
        checkoutMessage = nil
        try? step { navigator throws(NavigationError) in try navigator.acceptOffer() }
        apple = AppleWait(switchOf: manager)
        await finish(Outcome(outcome: .retained, message: CancelFlow.AgentCopy.switched(terms), customerSteps: manager.appleCancelSteps))
        if manager.state == .accepted { await checkApple() }
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

    /// Web billing: cancels (at period end, or now). App Store billing: the agent has read out the
    /// steps; the flow records that and waits for Apple (`immediately` does not apply).
    public func confirmCancel(immediately: Bool = false) async throws(NavigationError) {
        let immediately = isAppStoreCancellation ? false : immediately
        try step { navigator throws(NavigationError) in try navigator.confirmCancel(immediately: immediately) }
        await cancel(immediately: immediately)
    }

    /// "Skip and cancel" from any page.
    public func skipAndCancel(immediately: Bool = false) async throws(NavigationError) {
        let immediately = isAppStoreCancellation ? false : immediately
        try step { navigator throws(NavigationError) in try navigator.skipAndCancel(immediately: immediately) }
        await cancel(immediately: immediately)
    }

    /// Whether cancelling is the customer's own step in Settings (App Store billing).
    public var isAppStoreCancellation: Bool {
        if case .appStore? = plan?.cancellation { return true }
        return false
    }

    /// After the flow: asks the server what Apple reports (renewal off confirms a cancellation read
    /// out, and completes a switch). Safe to call again.
    public func checkApple() async { await apple?.check() }

    /// The flow was started and nothing is recorded yet (leaving now records it as dismissed).
    public var isUnrecorded: Bool { navigator != nil && submittedResponse == nil }

    /// The agent leaves the flow without a decision: recorded as dismissed.
    public func abandon() async {
        guard var navigator, submittedResponse == nil else { return }
        if case .finished = navigator.page {} else { try? navigator.dismiss() }
        self.navigator = navigator
        await finish(Outcome(outcome: .dismissed, message: CancelFlow.AgentCopy.leftWithoutDecision))
    }

    /// Runs the failed call again.
    public func retry() async {
        guard case .failed = phase, let pendingCall else { return }
        await run(nil, pendingCall)
    }

    /// Stops retrying: the flow ends as dismissed, and the response still records the choice.
    public func giveUp() async {
        guard case .failed(let message) = phase else { return }
        await finish(Outcome(outcome: .dismissed, message: CancelFlow.AgentCopy.notApplied(message)))
    }

    // MARK: Private

    /// Prices on the offer page: the web subscription's price and the coupon's (for a discount
    /// offer); decoration, so what is unknown is left out.
    private func priceTheOffer(_ detail: Wire.CustomerDetail, plan: CancelFlow.RetentionPlan, catalog: [Product]) {
        let subscriptions = detail.subscriptions.filter { $0.productId == plan.productId }
        guard let subscription = SubscriptionTarget.choose(
            subscriptions, isWeb: { $0.source == "web" }, status: { Entitlement.Status(wireValue: $0.status) }
        ).subscription else { return }
        let price = Price(amountMicros: subscription.price.amountMicros, currencyCode: subscription.price.currencyCode)
        currentPrice = price
        periodEnd = subscription.currentPeriodEnd
        billingInterval = catalog.first { $0.id == plan.productId }?.billingInterval.wireValue
        if case .coupon(let offer)? = plan.saveOffer {
            // How long the coupon lasts does not change the price of a period.
            offerPrice = (try? SaveOfferTerms(offer: offer, couponDuration: .once))?.discountedPrice(of: price)
        }
    }

    private func startSwitchCheckout() async {
        guard let manager = switchAndSave else { return }
        phase = .applying("Creating the checkout…")
        let url = await manager.startCheckout()
        checkoutMessage = url == nil ? manager.checkoutError : nil
        phase = .inFlow
    }

    /// Counts the switch offer as seen when its page is on screen.
    private func noteShown() {
        if page == .retention(.offer), case .switchAndSave? = plan?.saveOffer { switchAndSave?.recordImpression() }
    }

    private func pause(days: Int?) async {
        let key = SaveDeskClient.newIdempotencyKey()
        await run("Pausing…") { [calls, userId, productId] () throws(SaveDeskClientError) in
            let resumes = try await calls.pauseSubscription(productId: productId, userId: userId, days: days, pauseOptionId: nil, idempotencyKey: key)
            return Outcome(outcome: .paused, message: CancelFlow.AgentCopy.paused(until: resumes), pausedUntil: resumes)
        }
    }

    private func cancel(immediately: Bool) async {
        let key = SaveDeskClient.newIdempotencyKey()
        if isAppStoreCancellation {
            await run("Recording the cancellation read out…") { [calls, userId, productId] () throws(SaveDeskClientError) in
                let record = try await calls.recordAppStoreCancellation(customerId: userId, productId: productId, idempotencyKey: key)
                self.apple = AppleWait(cancellation: record) { () throws(SaveDeskClientError) in try await calls.customer(id: userId) }
                return Outcome(
                    outcome: .cancelled,
                    message: CancelFlow.AgentCopy.appStoreCancellationReadOut(
                        at: record.readOutAt, confirmed: record.confirmedAt != nil, accessUntil: record.accessUntil
                    ),
                    accessUntil: record.accessUntil, customerSteps: record.steps
                )
            }
            return
        }
        await run("Cancelling…") { [calls, userId, productId] () throws(SaveDeskClientError) in
            let until = try await calls.cancelSubscription(productId: productId, userId: userId, immediate: immediately, idempotencyKey: key)
            return Outcome(outcome: .cancelled, message: CancelFlow.AgentCopy.cancelled(immediately: immediately, accessUntil: until), accessUntil: until)
        }
    }

    private func requireOfferPage() throws(NavigationError) {
        guard navigator != nil else { throw .notOnQuestion }
        if case .finished(let outcome) = phase { throw .alreadyFinished(outcome.outcome) }
        guard page == .retention(.offer) else { throw .notShowing(.offer) }
    }

    private func step(_ change: (inout CancelFlow.Navigator) throws(NavigationError) -> Void) throws(NavigationError) {
        guard var navigator else { throw .notOnQuestion }
        if case .finished(let outcome) = phase { throw .alreadyFinished(outcome.outcome) }
        try change(&navigator)
        self.navigator = navigator
        noteShown()
    }

    private func run(_ label: String?, _ call: @escaping @MainActor () async throws(SaveDeskClientError) -> Outcome) async {
        pendingCall = call
        phase = .applying(label ?? "Trying again…")
        do {
            let outcome = try await SaveDeskClient.expecting(version: version, call)
            await finish(outcome)
        } catch where error.code == "customer_changed" {
            // Someone else changed the customer during the flow: say what, and let the agent
            // confirm (Retry) on what is there now.
            if let detail = try? await calls.customer(id: userId) { version = detail.version }
            lastError = error
            phase = .failed(error.message)
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
            calls.submitCancelFlowResponse(response)
            submittedResponse = response
        }
        phase = .finished(outcome)
    }
}
