import Foundation
import Logging
import RetentionDomain
import SaveDeskAPI
import Synchronization

/// Apple's cancel page (the Retention Messaging API's Get Retention Message): a request signed by
/// the App Store, verified as its notifications are, for this app (`appAppleId`) and recent; the
/// decision (`RetentionMessaging.decide`) on one read of what the server holds, within an internal
/// deadline well inside Apple's 700 ms (past it: the default message); recorded once per
/// `requestIdentifier` (a repeat gets the answer given), and on the customer's timeline.
final class RetentionMessagingService: Sendable {
    typealias Schemas = Components.Schemas

    let store: Store
    let clock: DataClock
    let config: ServerConfig
    let appStore: AppStoreService
    let settings: ServerConfig.RetentionMessagingSettings?
    let signer: PromotionalOfferSigner?
    let metrics: ServerMetrics?
    let logger: Logger
    /// Writes the requests answered, in the background, many per transaction.
    let recorder: RetentionRecorder

    init(store: Store, clock: DataClock, config: ServerConfig, appStore: AppStoreService, signer: PromotionalOfferSigner?,
         metrics: ServerMetrics?, logger: Logger) {
        self.store = store
        self.clock = clock
        self.config = config
        self.appStore = appStore
        self.settings = config.appStore?.retentionMessaging
        self.signer = signer
        self.metrics = metrics
        self.logger = logger
        let settings = config.appStore?.retentionMessaging
        self.recorder = RetentionRecorder(logger: logger) { batch in
            try await Self.record(batch, store: store, settings: settings, config: config)
        }
    }

    /// An answered request: the body sent (nil: no real-time answer) and the record kept.
    struct Outcome: Sendable {
        var body: Schemas.RealtimeResponseBody?
        var record: RetentionRequestRecord
        /// Whether this was a repeat of a request answered before.
        var repeated = false
    }

    func requireSettings() throws(SaveDeskError) -> ServerConfig.RetentionMessagingSettings {
        guard let settings else {
            throw .unprocessable("Apple's cancel page is not configured; add [app_store.retention_messaging]", code: "retention_messaging_not_configured")
        }
        return settings
    }

    /// Answers one request from the App Store. Refusals (not signed by the App Store, another
    /// app, the other environment, too old) are 4xx with no message; past verification nothing
    /// fails the request: a slow or failing read answers the default message.
    func answer(_ request: Schemas.RetentionMessageRequest, scope: RequestScope) async throws -> Outcome {
        let started = ContinuousClock.now
        let verified: AppStoreRetentionRequest
        let settings: ServerConfig.RetentionMessagingSettings
        do {
            settings = try requireSettings()
            verified = try await verify(request.signedPayload, settings: settings, now: clock.server.now())
        } catch {
            metrics?.retentionRequest(outcome: APIMiddleware.describe(error).code, seconds: nil)
            throw error
        }
        let livemode = AppStoreService.isLive(environment: verified.environment ?? "")
        RequestTrace.note { $0.livemode = livemode }
        let budget = Duration.milliseconds(settings.deadlineMilliseconds)
        let decision = Task { try await self.decide(verified, livemode: livemode, settings: settings) }
        var outcome: Outcome
        switch await Deadline.value(of: decision, within: budget) {
        case .some(.success(let decided)): outcome = decided
        case .some(.failure(let error as SaveDeskError)) where error.status < 500:
            // A request the server refuses (its identifier answered for someone else): no message.
            metrics?.retentionRequest(outcome: error.code, seconds: nil)
            throw error
        case .some(.failure(let error)):
            logger.error("retention request answered with the default message", metadata: ["error": "\(error)"])
            outcome = try fallback(verified, livemode: livemode, settings: settings)
        case .none:
            decision.cancel()
            outcome = try fallback(verified, livemode: livemode, settings: settings)
        }
        outcome.record.latencyMicros = Self.micros(ContinuousClock.now - started)
        var full = false
        if !outcome.repeated {
            switch recorder.submit(outcome, requestId: scope.requestId) {
            case .queued: break
            case .full: full = true
            case .answeredBefore(let before): outcome = try repeated(before.record, request: verified)
            }
        }
        if full {
            // The recorder is full: this one is written now, within what is left of the budget
            // (a slow write goes on after the answer).
            let record = outcome.record
            let write = Task { [store, settings, config] in
                try await Self.record([(record, scope.requestId)], store: store, settings: settings, config: config)
            }
            let left = max(.milliseconds(20), budget - (ContinuousClock.now - started))
            if case .some(.failure(let error)) = await Deadline.value(of: write, within: left) {
                logger.error("a retention request was answered but not recorded", metadata: ["error": "\(error)"])
            }
        }
        metrics?.retentionRequest(outcome: outcome.repeated ? "repeat" : outcome.record.choice,
                                  seconds: Double(Self.micros(ContinuousClock.now - started)) / 1_000_000)
        return outcome
    }

