import Foundation
import Hummingbird
import Logging
import NIOCore
import OpenAPIHummingbird
import SaveDeskAPI
import ServiceLifecycle
import UnixSignals

/// The SaveDesk backend: the IAP and Desk APIs (generated from openapi.yaml) and the customer
/// portal, on Hummingbird, over one store (a SQLite file, or PostgreSQL for several instances).
public enum SaveDeskBackend {
    /// How a server runs, beyond its config.
    public struct Options: Sendable {
        /// Let test-mode operator keys move test-mode time (`--test-clock`). Refused next to live keys.
        public var testClock: Bool
        /// How often expired data is purged.
        public var purgeInterval: Duration
        /// Overrides the config's read timeout (tests use short ones).
        public var readTimeout: Duration?
        /// How commits reach the disk (`full` unless a benchmark compares).
        public var durability: Store.Durability
        /// Where the server keeps its files (the local StoreKit CA). By default the SQLite file's
        /// folder; on PostgreSQL, `savedesk-data` in the working directory. Instances on one
        /// database that verify each other's test App Store data share it.
        public var dataDirectory: String?
        /// Overrides the config's drain delay (`--drain-delay`).
        public var drainDelay: Duration?
        /// Overrides the config's metrics listener (`--metrics-listen`).
        public var metrics: ServerConfig.MetricsSettings?
        /// How often the Stripe reconcile job runs, and how long an action must have been open
        /// (seconds) before it reads it back from Stripe.
        public var stripeReconcileInterval: Duration = .seconds(30)
        public var stripeReconcileAge: Int64 = 60
        /// Overrides the Stripe client's first retry wait (tests).
        public var stripeRetryDelay: Duration? = nil

        public init(
            testClock: Bool = false, purgeInterval: Duration = .seconds(600), readTimeout: Duration? = nil,
            durability: Store.Durability = .full, dataDirectory: String? = nil, drainDelay: Duration? = nil,
            metrics: ServerConfig.MetricsSettings? = nil
        ) {
            self.testClock = testClock
            self.purgeInterval = purgeInterval
            self.readTimeout = readTimeout
            self.durability = durability
            self.dataDirectory = dataDirectory
            self.drainDelay = drainDelay
            self.metrics = metrics
        }
    }

    /// A server running in the background (tests, `savedesk demo`).
    public struct Running: Sendable {
        public let port: Int
        public let baseURL: String
        /// The metrics listener's port, when it has one.
        public let metricsPort: Int?
        let task: Task<Void, any Error>
        let group: ServiceGroup
        let store: Store

        /// Drains (readiness says not ready for the drain delay), stops accepting requests,
        /// finishes those in flight, and closes the database (the app's services shut down in
        /// reverse order: the server, the jobs, the store).
        public func stop() async {
            await group.triggerGracefulShutdown()
            _ = await task.result
        }
    }

    /// Runs until SIGINT or SIGTERM, then drains and shuts down gracefully (`savedesk serve`).
    public static func run(
        config: ServerConfig, databasePath: String, host: String, port: Int, clock: any ServerClock = SystemClock(),
        options: Options = Options(), logger: Logger
    ) async throws {
        let logger = RedactingLogHandler.wrap(logger)
        let (group, _) = try await makeGroup(
            config: config, databasePath: databasePath, host: host, port: port, clock: clock, options: options, signals: [.sigterm, .sigint],
            logger: logger
        ) { port in
            logger.info("SaveDesk is listening", metadata: ["address": "http://\(host):\(port)"])
        } onMetrics: { address in
            logger.info("metrics are served", metadata: ["metrics_address": "http://\(address)/metrics"])
        }
        try await group.run()
        logger.info("SaveDesk stopped")
    }

