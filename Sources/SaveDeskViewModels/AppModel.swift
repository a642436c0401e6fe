import Foundation
import Observation
import RetentionDomain
import SaveDeskClient
import Synchronization

/// The console as a whole: where the agent is (a navigation stack), what to tell them (toasts),
/// whether the server answers, test or live mode, who is signed in, and how many fire-and-forget
/// calls are still waiting in the outbox. It owns the client and hands it to each flow's model.
@MainActor @Observable
public final class AppModel {
    /// A screen of the console.
    public enum Route: Hashable, Sendable {
        case customers
        case customer(id: String)
        case cancelFlow(customerId: String, productId: String)
        case switchAndSave(customerId: String)
        case timeline(customerId: String)
        case analytics
        case demoDevice
    }

    public enum Connection: Hashable, Sendable {
        case connecting
        case connected
        /// The server did not answer; the message says which server.
        case unreachable(String)
    }

    /// A short message for the agent; an error toast may offer a retry.
    public struct Toast: Hashable, Sendable, Identifiable {
        public var id: Int
        public var message: String
        public var isError: Bool
        public var canRetry: Bool
    }

    public let client: SaveDeskClient
    public let dataDirectory: URL
    public private(set) var stack: [Route] = [.customers]
    public private(set) var toasts: [Toast] = []
    public private(set) var connection: Connection = .connecting
    /// From the key's prefix at once, then as the server reports it.
    public private(set) var isTestMode: Bool
    public private(set) var operatorName: String?
    /// The server's clock minus this machine's (the test clock moves the server's).
    public private(set) var serverClockOffset: TimeInterval = 0
    /// Fire-and-forget calls not yet delivered.
    public private(set) var outboxWaiting = 0
    /// Calls set aside in the outbox's `rejected/` folder (refused for good, or unreadable).
    public private(set) var outboxRejected = 0
    /// The two counts as last shown, for the watch off the main actor (`watchOutbox`).
    @ObservationIgnored private nonisolated let shownOutboxCounts = Mutex((waiting: 0, rejected: 0))
    /// The event stream: whether screens move by themselves (see `LiveUpdates.swift`).
    public internal(set) var live: LiveState = .off
    /// Other agents on customers (never this console's own session), by customer id.
    public internal(set) var presence: [String: [LivePresence]] = [:]
    /// This console among the agent's others (presence is per console).
    public let session = "console-" + UUID().uuidString.prefix(8).lowercased()
    /// Where a recorded change goes (the TUI hands it to the screens it concerns).
    @ObservationIgnored public var onChange: (@MainActor (LiveChange) -> Void)?
    /// Events were missed (a resume past the retention window): everything shown may be old.
    @ObservationIgnored public var onResync: (@MainActor () -> Void)?
    @ObservationIgnored var feed: DeskEventFeed?
    @ObservationIgnored var presenceBeat: Task<Void, Never>?
    @ObservationIgnored var announced: (customerId: String, activity: LiveActivity)?
    @ObservationIgnored let key: String
    @ObservationIgnored private var retries: [Int: @MainActor () async -> Void] = [:]
    @ObservationIgnored private var nextToastId = 1
    @ObservationIgnored private var outboxWatch: Task<Void, Never>?
    @ObservationIgnored private var earlyFirstPage: EarlyFirstPage?

    /// `dataDirectory` holds the outboxes (one per server and key), the dismissal cache and the
    /// StoreKit sync queue.
    public init(serverURL: URL, key: String, dataDirectory: URL, timeout: Duration = .seconds(10)) throws {
        self.dataDirectory = dataDirectory
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let root = dataDirectory.appendingPathComponent("outbox")
        let outbox = try Outbox(directory: Outbox.folder(in: root, serverURL: serverURL, key: key))
        outbox.setAsideLegacyItems(in: root)
        client = SaveDeskClient(serverURL: serverURL, key: key, timeout: timeout, outbox: outbox)
        self.key = key
        // sk_test_…, pk_test_…, zs_pk_test_…: split and compare, not `contains("_test_")`, which
        // goes through NSString (or the regex engine's firstRange), pages the console never needs.
        isTestMode = key.split(separator: "_").contains("test")
        let counts = Self.outboxCounts(outbox)
        (outboxWaiting, outboxRejected) = counts
        shownOutboxCounts.withLock { $0 = counts }
        client.onReachabilityChange { [weak self] reachable in
            Task { @MainActor in self?.noteReachable(reachable) }
        }
    }

    public var currentRoute: Route { stack[stack.count - 1] }

    /// The server this console talks to.
    public var serverURL: URL { client.serverURL }

    /// Hands what the outbox holds to the server while it is there, waiting at most until
    /// `deadline` (what is not delivered stays on disk for the next start).
    public func deliverOutbox(before deadline: ContinuousClock.Instant) async {
        guard let outbox = client.outbox else { return }
        let client = client
        let delivery = Task { _ = await outbox.deliver(using: client, ignoringBackoff: true) }
        while outbox.waitingCount > 0, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        delivery.cancel()
        refreshOutbox()
    }

    /// Now on the server's clock (pause previews, date ranges).
    public var serverNow: Date { Date().addingTimeInterval(serverClockOffset) }

    /// Checks the connection and starts delivering whatever the outbox holds (from an earlier run
    /// too). With the server answering, that is now: a backoff an earlier run scheduled while the
    /// server was down does not hold back what can be delivered today.
    public func start() async {
        await checkConnection()
        client.outbox?.kick(using: client, ignoringBackoff: connection == .connected)
        watchOutbox()
    }

    /// Stops background delivery (what waits stays on disk for the next start).
    public func shutdown() {
        outboxWatch?.cancel()
        client.outbox?.stop()
        stopLive()
    }