    /// The signed request, checked: the App Store's chain and signature, this server's
    /// environment, this app, and signed within `max_age_seconds` of now.
    func verify(_ signedPayload: String, settings: ServerConfig.RetentionMessagingSettings, now: Date) async throws -> AppStoreRetentionRequest {
        var request = try await appStore.requireVerifier().verify(signedPayload, as: AppStoreRetentionRequest.self, now: now)
        request.requestIdentifier = request.requestIdentifier.lowercased()
        guard request.appAppleId == settings.appAppleId else {
            throw SaveDeskError.unprocessable("this request is for app \(request.appAppleId), not this server's app", code: "jws_wrong_app")
        }
        let age = abs(Int64(now.timeIntervalSince1970 * 1000) - request.signedDate) / 1000
        guard age <= Int64(settings.maxAgeSeconds) else {
            throw SaveDeskError.unprocessable(
                "the request was signed \(age) s from now; at most \(settings.maxAgeSeconds) s are accepted", code: "stale_request"
            )
        }
        guard UUID(uuidString: request.requestIdentifier) != nil, request.originalTransactionId.count <= 64, request.productId.count <= 256,
            request.userLocale.count <= 16
        else { throw SaveDeskError.unprocessable("the request's fields are out of range", code: "jws_malformed") }
        return request
    }

    /// The choice, on one read: a repeat's recorded answer, else the rules on the subscriber's
    /// facts, with a promotional offer signed.
    private func decide(
        _ request: AppStoreRetentionRequest, livemode: Bool, settings: ServerConfig.RetentionMessagingSettings
    ) async throws -> Outcome {
        if let pending = recorder.pending(request.requestIdentifier) { return try repeated(pending.record, request: request) }
        let now = clock.now(livemode: livemode).unixSeconds
        let read = try await store.read { data -> (RetentionRequestRecord?, RetentionMessaging.Facts, String?) in
            if let existing = try await data.retentionMessages.find(requestIdentifier: request.requestIdentifier) {
                return (existing, RetentionMessaging.Facts(), existing.customerId)
            }
            let subscription = try await data.ledger.subscription(originalTransactionId: request.originalTransactionId)
                .flatMap { $0.livemode == livemode ? $0 : nil }
            var customerId = subscription?.customerId
            if customerId == nil {
                customerId = try await data.customers.linked(originalTransactionId: request.originalTransactionId, livemode: livemode)
            }
            let earlier = try await customerId.asyncMap { try await data.retentionMessages.earlierCancelFlows(customerId: $0) }
            let facts = RetentionMessaging.Facts(
                productId: config.product(appStoreProductId: request.productId)?.id ?? subscription?.productId,
                tenureDays: subscription.map { Int(max(0, now - $0.startedAt) / Seconds.wholeDay) },
                answeredOptionIds: earlier?.optionIds ?? [], cancelFlows: earlier?.flows ?? 0,
                offersUsed: try await data.retentionMessages.offersUsed(originalTransactionId: request.originalTransactionId)
                    .union(recorder.offersShown(originalTransactionId: request.originalTransactionId))
            )
            return (nil, facts, customerId)
        }
        if let existing = read.0 { return try repeated(existing, request: request) }
        let choice = RetentionMessaging.decide(
            settings.decision, facts: read.1, originalTransactionId: request.originalTransactionId, userLocale: request.userLocale
        )
        return try await outcome(choice, request: request, customerId: read.2, livemode: livemode, receivedAt: now)
    }

    /// The default message (or none), when the decision did not come in time.
    private func fallback(_ request: AppStoreRetentionRequest, livemode: Bool, settings: ServerConfig.RetentionMessagingSettings) throws -> Outcome {
        // A repeat of a request still waiting to be written gets its answer, even now.
        if let pending = recorder.pending(request.requestIdentifier) { return try repeated(pending.record, request: request) }
        let now = clock.now(livemode: livemode).unixSeconds
        var record = Self.record(request, livemode: livemode, customerId: nil, receivedAt: now, choice: "fallback")
        var body: Schemas.RealtimeResponseBody?
        if let id = settings.decision.defaultMessageId, let approved = settings.decision.approved(id, for: request.userLocale) {
            record.messageKey = id
            body = Schemas.RealtimeResponseBody(message: .init(messageIdentifier: approved.identifier))
        }
        record.answer = body.flatMap { try? Self.encode($0) }
        return Outcome(body: body, record: record)
    }