    /// Starts in the background on `host:port` (0 = an ephemeral port) and returns once bound. The
    /// test clock is on unless `options` say otherwise (demos and tests); no drain delay unless
    /// `options` set one.
    public static func start(
        config: ServerConfig, databasePath: String, host: String = "127.0.0.1", port: Int = 0,
        clock: any ServerClock = SystemClock(), options: Options = Options(testClock: true),
        logger: Logger = Logger(label: "savedesk.server")
    ) async throws -> Running {
        let logger = RedactingLogHandler.wrap(logger)
        var options = options
        options.drainDelay = options.drainDelay ?? .zero
        let (bound, continuation) = AsyncStream<Int>.makeStream()
        let (metricsBound, metricsContinuation) = AsyncStream<Int>.makeStream()
        let (group, store) = try await makeGroup(
            config: config, databasePath: databasePath, host: host, port: port, clock: clock, options: options, signals: [], logger: logger
        ) { port in
            continuation.yield(port)
            continuation.finish()
        } onMetrics: { address in
            metricsContinuation.yield(Int(address.split(separator: ":").last ?? "") ?? 0)
            metricsContinuation.finish()
        }
        let task = Task {
            do {
                try await group.run()
            } catch {
                continuation.finish()
                metricsContinuation.finish()
                throw error
            }
        }
        var iterator = bound.makeAsyncIterator()
        guard let boundPort = await iterator.next() else {
            // It could not start (the port is taken, say): the store has closed with the app; say why.
            try await task.value
            throw SaveDeskError(status: 500, code: "not_started", "the server stopped before it was listening")
        }
        var metricsPort: Int?
        if options.metrics ?? config.metrics != nil {
            var metricsIterator = metricsBound.makeAsyncIterator()
            metricsPort = await metricsIterator.next()
        }
        return Running(port: boundPort, baseURL: "http://\(host):\(boundPort)", metricsPort: metricsPort, task: task, group: group, store: store)
    }

