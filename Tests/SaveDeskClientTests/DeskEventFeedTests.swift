import Foundation
import Logging
import RetentionDomain
import SaveDeskClient
@testable import SaveDeskServer
import SQLKit
import Synchronization
import Testing
import TestSupport

/// What a feed delivered, gathered for a test to look at.
final class FeedLog: Sendable {
    private let state = Mutex<(messages: [DeskStreamMessage], states: [DeskEventFeed.State])>(([], []))

    var messages: [DeskStreamMessage] { state.withLock { $0.messages } }
    var events: [Wire.DeskEvent] { messages.compactMap { if case .event(let event) = $0 { event } else { nil } } }
    var presences: [Wire.DeskPresence] { messages.compactMap { if case .presence(let presence) = $0 { presence } else { nil } } }
    var lastState: DeskEventFeed.State? { state.withLock { $0.states.last } }

    func follow(_ feed: DeskEventFeed) {
        feed.start { [self] new in state.withLock { $0.states.append(new) } } message: { [self] message in
            state.withLock { $0.messages.append(message) }
        }
    }

    /// Waits (polling, with a generous bound) until `condition` holds.
    func wait(until condition: (FeedLog) -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition(self), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        #expect(condition(self), "the feed did not deliver in time: \(messages)", sourceLocation: sourceLocation)
    }

    func waitLive(sourceLocation: SourceLocation = #_sourceLocation) async {
        await wait(until: { $0.lastState == .live }, sourceLocation: sourceLocation)
    }
}

@Suite("The desk's event stream")
struct DeskEventFeedTests {
    static let marco = "sk_test_savedesk_demo_marco_0001"
    static let priya = "sk_test_savedesk_demo_priya_0001"

    @Test func aChangeReachesTheStreamAndAResumeMissesNothing() async throws {
        let server = try await LocalServer.start()
        defer { Task { await server.running.stop() } }
        let desk = SaveDeskClient(serverURL: server.url, key: Self.marco)
        let first = FeedLog()
        let feed = DeskEventFeed(serverURL: server.url, key: Self.priya)
        first.follow(feed)
        await first.waitLive()
        _ = try await desk.pauseSubscription(productId: "premium_monthly", userId: "cus_ava", days: 30)
        await first.wait { $0.events.contains { $0.customerId == "cus_ava" && $0._type == "subscription.pause" } }
        let pause = try #require(first.events.last)
        #expect(pause.actor == "Marco (support)" && pause.livemode == false)
        feed.stop()

        // Changes while nobody follows; a resume after the last event received gets each once, in order.
        try await desk.resumeSubscription(productId: "premium_monthly", userId: "cus_ava")
        try await desk.cancelSubscription(productId: "premium_monthly", userId: "cus_ava")
        let resumed = FeedLog()
        let again = DeskEventFeed(serverURL: server.url, key: Self.priya, after: feed.lastEventId)
        resumed.follow(again)
        defer { again.stop() }
        await resumed.wait { log in log.events.contains { $0._type == "subscription.cancel_at_period_end" } }
        let types = resumed.events.filter { $0.customerId == "cus_ava" }.map(\._type)
        #expect(types == ["subscription.resume", "subscription.cancel_at_period_end"])
        #expect(resumed.events.allSatisfy { $0.id > pause.id })
        #expect(resumed.events.map(\.id) == resumed.events.map(\.id).sorted())
    }

    @Test func aCustomerFilterAndTheKeysModeBoundWhatArrives() async throws {
        let server = try await LocalServer.start()
        defer { Task { await server.running.stop() } }
        let desk = SaveDeskClient(serverURL: server.url, key: Self.marco)
        let log = FeedLog()
        let feed = DeskEventFeed(serverURL: server.url, key: Self.priya, customerId: "cus_ava")
        log.follow(feed)
        defer { feed.stop() }
        await log.waitLive()
        _ = try await desk.openCustomerPortal(userId: "cus_hana")
        _ = try await desk.pauseSubscription(productId: "premium_monthly", userId: "cus_ava", days: 30)
        await log.wait { !$0.events.isEmpty }
        #expect(log.events.map(\.customerId) == ["cus_ava"])

        // An app's key is refused, and the feed stops rather than hammering.
        let app = FeedLog()
        let refused = DeskEventFeed(serverURL: server.url, key: LocalServer.appKey)
        app.follow(refused)
        await app.wait { if case .refused(let error) = $0.lastState { error.kind == .server(status: 403, code: "secret_key_required") } else { false } }
    }

