import Foundation
import Logging
import RetentionDomain
import ServiceLifecycle
import Synchronization

/// The desk's live events on one instance: it reads the event log once per wake-up (a local
/// commit on SQLite; PostgreSQL's notification on every instance, so an event recorded by one
/// reaches the subscribers of all) and hands each new event to the subscribers of its mode (and
/// customer). Presence (who is on a customer) is kept in memory, announced to every instance, and
/// lapses without a heartbeat. Nothing is buffered without bound: a subscriber whose queue fills
/// is disconnected, and resumes from the log with Last-Event-ID.
final class EventHub: Service, Sendable {
    struct Settings: Sendable {
        /// A comment line this often keeps proxies from closing a quiet stream.
        var heartbeat: Duration = .seconds(15)
        /// What one subscriber may have waiting before it is disconnected.
        var queueLimit = 1_024
        /// Streams one instance serves at most.
        var maxSubscribers = 2_000
        /// How long a presence lasts without a heartbeat.
        var presenceTTL = Int64(DeskEvents.presenceTTLSeconds)
        /// After a read that found several events (many writes), how long to let more commits
        /// gather before the next read: each subscriber then gets several events per write to its
        /// socket rather than one. A lone event is never held (it waits only under load).
        var gather: Duration = .milliseconds(10)
    }

    /// What a subscriber's stream carries.
    enum Item: Sendable {
        /// One event (a resume's catch-up).
        case event(DeskEventRecord)
        /// New events as the stream's bytes, encoded once for every subscriber that wants the
        /// same ones, and written in one piece; `through`: the newest of them.
        case batch(through: Int64, bytes: [UInt8])
        case presence(PresenceRecord)
        /// Events after `after` up to `through` were purged before this resume.
        case gap(after: Int64, through: Int64)
        case heartbeat
    }

    /// One agent on one customer.
    struct PresenceRecord: Codable, Hashable, Sendable {
        var livemode: Bool
        var customerId: String
        var operatorName: String
        var session: String
        var activity: String
        /// Unix seconds (the server's clock).
        var expiresAt: Int64

        var key: String { "\(livemode ? "live" : "test")|\(customerId)|\(operatorName)|\(session)" }
    }

    private struct Subscriber {
        var livemode: Bool
        var customerId: String?
        var queue: AsyncStream<Item>.Continuation

        func wants(livemode: Bool, customerId: String) -> Bool {
            self.livemode == livemode && (self.customerId == nil || self.customerId == customerId)
        }
    }

    private struct State {
        /// The last event handed out (nil while nobody listens: the next subscriber reads it).
        var last: Int64?
        var subscribers: [Int: Subscriber] = [:]
        var nextId = 0
        var presence: [String: PresenceRecord] = [:]
        var closed = false
    }

    static let eventsChannel = SQLEventLogRepository.channel
    static let presenceChannel = "savedesk_presence"
    /// Events read from the log per query.
    static let batch = 500

    let store: Store
    let clock: any ServerClock
    let settings: Settings
    let logger: Logger
    let metrics: ServerMetrics?
    private let state = Mutex(State())
    private let wake: (stream: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)