    private func outcome(
        _ choice: RetentionMessaging.Choice, request: AppStoreRetentionRequest, customerId: String?, livemode: Bool, receivedAt: Int64
    ) async throws -> Outcome {
        var record = Self.record(request, livemode: livemode, customerId: customerId, receivedAt: receivedAt, choice: choice)
        var body: Schemas.RealtimeResponseBody?
        if case .answer(_, _, let identifier, _, let offer) = choice {
            switch offer {
            case .none: body = .init(message: .init(messageIdentifier: identifier))
            case .alternateProduct(let productId, let plan):
                body = .init(alternateProduct: .init(messageIdentifier: identifier, productId: productId, billingPlanType: plan))
            case .promotionalOffer(let offerIdentifier):
                guard let signer else {
                    throw SaveDeskError(status: 500, code: "internal", "a promotional offer rule with no In-App Purchase key")
                }
                let signature = try await signer.sign(
                    productId: request.productId, offerIdentifier: offerIdentifier, transactionId: request.originalTransactionId,
                    now: clock.server.now()
                )
                body = .init(promotionalOffer: .init(messageIdentifier: identifier, promotionalOfferSignatureV2: signature))
            }
        }
        record.answer = try body.map(Self.encode)
        return Outcome(body: body, record: record)
    }

    private func repeated(_ existing: RetentionRequestRecord, request: AppStoreRetentionRequest) throws -> Outcome {
        guard existing.originalTransactionId == request.originalTransactionId else {
            throw SaveDeskError.unprocessable("this requestIdentifier was answered for another subscriber", code: "request_identifier_reused")
        }
        let body = try existing.answer.map { try JSONDecoder().decode(Schemas.RealtimeResponseBody.self, from: Data($0.utf8)) }
        return Outcome(body: body, record: existing, repeated: true)
    }

    /// Keeps requests and their answers, one transaction for the lot, each once (one recorded
    /// meanwhile, by a repeat on another instance, is left as it is), with a line on the customer's
    /// timeline.
    static func record(
        _ batch: [(record: RetentionRequestRecord, requestId: String)], store: Store, settings: ServerConfig.RetentionMessagingSettings?,
        config: ServerConfig
    ) async throws {
        try await store.transaction(key: "retention-requests") { data in
            for (record, requestId) in batch {
                if try await data.retentionMessages.find(requestIdentifier: record.requestIdentifier) != nil { continue }
                try await data.retentionMessages.insert(record)
                if let customerId = record.customerId {
                    try await data.audit.append(try Self.auditRecord(record, customerId: customerId, sentence: shown(record, settings: settings, config: config).sentence,
                                                                   requestId: requestId))
                }
            }
        }
    }

    /// What Apple's page showed for a recorded request, as the console says it.
    func shown(_ record: RetentionRequestRecord) -> Schemas.CancelPageShown { Self.shown(record, settings: settings, config: config) }

    static func shown(
        _ record: RetentionRequestRecord, settings: ServerConfig.RetentionMessagingSettings?, config: ServerConfig
    ) -> Schemas.CancelPageShown {
        let message = record.messageKey.flatMap { settings?.decision.message($0) }
        // A fallback that found a default message showed that message.
        let kind = record.choice == "fallback" && message != nil ? "message" : record.choice
        let offer = record.offerIdentifier ?? record.alternateProductId.map { id in config.product(appStoreProductId: id)?.displayName ?? id }
        var sentence = RetentionMessaging.shownSentence(kind: kind, messageText: message?.text, offer: offer)
        if record.choice == "fallback", message != nil { sentence += " (the default: no decision in time)" }
        let identifier = record.messageKey.flatMap { settings?.decision.approved($0, for: record.userLocale)?.identifier }
        return Schemas.CancelPageShown(
            kind: .init(rawValue: record.choice) ?? .none, sentence: sentence, rule: record.rule, messageId: record.messageKey,
            messageText: message?.text, messageIdentifier: identifier, offerIdentifier: record.offerIdentifier,
            alternateProductId: record.alternateProductId
        )
    }

