import Foundation
import Hummingbird
import Logging
import NIOCore
import OpenAPIHummingbird
import SaveDeskAPI
import ServiceLifecycle

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

        public init(
            testClock: Bool = false, purgeInterval: Duration = .seconds(600), readTimeout: Duration? = nil,
            durability: Store.Durability = .full, dataDirectory: String? = nil
        ) {
            self.testClock = testClock
            self.purgeInterval = purgeInterval
            self.readTimeout = readTimeout
            self.durability = durability
            self.dataDirectory = dataDirectory
        }
    }

    /// A server running in the background (tests, `savedesk demo`).
    public struct Running: Sendable {
        public let port: Int
        public let baseURL: String
        let task: Task<Void, any Error>
        let group: ServiceGroup
        let store: Store

        /// Stops accepting requests, finishes those in flight, and closes the database (the
        /// app's services shut down in reverse order: the server, the purge job, the store).
        public func stop() async {
            await group.triggerGracefulShutdown()
            _ = await task.result
        }
    }

    /// Runs until SIGINT or SIGTERM, then shuts down gracefully (`savedesk serve`).
    public static func run(
        config: ServerConfig, databasePath: String, host: String, port: Int, clock: any ServerClock = SystemClock(),
        options: Options = Options(), logger: Logger
    ) async throws {
        let logger = RedactingLogHandler.wrap(logger)
        let store = try await Store.open(path: databasePath, durability: options.durability, logger: logger)
        let app: any ApplicationProtocol
        do {
            app = try await buildApplication(
                config: config, store: store, clock: clock, options: options, host: host, port: port, logger: logger
            ) { port in
                logger.info("SaveDesk is listening", metadata: ["address": "http://\(host):\(port)"])
            }
        } catch {
            await store.close()
            throw error
        }
        // The store is the app's first service: it closes after the server has stopped.
        try await app.runService()
        logger.info("SaveDesk stopped")
    }

    /// Starts in the background on `host:port` (0 = an ephemeral port) and returns once bound. The
    /// test clock is on unless `options` say otherwise (demos and tests).
    public static func start(
        config: ServerConfig, databasePath: String, host: String = "127.0.0.1", port: Int = 0,
        clock: any ServerClock = SystemClock(), options: Options = Options(testClock: true),
        logger: Logger = Logger(label: "savedesk.server")
    ) async throws -> Running {
        let logger = RedactingLogHandler.wrap(logger)
        let store = try await Store.open(path: databasePath, durability: options.durability, logger: logger)
        let (bound, continuation) = AsyncStream<Int>.makeStream()
        let app: any ApplicationProtocol
        do {
            app = try await buildApplication(
                config: config, store: store, clock: clock, options: options, host: host, port: port, logger: logger
            ) { port in
                continuation.yield(port)
                continuation.finish()
            }
        } catch {
            await store.close()
            throw error
        }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task {
            do {
                try await group.run()
            } catch {
                continuation.finish()
                throw error
            }
        }
        var iterator = bound.makeAsyncIterator()
        guard let boundPort = await iterator.next() else {
            // It could not start (the port is taken, say): the store has closed with the app; say why.
            try await task.value
            throw SaveDeskError(status: 500, code: "not_started", "the server stopped before it was listening")
        }
        return Running(port: boundPort, baseURL: "http://\(host):\(boundPort)", task: task, group: group, store: store)
    }

    /// Builds every service of the server on `store` (repositories, the data clock, the change
    /// transaction, the services the API and the portal call) and the app that runs them: the
    /// store, the purge job, the fold of cancel-flow responses into the rollups, and the HTTP
    /// server, in that order of start (and reverse of stop).
    static func buildApplication(
        config: ServerConfig, store: Store, clock: any ServerClock, options: Options, host: String, port: Int, logger: Logger,
        onRunning: @escaping @Sendable (Int) async -> Void
    ) async throws -> some ApplicationProtocol {
        let problems = config.deploymentIssues(testClock: options.testClock)
        guard problems.isEmpty else { throw InvalidConfig(file: "config", issues: problems) }
        let spec = try APISpec.shipped.get()
        try await OfferCodePool.winBack.sync(store, codes: config.winBack?.offerCodes ?? [])
        try await OfferCodePool.cancelFlow.sync(store, codes: config.cancelFlow.appStoreOffer?.offerCodes ?? [])
        let dataClock = DataClock(server: clock, isAdjustable: options.testClock)
        try await dataClock.reload(from: store)
        let settlement = Settlement(config: config)
        let changes = ChangeTransaction(store: store, clock: dataClock, settlement: settlement)
        let subscriptions = SubscriptionService(store: store, changes: changes, clock: dataClock, config: config)
        let portal = PortalService(store: store, changes: changes, clock: dataClock, config: config, subscriptions: subscriptions)
        let dataDirectory = options.dataDirectory.map { URL(fileURLWithPath: $0) } ?? store.defaultDataDirectory
        let appStore = try AppStoreService(store: store, changes: changes, clock: dataClock, config: config, dataDirectory: dataDirectory)
        let switchAndSave = SwitchAndSaveService(store: store, changes: changes, clock: dataClock, config: config)
        let retention = RetentionService(changes: changes, config: config)
        let checkout = CheckoutService(
            store: store, changes: changes, clock: dataClock, config: config, portal: portal, switchAndSave: switchAndSave
        )
        let handlers = APIHandlers(
            service: subscriptions,
            desk: DeskService(store: store, clock: dataClock, config: config, settlement: settlement, retention: retention),
            portal: portal, switchAndSave: switchAndSave, analytics: AnalyticsService(store: store, config: config),
            testClock: TestClockService(store: store, changes: changes, clock: dataClock, appStore: appStore),
            winBack: WinBackService(changes: changes, config: config), retention: retention, appStore: appStore, checkout: checkout,
            upgrades: UpgradeService(store: store, changes: changes, clock: dataClock, config: config, subscriptions: subscriptions, checkout: checkout),
            catalog: try CatalogService(store: store, clock: dataClock, config: config, switchAndSave: switchAndSave),
            cancelFlowConfig: try WireMapping.convert(config.cancelFlow.config)
        )

        let keys = KeyRing(config.apiKeys)
        let router = Router(context: SaveDeskRequestContext.self)
        router.add(middleware: EnvelopeMiddleware(spec: spec))
        router.add(middleware: RateLimitMiddleware(limiter: RateLimiter(config.rateLimits), keys: keys))
        try handlers.registerHandlers(
            on: router, serverURL: URL(string: "/")!, configuration: .wire,
            middlewares: [APIMiddleware(keys: keys, spec: spec, logger: logger) { key, operation, principal in
                try await changes.storedFingerprint(key: key, operation: operation, principal: principal)
            } prepare: { scope in
                // Another instance may have moved test time: read the offset it committed.
                if store.isShared, options.testClock, !scope.livemode { try await dataClock.reload(from: store) }
            }, ConstantResponses(operations: ["getCancelFlowConfig"])]
        )
        router.get("/checkout/callback") { request, _ -> Response in
            html(try await checkout.page(id: request.uri.queryParameters.get("transaction_id") ?? ""))
        }
        router.get("/checkout/:id") { _, context -> Response in
            html(try await checkout.page(id: context.parameters.get("id") ?? ""))
        }
        router.get("/portal/:token") { _, context -> Response in
            html(try await portal.page(token: context.parameters.get("token") ?? ""))
        }
        router.post("/portal/:token/:action") { request, context -> Response in
            html(try await portal.act(
                token: context.parameters.get("token") ?? "", action: context.parameters.get("action") ?? "",
                productId: request.uri.queryParameters.get("product_id") ?? ""
            ))
        }
        let readTimeout = options.readTimeout ?? .seconds(config.server.readTimeoutSeconds)
        let guardLimits = HTTPGuardHandler.Limits(
            headTimeout: TimeAmount(readTimeout), bodyTimeout: TimeAmount(readTimeout * 3), idleTimeout: .seconds(30)
        )
        return Application(
            router: router,
            server: .http1(configuration: .init(
                additionalChannelHandlers: [HTTPGuardHandler(limits: guardLimits)],
                httpDecoderConfiguration: .init(maxHeaderFieldSize: 16 * 1024, maxHeaderListSize: 32 * 1024, maxHeaderFieldCount: 100)
            )),
            configuration: .init(address: .hostname(host, port: port), serverName: "SaveDesk"),
            services: [
                StoreLifecycle(store: store),
                // Each job runs once per mode, in a scope of that mode: test and live never mix.
                PeriodicJob(name: "purge", interval: options.purgeInterval, logger: logger) { [purge = PurgeJob(store: store, clock: dataClock)] in
                    for livemode in [false, true] { try await purge.purge(.job("purge", livemode: livemode)) }
                },
                PeriodicJob(name: "cancel-flow fold", interval: .seconds(1), logger: logger) {
                    for livemode in [false, true] {
                        // Nothing listed (an idle server): no write transaction at all.
                        guard try await store.read({ data in try await data.cancelFlow.hasUnrolled(livemode: livemode) }) else { continue }
                        _ = try await store.transaction(key: CancelFlowRollups.lockKey) { data in
                            try await data.cancelFlow.foldUnrolled(livemode: livemode)
                        }
                    }
                },
            ],
            onServerRunning: { channel in
                let boundPort = channel.localAddress?.port ?? port
                portal.bound(host: host, port: boundPort)
                await onRunning(boundPort)
            },
            logger: logger
        )
    }

    static func html(_ page: PortalService.Page) -> Response {
        Response(
            status: .init(code: page.status),
            headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: page.html))
        )
    }
}