    /// The store opened, the app built on it, and the group that runs them: the app, then the
    /// drain gate (shut down first: readiness turns, the drain delay passes, then the app stops).
    /// A graceful shutdown that takes longer than the drain delay and the shutdown timeout is cut
    /// short (the requests still in flight are cancelled).
    static func makeGroup(
        config: ServerConfig, databasePath: String, host: String, port: Int, clock: any ServerClock, options: Options,
        signals: [UnixSignal], logger: Logger, onRunning: @escaping @Sendable (Int) async -> Void,
        onMetrics: @escaping @Sendable (String) async -> Void
    ) async throws -> (ServiceGroup, Store) {
        HeapTuning.apply()
        let metrics = ServerMetrics()
        let store = try await Store.open(path: databasePath, durability: options.durability, logger: logger, metrics: metrics.store)
        let built: Built
        do {
            built = try await buildApplication(
                config: config, store: store, clock: clock, options: options, host: host, port: port, metrics: metrics, logger: logger,
                onRunning: onRunning, onMetrics: onMetrics
            )
        } catch {
            await store.close()
            throw error
        }
        let drainDelay = options.drainDelay ?? .seconds(config.server.drainDelaySeconds)
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: built.app),
                .init(service: DrainGate(readiness: built.readiness, delay: drainDelay, logger: logger) { [events = built.events] in events.close() }),
            ],
            gracefulShutdownSignals: signals, logger: logger
        )
        configuration.maximumGracefulShutdownDuration = drainDelay + .seconds(config.server.shutdownTimeoutSeconds)
        return (ServiceGroup(configuration: configuration), store)
    }

    /// What `buildApplication` makes: the app, and the readiness its drain gate turns.
    struct Built {
        var app: any ApplicationProtocol & Service
        var readiness: Readiness
        var events: EventHub
    }

    /// Builds every service of the server on `store` (repositories, the data clock, the change
    /// transaction, the services the API and the portal call) and the app that runs them: the
    /// store, the purge job, the fold of cancel-flow responses into the rollups, and the HTTP
    /// server, in that order of start (and reverse of stop).
    static func buildApplication(
        config: ServerConfig, store: Store, clock: any ServerClock, options: Options, host: String, port: Int, metrics: ServerMetrics,
        logger: Logger, onRunning: @escaping @Sendable (Int) async -> Void, onMetrics: @escaping @Sendable (String) async -> Void
    ) async throws -> Built {
        let problems = config.deploymentIssues(testClock: options.testClock)
        guard problems.isEmpty else { throw InvalidConfig(file: "config", issues: problems) }
        let spec = try APISpec.shipped.get()
        try await OfferCodePool.winBack.sync(store, codes: config.winBack?.offerCodes ?? [])
        try await OfferCodePool.cancelFlow.sync(store, codes: config.cancelFlow.appStoreOffer?.offerCodes ?? [])
        let dataClock = DataClock(server: clock, isAdjustable: options.testClock)
        try await dataClock.reload(from: store)
        let settlement = Settlement(config: config)
        let admission = CustomerAdmission(config.rateLimits, logger: logger, metrics: metrics)
        let changes = ChangeTransaction(store: store, clock: dataClock, settlement: settlement, admission: admission)
        let stripe = config.billing.stripe.map {
            var settings = $0
            if let delay = options.stripeRetryDelay { settings.retryBaseDelay = delay }
            return StripeBilling(settings: settings, config: config, changes: changes, clock: dataClock, logger: logger)
        }
        let subscriptions = SubscriptionService(store: store, changes: changes, clock: dataClock, config: config, stripe: stripe)
        let portal = PortalService(store: store, changes: changes, clock: dataClock, config: config, subscriptions: subscriptions)
        let dataDirectory = options.dataDirectory.map { URL(fileURLWithPath: $0) } ?? store.defaultDataDirectory
        let appStore = try AppStoreService(
            store: store, changes: changes, clock: dataClock, config: config, dataDirectory: dataDirectory, metrics: metrics
        )
        let switchAndSave = SwitchAndSaveService(store: store, changes: changes, clock: dataClock, config: config)
        var offerSigner: PromotionalOfferSigner?
        if let settings = config.appStore, let retention = settings.retentionMessaging {
            offerSigner = try await PromotionalOfferSigner.load(
                retention, bundleId: settings.bundleId, localCA: settings.localCA, dataDirectory: dataDirectory
            )
        }
        let retentionMessaging = RetentionMessagingService(
            store: store, clock: dataClock, config: config, appStore: appStore, signer: offerSigner, metrics: metrics, logger: logger
        )
        let retention = RetentionService(changes: changes, config: config)
        let checkout = CheckoutService(
            store: store, changes: changes, clock: dataClock, config: config, portal: portal, switchAndSave: switchAndSave,
            stripe: stripe
        )
        let events = EventHub(store: store, clock: clock, settings: config.events.hubSettings, logger: logger, metrics: metrics)
        let jobs = JobBoard()
        let readiness = Readiness(store: store, jobs: jobs, expectedJobs: [Self.purgeJob, Self.foldJob], metrics: metrics)
        let handlers = APIHandlers(
            service: subscriptions,
            desk: DeskService(store: store, clock: dataClock, config: config, settlement: settlement, retention: retention, admission: admission),
            portal: portal, switchAndSave: switchAndSave, analytics: AnalyticsService(store: store, config: config),
            testClock: TestClockService(store: store, changes: changes, clock: dataClock, appStore: appStore),
            winBack: WinBackService(changes: changes, config: config), retention: retention, appStore: appStore, checkout: checkout,
            upgrades: UpgradeService(store: store, changes: changes, clock: dataClock, config: config, subscriptions: subscriptions, checkout: checkout),
            catalog: try CatalogService(store: store, clock: dataClock, config: config, switchAndSave: switchAndSave),
            cancelFlowConfig: try WireMapping.convert(config.cancelFlow.config), readiness: readiness,
            customers: CustomerService(store: store, changes: changes, clock: dataClock), events: events,
            retentionMessaging: retentionMessaging, stripeWebhooks: stripe.map(StripeWebhookService.init(billing:))
        )

        let keys = KeyRing(config.apiKeys)
        let router = Router(context: SaveDeskRequestContext.self)
        router.add(middleware: AccessLogMiddleware(logger: logger, metrics: metrics))
        router.add(middleware: EnvelopeMiddleware(spec: spec))
        router.add(middleware: RateLimitMiddleware(limiter: RateLimiter(config.rateLimits, metrics: metrics), keys: keys))
        router.add(middleware: WholeResponseMiddleware())
        try handlers.registerHandlers(
            on: router, serverURL: URL(string: "/")!, configuration: .wire,
            middlewares: [APIMiddleware(keys: keys, spec: spec, logger: logger, storedFingerprint: { key, operation, principal in
                try await changes.storedFingerprint(key: key, operation: operation, principal: principal)
            }, prepare: { scope in
                // Another instance may have moved test time: read the offset it committed.
                if store.isShared, options.testClock, !scope.livemode { try await dataClock.reload(from: store) }
            }, stripeSignature: stripe.map(Self.signatureCheck)), ConstantResponses(operations: ["getCancelFlowConfig"])]
        )
        // The pages outside the API, each named for the access log and the metrics (never by path:
        // a portal path holds its token).
        router.get("/checkout/callback") { request, _ -> Response in
            RequestTrace.note { $0.operation = "checkout.callback" }
            return html(try await checkout.page(id: request.uri.queryParameters.get("transaction_id") ?? ""))
        }
        router.get("/checkout/:id") { _, context -> Response in
            RequestTrace.note { $0.operation = "checkout.page" }
            return html(try await checkout.page(id: context.parameters.get("id") ?? ""))
        }
        router.get("/portal/:token") { _, context -> Response in
            RequestTrace.note { $0.operation = "portal.page" }
            return html(try await portal.page(token: context.parameters.get("token") ?? ""))
        }
        router.post("/portal/:token/:action") { request, context -> Response in
            RequestTrace.note { $0.operation = "portal.action" }
            return html(try await portal.act(
                token: context.parameters.get("token") ?? "", action: context.parameters.get("action") ?? "",
                productId: request.uri.queryParameters.get("product_id") ?? ""
            ))
        }
        let readTimeout = options.readTimeout ?? .seconds(config.server.readTimeoutSeconds)
        let guardLimits = HTTPGuardHandler.Limits(
            headTimeout: TimeAmount(readTimeout), bodyTimeout: TimeAmount(readTimeout * 3), idleTimeout: .seconds(30)
        )
        var services: [any Service] = [
            StoreLifecycle(store: store) { [recorder = retentionMessaging.recorder] in await recorder.flush() },
            events,
            // Each job runs once per mode, in a scope of that mode: test and live never mix.
            PeriodicJob(name: Self.purgeJob, interval: options.purgeInterval, logger: logger, board: jobs, metrics: metrics) {
                [purge = PurgeJob(store: store, clock: dataClock)] in
                for livemode in [false, true] {
                    let removed = try await purge.purge(.job(Self.purgeJob, livemode: livemode))
                    metrics.purged(removed.idempotencyRecords, what: "idempotency_records")
                    metrics.purged(removed.portalSessions, what: "portal_sessions")
                    metrics.purged(removed.abandonedCheckouts, what: "abandoned_checkouts")
                    metrics.purged(removed.stripeRecords, what: "stripe_records")
                }
                // The event log holds both modes in one numbering: its retention is one rule, in real time.
                metrics.purged(try await purge.purgeEvents(olderThan: Int64(config.events.retentionHours) * 3_600), what: "desk_events")
            },
            // Four times a second, what was listed since the last, in transactions of at most
            // `foldChunk` responses: a fold holds the writer while it runs, and a second's worth
            // under load (1,000 responses) in one transaction held every change behind it long
            // enough to be the writes' p99 (40 ms, 22 without the job); a quarter second's, 20 ms.
            PeriodicJob(name: Self.foldJob, interval: .milliseconds(250), logger: logger, board: jobs, metrics: metrics) {
                for livemode in [false, true] {
                    // Nothing listed (an idle server): no write transaction at all.
                    let backlog = try await store.read { data in try await data.cancelFlow.unrolledBacklog(livemode: livemode) }
                    let now = dataClock.now(.job(Self.foldJob, livemode: livemode)).unixSeconds
                    metrics.foldBacklog(livemode: livemode, oldestAge: backlog.map { now - $0.oldest } ?? 0, waiting: backlog?.count ?? 0)
                    guard backlog != nil else { continue }
                    while try await store.queuedTransaction(key: CancelFlowRollups.lockKey, { data in
                        try await data.cancelFlow.foldUnrolled(livemode: livemode, first: CancelFlowRollups.foldChunk)
                    }) == CancelFlowRollups.foldChunk {}
                }
            },
        ]
        if let stripe {
            // Actions a failure left open (sent to Stripe, not recorded here), read back from Stripe.
            services.append(PeriodicJob(name: Self.stripeReconcileJob, interval: options.stripeReconcileInterval, logger: logger, board: jobs, metrics: metrics) {
                try await stripe.reconcile(olderThan: options.stripeReconcileAge)
            })
        }
        if let settings = options.metrics ?? config.metrics {
            services.append(MetricsListener.application(settings: settings, metrics: metrics, logger: logger) { port in
                await onMetrics("\(settings.host.contains(":") ? "[\(settings.host)]" : settings.host):\(port)")
            })
        }
        let app = Application(
            router: router,
            server: .http1(configuration: .init(
                additionalChannelHandlers: [HTTPGuardHandler(limits: guardLimits)],
                httpDecoderConfiguration: .init(maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100)
            )),
            configuration: .init(address: .hostname(host, port: port), serverName: "SaveDesk"),
            services: services,
            onServerRunning: { channel in
                let boundPort = channel.localAddress?.port ?? port
                portal.bound(host: host, port: boundPort)
                await onRunning(boundPort)
            },
            logger: logger
        )
        return Built(app: app, readiness: readiness, events: events)
    }

    /// The periodic jobs' names (logs, metrics, readiness).
    /// The API middleware's check of a Stripe webhook's signature.
    private static func signatureCheck(_ stripe: StripeBilling) -> @Sendable (String?, Data) throws(SaveDeskError) -> Bool {
        { header, body throws(SaveDeskError) in try stripe.verifySignature(header: header, body: body) }
    }

    static let purgeJob = "purge", foldJob = "cancel-flow fold", stripeReconcileJob = "stripe reconcile"

    static func html(_ page: PortalService.Page) -> Response {
        Response(
            status: .init(code: page.status),
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: page.html))
        )
    }
}