    /// The timeline's line for a recorded request (actor `app_store`).
    static func auditRecord(
        _ record: RetentionRequestRecord, customerId: String, sentence: String, id: String = AuditID.next(), requestId: String
    ) throws -> AuditRecord {
        AuditRecord(
            id: id, at: record.receivedAt, actor: "app_store", customerId: customerId, action: "app_store.retention_message",
            parameters: try ChangeTransaction.json([
                "request_identifier": record.requestIdentifier, "kind": record.choice, "rule": record.rule ?? "",
                "message": record.messageKey ?? "", "offer": record.offerIdentifier ?? record.alternateProductId ?? "",
                "locale": record.userLocale, "sentence": sentence,
            ]),
            beforeState: nil, afterState: nil, requestId: requestId
        )
    }

    /// A record of `request` answered with `choice` (nothing signed, no body yet).
    static func record(
        _ request: AppStoreRetentionRequest, livemode: Bool, customerId: String?, receivedAt: Int64, choice: RetentionMessaging.Choice
    ) -> RetentionRequestRecord {
        var record = record(request, livemode: livemode, customerId: customerId, receivedAt: receivedAt, choice: choice.kind)
        if case .answer(let rule, let message, _, _, let offer) = choice {
            record.rule = rule
            record.messageKey = message.id
            switch offer {
            case .none: break
            case .alternateProduct(let productId, _): record.alternateProductId = productId
            case .promotionalOffer(let offerIdentifier): record.offerIdentifier = offerIdentifier
            }
        }
        return record
    }

    private static func record(
        _ request: AppStoreRetentionRequest, livemode: Bool, customerId: String?, receivedAt: Int64, choice: String
    ) -> RetentionRequestRecord {
        RetentionRequestRecord(
            requestIdentifier: request.requestIdentifier, livemode: livemode, originalTransactionId: request.originalTransactionId,
            customerId: customerId, appStoreProductId: request.productId, userLocale: request.userLocale, signedAt: request.signedDate,
            receivedAt: receivedAt, choice: choice, rule: nil, messageKey: nil, offerIdentifier: nil, alternateProductId: nil,
            latencyMicros: 0, answer: nil
        )
    }

    private static func encode(_ body: Schemas.RealtimeResponseBody) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(body), as: UTF8.self)
    }

    static func micros(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }
}

/// The requests answered and not yet written: the answer does not wait for its record. A single
/// writer takes up to `batchSize` at a time in one transaction; until it is written, a repeat of a
/// request is answered from here. A batch whose write fails stays here (so a repeat still gets its
/// answer) and is tried again, `attempts` times in all with a doubling pause, before it is given up
/// with an error line. At most `capacity` wait: past that, a request is written before it is
/// answered (`submit` says false). A record is analytics, not money: what waits here when the
/// process dies is lost, and the queue is flushed when the server stops (`flush`).
///
/// The writer lets requests gather for `gathering` before each batch. On SQLite every commit
/// empties each reader's page cache, and the decision's read is on a reader: written as fast as
/// they came (a transaction per few requests), the records made each request's read cost more
/// than the write saved (Apple's cancel page at 50 in flight: ~1,000 req/s against ~1,550).
final class RetentionRecorder: Sendable {
    typealias Entry = (record: RetentionRequestRecord, requestId: String)
    static let batchSize = 256
    static let capacity = 8_192
    static let gathering = Duration.milliseconds(25)

    private struct State {
        var waiting: [Entry] = []
        var pending: [String: RetentionMessagingService.Outcome] = [:]
        var writing = false
    }

    private let state = Mutex(State())
    private let logger: Logger
    /// Writes one batch in one transaction.
    private let write: @Sendable ([Entry]) async throws -> Void
    /// How many times a batch is tried, and the pause after the first failure (doubled each time).
    private let attempts: Int
    private let retryPause: Duration
    private let gathering: Duration

    init(logger: Logger, attempts: Int = 6, retryPause: Duration = .milliseconds(200), gathering: Duration = gathering,
         write: @escaping @Sendable ([Entry]) async throws -> Void) {
        self.logger = logger
        self.gathering = gathering
        self.attempts = max(1, attempts)
        self.retryPause = retryPause
        self.write = write
    }

    /// An answered request not written yet.
    func pending(_ requestIdentifier: String) -> RetentionMessagingService.Outcome? {
        state.withLock { $0.pending[requestIdentifier] }
    }

    /// The promotional offers answered to a subscriber and not written yet.
    func offersShown(originalTransactionId: String) -> Set<String> {
        state.withLock { state in
            Set(state.pending.values.compactMap { $0.record.originalTransactionId == originalTransactionId ? $0.record.offerIdentifier : nil })
        }
    }