    init(store: Store, clock: any ServerClock, settings: Settings, logger: Logger, metrics: ServerMetrics? = nil) {
        self.store = store
        self.clock = clock
        self.settings = settings
        self.logger = logger
        self.metrics = metrics
        wake = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        store.onCommit { [wake] in wake.continuation.yield() }
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    // MARK: Subscribing

    /// What one subscriber is sent: `first` (the presences of its scope; on a resume, a gap when
    /// the purge took some, then what the log holds after `after`), then `live`: every new event
    /// and presence of its mode (and customer), with heartbeats, from `sentThrough` on.
    struct Subscription: Sendable {
        var first: [Item]
        var live: AsyncStream<Item>
        /// The newest event `first` covers: a live batch up to it was sent already.
        var sentThrough: Int64
        /// A resume further back than one queue's worth: `first` is sent, then the stream ends
        /// and the client resumes from there (nothing held beyond the bound).
        var endsAfterFirst: Bool
        let end: End

        /// Ends it (its queue goes, the hub forgets it).
        func finish() { end.continuation.finish() }

        /// Ends the subscription when the last copy of it goes: an answer never written (the
        /// client left first) does not leave it registered.
        final class End: Sendable {
            let continuation: AsyncStream<Item>.Continuation
            init(_ continuation: AsyncStream<Item>.Continuation) { self.continuation = continuation }
            deinit { continuation.finish() }
        }
    }

    /// A new subscriber, in place when this returns.
    func subscribe(livemode: Bool, customerId: String?, after: Int64?) async throws -> Subscription {
        let (latest, horizon) = try await store.read { data in (try await data.events.latest(), try await data.events.horizon()) }
        let live = AsyncStream<Item>.makeStream(bufferingPolicy: .bufferingOldest(settings.queueLimit))
        let registered: (id: Int, from: Int64, present: [PresenceRecord]) = try state.withLock { state in
            if state.closed {
                throw SaveDeskError(status: 503, code: "not_ready", "this instance is shutting down; connect again", retryAfter: 1)
            }
            guard state.subscribers.count < settings.maxSubscribers else {
                throw SaveDeskError(status: 503, code: "too_many_subscribers", "this instance serves as many event streams as it may; try again", retryAfter: 5)
            }
            if state.last == nil { state.last = latest }
            let id = state.nextId
            state.nextId += 1
            state.subscribers[id] = Subscriber(livemode: livemode, customerId: customerId, queue: live.continuation)
            metrics?.eventSubscribers(state.subscribers.count)
            let present = state.presence.values.filter { $0.livemode == livemode && (customerId == nil || $0.customerId == customerId) }
            return (id, state.last ?? latest, present.sorted { $0.key < $1.key })
        }
        live.continuation.onTermination = { [weak self] _ in self?.remove(registered.id) }

        var first: [Item] = registered.present.map(Item.presence)
        var sent = registered.from
        var endsAfterFirst = false
        if let after, after < registered.from {
            if after < horizon { first.append(.gap(after: after, through: horizon)) }
            var cursor = max(after, horizon)
            do {
                while cursor < registered.from {
                    let events = try await store.read { data in try await data.events.after(cursor, limit: Self.batch) }
                    guard let newest = events.last else { break }
                    for event in events where event.id <= registered.from && event.livemode == livemode {
                        if customerId == nil || event.customerId == customerId { first.append(.event(event)) }
                    }
                    cursor = newest.id
                    if first.count >= settings.queueLimit, cursor < registered.from {
                        // More than one queue's worth: this much now; the client resumes after it.
                        endsAfterFirst = true
                        break
                    }
                }
            } catch {
                live.continuation.finish()
                throw error
            }
        } else if let after {
            sent = max(sent, after)
        }
        return Subscription(first: first, live: live.stream, sentThrough: sent, endsAfterFirst: endsAfterFirst, end: .init(live.continuation))
    }

    private func remove(_ id: Int) {
        state.withLock { state in
            state.subscribers[id] = nil
            metrics?.eventSubscribers(state.subscribers.count)
            if state.subscribers.isEmpty { state.last = nil }
        }
    }

    /// Hands `item` to the subscribers `wants` picks; a subscriber that has too much waiting is
    /// disconnected.
    private func fanOut(_ item: Item, to wants: (Subscriber) -> Bool) {
        let targets = state.withLock { $0.subscribers.values.filter(wants).map(\.queue) }
        for queue in targets {
            if case .dropped = queue.yield(item) {
                metrics?.eventSubscriberCut()
                queue.finish()
            }
        }
    }

    /// Hands new events to every subscriber that wants some of them: each event is encoded once,
    /// and a subscriber of a whole mode gets that mode's bytes, shared with the others.
    private func handOut(_ events: [DeskEventRecord], through newest: Int64) {
        let encoded = events.map { (event: $0, bytes: Array(EventStreamBody.encode(.event($0)).utf8)) }
        var byMode: [Bool: [UInt8]] = [:]
        let targets = state.withLock { $0.subscribers.values.map { ($0.livemode, $0.customerId, $0.queue) } }
        for (livemode, customerId, queue) in targets {
            let bytes: [UInt8]
            if let customerId {
                bytes = encoded.filter { $0.event.livemode == livemode && $0.event.customerId == customerId }.flatMap(\.bytes)
            } else if let shared = byMode[livemode] {
                bytes = shared
            } else {
                bytes = encoded.filter { $0.event.livemode == livemode }.flatMap(\.bytes)
                byMode[livemode] = bytes
            }
            guard !bytes.isEmpty else { continue }
            if case .dropped = queue.yield(.batch(through: newest, bytes: bytes)) {
                metrics?.eventSubscriberCut()
                queue.finish()
            }
        }
    }

    // MARK: Presence

    /// `scope`'s operator on a customer, doing `activity` (or gone), until the presence lapses.
    func announce(scope: RequestScope, customerId: String, session: String, activity: String) async throws -> PresenceRecord {
        let presence = PresenceRecord(
            livemode: scope.livemode, customerId: customerId, operatorName: scope.actor, session: session, activity: activity,
            expiresAt: clock.now().unixSeconds + settings.presenceTTL
        )
        try await announce(presence)
        return presence
    }

    /// Records an agent on a customer (or gone) and tells every instance.
    func announce(_ presence: PresenceRecord) async throws {
        if store.kind == .postgres {
            try await store.notify(Self.presenceChannel, payload: try String(decoding: JSONEncoder().encode(presence), as: UTF8.self))
        } else {
            apply(presence)
        }
    }

    private func apply(_ presence: PresenceRecord) {
        state.withLock { state in
            if presence.activity == DeskEvents.Activity.left.rawValue {
                state.presence[presence.key] = nil
            } else {
                state.presence[presence.key] = presence
            }
        }
        fanOut(.presence(presence)) { $0.wants(livemode: presence.livemode, customerId: presence.customerId) }
    }

    /// Presences past their time: removed, and said as left.
    private func expirePresence() {
        let now = clock.now().unixSeconds
        let lapsed = state.withLock { state -> [PresenceRecord] in
            let lapsed = state.presence.values.filter { $0.expiresAt <= now }
            for presence in lapsed { state.presence[presence.key] = nil }
            return lapsed
        }
        for var presence in lapsed {
            presence.activity = DeskEvents.Activity.left.rawValue
            fanOut(.presence(presence)) { $0.wants(livemode: presence.livemode, customerId: presence.customerId) }
        }
    }

    // MARK: Running

    /// Reads the log when woken, beats the heart, lapses presences and (PostgreSQL) listens,
    /// until the server shuts down; then every stream ends (see `close`).
    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.tail() }
            group.addTask { await self.beat() }
            if store.kind == .postgres { group.addTask { await self.listen() } }
            try? await gracefulShutdown()
            close()
            group.cancelAll()
        }
    }

    /// Ends every stream and takes no more (a draining instance: clients reconnect elsewhere).
    func close() {
        let queues = state.withLock { state in
            state.closed = true
            return state.subscribers.values.map(\.queue)
        }
        for queue in queues { queue.finish() }
        wake.continuation.finish()
    }

    /// Wakes the reader (a commit elsewhere, a reconnect).
    func poke() { wake.continuation.yield() }

    private func tail() async {
        for await _ in wake.stream {
            do {
                if try await readNew() > 1, settings.gather > .zero { try? await Task.sleep(for: settings.gather) }
            } catch {
                logger.warning("the event log could not be read; trying again", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .seconds(1))
                poke()
            }
        }
    }

    /// Hands out what the log recorded after the last event handed out; how many events.
    @discardableResult
    func readNew() async throws -> Int {
        var count = 0
        while true {
            guard let last = state.withLock({ $0.last }) else { return count }
            let events = try await store.read { data in try await data.events.after(last, limit: Self.batch) }
            guard let newest = events.last else { return count }
            count += events.count
            metrics?.eventsRead(events.count)
            handOut(events, through: newest.id)
            state.withLock { state in
                if let current = state.last, current < newest.id { state.last = newest.id }
            }
            if events.count < Self.batch { return count }
        }
    }

    private func beat() async {
        var sinceHeartbeat = Duration.zero
        let step = min(Duration.seconds(1), settings.heartbeat)
        while !Task.isCancelled {
            try? await Task.sleep(for: step)
            sinceHeartbeat += step
            expirePresence()
            if sinceHeartbeat >= settings.heartbeat {
                sinceHeartbeat = .zero
                fanOut(.heartbeat) { _ in true }
                // A notification lost while the listener reconnected is read now, not never.
                if store.kind == .postgres { poke() }
            }
        }
    }

    private func listen() async {
        while !Task.isCancelled {
            do {
                try await store.listen([Self.eventsChannel, Self.presenceChannel]) { [self] in
                    poke()  // what was recorded while not listening
                } received: { [self] channel, payload in
                    if channel == Self.presenceChannel {
                        if let presence = try? JSONDecoder().decode(PresenceRecord.self, from: Data(payload.utf8)) { apply(presence) }
                    } else {
                        poke()
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("listening for events failed; listening again", metadata: ["error": "\(error)"])
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