    public func checkConnection() async {
        do {
            let session = try await client.session()
            operatorName = session.operatorName
            isTestMode = session.isTestMode
            serverClockOffset = session.serverTime.timeIntervalSinceNow
            connection = .connected
        } catch {
            note(error)
            if case .server = error.kind { connection = .connected }
        }
    }

    /// Asks the outbox to deliver now, ignoring its backoff (the agent pressed retry).
    public func retryOutbox() {
        client.outbox?.kick(using: client, ignoringBackoff: true)
    }

    /// Refreshes `outboxWaiting` and `outboxRejected` from disk.
    public func refreshOutbox() { show(outboxCounts: Self.outboxCounts(client.outbox)) }

    /// The outbox's waiting and set-aside calls, counted by their files (nothing is read).
    nonisolated static func outboxCounts(_ outbox: Outbox?) -> (waiting: Int, rejected: Int) {
        (outbox?.waitingCount ?? 0, outbox?.rejectedCount ?? 0)
    }

    private func show(outboxCounts counts: (waiting: Int, rejected: Int)) {
        if counts.waiting != outboxWaiting { outboxWaiting = counts.waiting }
        if counts.rejected != outboxRejected { outboxRejected = counts.rejected }
        shownOutboxCounts.withLock { $0 = counts }
    }

    /// Counts the outbox four times a second off the main actor (the folders are listed on a
    /// thread of the pool), so a key is never kept waiting behind a listing; the main actor hears
    /// of a count only when it changed (an idle console's main thread is not woken for nothing).
    private func watchOutbox() {
        outboxWatch?.cancel()
        let outbox = client.outbox
        outboxWatch = Task.detached { [weak self] in
            while !Task.isCancelled {
                let counts = Self.outboxCounts(outbox)
                guard let model = self else { return }  // the model is gone
                if counts != model.shownOutboxCounts.withLock({ $0 }) { await model.show(outboxCounts: counts) }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
    }

    // MARK: Navigation

    public func push(_ route: Route) {
        if currentRoute != route { stack.append(route) }
    }

    /// Back one screen; the home screen stays.
    @discardableResult
    public func pop() -> Route? {
        guard stack.count > 1 else { return nil }
        return stack.removeLast()
    }

    public func popToRoot() { stack = [.customers] }

    // MARK: Toasts

    /// Shows a message; with `retry`, an error toast the agent can retry from.
    @discardableResult
    public func show(_ message: String, isError: Bool = false, retry: (@MainActor () async -> Void)? = nil) -> Int {
        let id = nextToastId
        nextToastId += 1
        if let retry { retries[id] = retry }
        toasts.append(Toast(id: id, message: message, isError: isError, canRetry: retry != nil))
        if toasts.count > 5 { dismissToast(toasts[0].id) }
        return id
    }

    /// Shows a client error (and notes a lost connection).
    public func report(_ error: SaveDeskClientError, retry: (@MainActor () async -> Void)? = nil) {
        note(error)
        show(error.message, isError: true, retry: retry)
    }

    public func dismissToast(_ id: Int) {
        toasts.removeAll { $0.id == id }
        retries[id] = nil
    }

    /// Runs a toast's retry (and removes the toast).
    public func retryToast(_ id: Int) async {
        guard let retry = retries[id] else { return }
        dismissToast(id)
        await retry()
    }

    private func noteReachable(_ reachable: Bool) {
        if reachable {
            if connection != .connected {
                connection = .connected
                // Back: what waited for the server goes now.
                client.outbox?.kick(using: client, ignoringBackoff: true)
            }
        } else if case .unreachable = connection {
        } else {
            connection = .unreachable("the SaveDesk server at \(client.serverURL.absoluteString) could not be reached")
        }
    }

    /// Connection state follows every answer: no answer → unreachable, any answer → connected.
    public func note(_ error: SaveDeskClientError) {
        if case .unreachable = error.kind { connection = .unreachable(error.message) }
    }

    // MARK: Flow models, sharing this console's client

    public func makeDirectory(debounce: Duration = .milliseconds(200)) -> CustomerDirectory {
        defer { earlyFirstPage = nil }
        return CustomerDirectory(calls: earlyFirstPage ?? client, debounce: debounce)
    }

    /// Asks for the customer list's first page now, before any screen exists (the console's
    /// start): the answer travels while the terminal is set up, and the first directory made
    /// (the home screen's) shows it on its first load instead of asking then.
    public func askForFirstPageEarly() {
        earlyFirstPage = EarlyFirstPage(calls: client, perPage: CustomerDirectory.defaultPerPage)
    }

    public func makeOverview(customerId: String) -> CustomerOverview {
        CustomerOverview(customerId: customerId, calls: client)
    }

    public func makeCancelFlow(customerId: String, productId: String) -> CancelFlowSession {
        CancelFlowSession(userId: customerId, productId: productId, calls: client) { [unowned self] userId in
            self.makeMigrationManager(userId: userId)
        }
    }

    public func makeMigrationManager(userId: String, stripeCustomerId: String? = nil) -> MigrationManager {
        MigrationManager(userId: userId, stripeCustomerId: stripeCustomerId, calls: client,
                         dismissals: DismissalCache(file: dataDirectory.appendingPathComponent("dismissals.json")))
    }

    public func makeFunnelReport() -> FunnelReport { FunnelReport(calls: client) }

    /// The demo device, in test mode only.
    public func makeDemoDevice() -> DemoDevice? {
        guard isTestMode else { return nil }
        return try? DemoDevice(client: client, queueFile: dataDirectory.appendingPathComponent("storekit-sync-queue.json"))
    }
}