    enum Submitted {
        case queued
        /// The queue is full: the caller writes it.
        case full
        /// The same request was answered meanwhile (two deliveries raced): that answer stands.
        case answeredBefore(RetentionMessagingService.Outcome)
    }

    /// Queues an answered request to be written.
    func submit(_ outcome: RetentionMessagingService.Outcome, requestId: String) -> Submitted {
        var repeated = outcome
        repeated.repeated = true
        enum Step { case start, queued, full, before(RetentionMessagingService.Outcome) }
        let step = state.withLock { state -> Step in
            if let before = state.pending[outcome.record.requestIdentifier] { return .before(before) }
            guard state.pending.count < Self.capacity else { return .full }
            state.pending[outcome.record.requestIdentifier] = repeated
            state.waiting.append((outcome.record, requestId))
            defer { state.writing = true }
            return state.writing ? .queued : .start
        }
        switch step {
        case .start:
            Task { await drain() }
            return .queued
        case .queued: return .queued
        case .full: return .full
        case .before(let outcome): return .answeredBefore(outcome)
        }
    }

    /// Writes until nothing waits, a batch at a time: a full one at once, else what gathers for
    /// `gathering`.
    func drain() async {
        while true {
            if state.withLock({ $0.waiting.count < Self.batchSize }) { try? await Task.sleep(for: gathering) }
            let batch = state.withLock { state -> [Entry] in
                let batch = Array(state.waiting.prefix(Self.batchSize))
                state.waiting.removeFirst(batch.count)
                if batch.isEmpty { state.writing = false }
                return batch
            }
            if batch.isEmpty { return }
            await writeOrGiveUp(batch)
            state.withLock { state in for entry in batch { state.pending[entry.record.requestIdentifier] = nil } }
        }
    }

    /// Writes one batch, trying again after a failure; its answers stay pending meanwhile.
    private func writeOrGiveUp(_ batch: [Entry]) async {
        var pause = retryPause
        for attempt in 1...attempts {
            do {
                try await write(batch)
                return
            } catch where attempt < attempts {
                logger.warning("retention requests not recorded yet; trying again", metadata: [
                    "count": "\(batch.count)", "attempt": "\(attempt)", "error": "\(error)",
                ])
                try? await Task.sleep(for: pause)
                pause *= 2
            } catch {
                logger.error("retention requests answered but not recorded", metadata: [
                    "count": "\(batch.count)", "attempts": "\(attempts)", "error": "\(error)",
                ])
            }
        }
    }

    /// Waits until everything queued so far is written (the server's stop; tests).
    func flush() async {
        while state.withLock({ $0.writing || !$0.waiting.isEmpty }) {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}

extension RetentionMessagingService {
    /// The demo device's customer opens Apple's cancel page (test mode): the request the App
    /// Store would send, signed with the local StoreKit CA and, unless `deliver` is false,
    /// answered through the same path as Apple's.
    func simulateCancelPage(_ request: Schemas.SimulateCancelPageRequest, scope: RequestScope) async throws -> Schemas.SimulatedCancelPage {
        let settings = try requireSettings()
        guard let ca = appStore.localCA, let appStoreSettings = config.appStore else {
            throw SaveDeskError.unprocessable("the simulated cancel page needs a local StoreKit CA (app_store.local_ca = true)", code: "no_local_ca")
        }
        let otid = request.originalTransactionId
        let subscription = try await store.read { data in try await data.ledger.subscription(originalTransactionId: otid) }
        guard let subscription, subscription.livemode == scope.livemode, subscription.source == .appStore else {
            throw SaveDeskError.notFound("no App Store subscription with original transaction id \(otid)", code: "unknown_transaction")
        }
        let identifier = UUID.random().uuidString.lowercased()
        let signed = try await ca.sign(AppStoreRetentionRequest(
            originalTransactionId: otid, appAppleId: settings.appAppleId,
            productId: config.product(id: subscription.productId)?.storekitProductId ?? subscription.productId,
            userLocale: request.locale ?? settings.decision.fallbackLocale, requestIdentifier: identifier,
            environment: appStoreSettings.environment, signedDate: Int64(clock.server.now().timeIntervalSince1970 * 1000)
        ))
        var page = Schemas.SimulatedCancelPage(requestIdentifier: identifier, signedPayload: signed)
        if request.deliver ?? true {
            let apple = RequestScope(actor: "app_store", principal: "app_store", requestId: scope.requestId, livemode: scope.livemode)
            page.shown = shown(try await answer(.init(signedPayload: signed), scope: apple).record)
            // The demo's next screens (the timeline, the analytics) show it.
            await recorder.flush()
        }
        return page
    }
}