    @Test func eventsSurviveARestartAndAPurgedResumeIsToldOfTheGap() async throws {
        let server = try await LocalServer.start()
        let desk = SaveDeskClient(serverURL: server.url, key: Self.marco)
        _ = try await desk.pauseSubscription(productId: "premium_monthly", userId: "cus_ava", days: 30)
        await server.running.stop()

        let restarted = try await LocalServer.start(in: server.directory)
        defer { Task { await restarted.running.stop() } }
        let log = FeedLog()
        let feed = DeskEventFeed(serverURL: restarted.url, key: Self.priya, customerId: "cus_ava", after: 0)
        log.follow(feed)
        await log.wait { $0.events.contains { $0._type == "subscription.pause" } }
        feed.stop()

        // The purge took the oldest events: a resume from before them hears so first.
        let store = try await Store.open(path: TestDatabase.location(in: server.directory), logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        let removed = try await store.transaction { data in try await data.events.purge(olderThan: -3_600) }
        await store.close()
        #expect(removed > 0)
        try await SaveDeskClient(serverURL: restarted.url, key: Self.marco).resumeSubscription(productId: "premium_monthly", userId: "cus_ava")
        let late = FeedLog()
        let resume = DeskEventFeed(serverURL: restarted.url, key: Self.priya, customerId: "cus_ava", after: 1)
        late.follow(resume)
        defer { resume.stop() }
        await late.wait { $0.events.contains { $0._type == "subscription.resume" } }
        guard case .gap(let after, let through) = late.messages.first else {
            Issue.record("no gap first: \(late.messages)")
            return
        }
        #expect(after == 1 && through >= 1)
    }

    @Test func twoAgentsSeeEachOtherAndAStaleChangeIsRefusedNamingWhatChanged() async throws {
        let server = try await LocalServer.start()
        defer { Task { await server.running.stop() } }
        let marco = SaveDeskClient(serverURL: server.url, key: Self.marco)
        let priya = SaveDeskClient(serverURL: server.url, key: Self.priya)

        // Priya follows the customer; Marco opens it.
        let log = FeedLog()
        let feed = DeskEventFeed(serverURL: server.url, key: Self.priya, customerId: "cus_ava")
        log.follow(feed)
        defer { feed.stop() }
        await log.waitLive()
        try await marco.announcePresence(customerId: "cus_ava", session: "console-1", activity: .cancelFlow)
        await log.wait { $0.presences.contains { $0._operator == "Marco (support)" && $0.activity == .cancelFlow } }

        // Priya's view loads; Marco pauses; Priya's change built on the old view is refused.
        let view = try await priya.customer(id: "cus_ava")
        _ = try await marco.pauseSubscription(productId: "premium_monthly", userId: "cus_ava", days: 30)
        let key = SaveDeskClient.newIdempotencyKey()
        do {
            try await SaveDeskClient.expecting(version: view.version) { () throws(SaveDeskClientError) in
                try await priya.cancelSubscription(productId: "premium_monthly", userId: "cus_ava", idempotencyKey: key)
            }
            Issue.record("a change on a stale view went through")
        } catch {
            #expect(error.kind == .server(status: 409, code: "customer_changed"))
            #expect(error.message.contains("Marco (support) paused the subscription"), "\(error.message)")
        }

        // Looked again: the change goes through, and its retry (same key, same old view) is not refused.
        let fresh = try await priya.customer(id: "cus_ava")
        #expect((fresh.version ?? 0) > (view.version ?? 0))
        let again = SaveDeskClient.newIdempotencyKey()
        let first = try await SaveDeskClient.expecting(version: fresh.version) { () throws(SaveDeskClientError) in
            try await priya.resumeSubscription(productId: "premium_monthly", userId: "cus_ava", idempotencyKey: again)
        }
        _ = first
        try await SaveDeskClient.expecting(version: fresh.version) { () throws(SaveDeskClientError) in
            try await priya.resumeSubscription(productId: "premium_monthly", userId: "cus_ava", idempotencyKey: again)
        }
        // Her own change since her view is hers: the next one on that view is not refused either.
        try await SaveDeskClient.expecting(version: fresh.version) { () throws(SaveDeskClientError) in
            try await priya.cancelSubscription(productId: "premium_monthly", userId: "cus_ava")
        }
    }

    @Test(.enabled(if: TestDatabase.isPostgres))
    func anEventRecordedByOneInstanceReachesTheSubscribersOfTheOther() async throws {
        let first = try await LocalServer.start()
        defer { Task { await first.running.stop() } }
        let second = try await LocalServer.start(in: first.directory)
        defer { Task { await second.running.stop() } }
        let logs = [FeedLog(), FeedLog()]
        let feeds = [first, second].map { DeskEventFeed(serverURL: $0.url, key: Self.priya, customerId: "cus_ava") }
        for (log, feed) in zip(logs, feeds) { log.follow(feed) }
        defer { for feed in feeds { feed.stop() } }
        for log in logs { await log.waitLive() }
        _ = try await SaveDeskClient(serverURL: first.url, key: Self.marco).pauseSubscription(productId: "premium_monthly", userId: "cus_ava", days: 30)
        try await SaveDeskClient(serverURL: second.url, key: Self.marco).resumeSubscription(productId: "premium_monthly", userId: "cus_ava")
        for log in logs {
            await log.wait { $0.events.map(\._type) == ["subscription.pause", "subscription.resume"] }
        }
        // Presence announced on one instance is seen on the other.
        try await SaveDeskClient(serverURL: first.url, key: Self.marco).announcePresence(customerId: "cus_ava", session: "one", activity: .viewing)
        await logs[1].wait { $0.presences.contains { $0._operator == "Marco (support)" } }
    }
}
