import Foundation
import SaveDeskAPI
import Testing
import TestSupport

@testable import SaveDeskServer

@Suite("Idempotency, concurrency and durability")
struct DurabilityTests {
    static let ava = Components.Schemas.UserProductRequest(userId: "cus_ava", productId: "premium_monthly")

    func discountCount(_ server: TestServer) async throws -> Int {
        try await server.withStore { store in
            try await store.read { data in try await data.ledger.discounts(subscriptionId: "sub_ava_1").count }
        }
    }

    @Test func fiftyConcurrentRequestsWithOneKeyMakeOneDiscount() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let client = server.app
        let results = try await withThrowingTaskGroup(of: Components.Schemas.SaveOfferResult.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await client.acceptSaveOffer(headers: .init(idempotencyKey: "accept-ava-1"), body: .json(Self.ava)).ok.body.json
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.count == 50)
        #expect(Set(results).count == 1, "50 identical responses")
        #expect(try await discountCount(server) == 1)
        let audits = try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_ava")).ok.body.json.events
            .filter { $0.action == "subscription.accept_offer" }
        #expect(audits.count == 1, "replays are answered from the idempotency record, not re-run")
    }

    @Test func fiftyConcurrentRequestsWithDifferentKeysStillMakeOneDiscount() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let client = server.app
        let results = try await withThrowingTaskGroup(of: Components.Schemas.SaveOfferResult.self) { group in
            for index in 0..<50 {
                group.addTask {
                    try await client.acceptSaveOffer(headers: .init(idempotencyKey: "accept-\(index)"), body: .json(Self.ava)).ok.body.json
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(results.map(\.message)) == ["40% off for 3 months"])
        #expect(try await discountCount(server) == 1)
    }

    @Test func sameKeyDifferentBodyIsRefusedAndNothingIsStoredOnFailure() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let first = try await server.app.pauseSubscription(
            headers: .init(idempotencyKey: "pause-1"), body: .json(.init(userId: "cus_ava", productId: "premium_monthly", pauseDurationDays: 10))
        ).ok.body.json
        let replay = try await server.app.pauseSubscription(
            headers: .init(idempotencyKey: "pause-1"), body: .json(.init(userId: "cus_ava", productId: "premium_monthly", pauseDurationDays: 10))
        ).ok.body.json
        #expect(replay == first, "a replay returns the stored response, not 409 already paused")
        let different = try await server.app.pauseSubscription(
            headers: .init(idempotencyKey: "pause-1"), body: .json(.init(userId: "cus_ava", productId: "premium_monthly", pauseDurationDays: 20))
        )
        expectFailure(different, status: 422, code: "idempotency_key_reused")
        // A failed request stores no record: the same key can be used once the request is valid.
        let failed = try await server.app.resumeSubscription(headers: .init(idempotencyKey: "resume-1"), body: .json(.init(userId: "cus_chloe", productId: "premium_monthly")))
        expectFailure(failed, status: 422, code: "managed_by_app_store")
        let records = try await server.withStore { store in
            try await store.exclusive { db in try await db.raw("SELECT idempotency_key FROM idempotency_records").all().count }
        }
        #expect(records == 1)
        // Keys belong to their holder: the operator's "pause-1" is a different key.
        let operatorTry = try await server.desk.resumeSubscription(headers: .init(idempotencyKey: "pause-1"), body: .json(Self.ava))
        #expect(try operatorTry.ok.body.json.status == "active")
    }

    @Test func aRestartedServerHasEveryAcknowledgedChange() async throws {
        let server = try await TestServer.start()
        _ = try await server.app.pauseSubscription(body: .json(.init(userId: "cus_ava", productId: "premium_monthly", pauseDurationDays: 20))).ok
        _ = try await server.app.acceptSaveOffer(body: .json(.init(userId: "cus_george", productId: "premium_monthly"))).ok
        _ = try await server.app.cancelSubscription(body: .json(.init(userId: "cus_quinn", productId: "premium_monthly", immediate: true))).ok
        if !TestDatabase.isPostgres { #expect(try await server.withStore { try await $0.journalMode() } == "wal") }
        await server.stop()

        let restarted = try await TestServer.start(directory: server.directory, clock: server.clock, seed: false)
        defer { Task { await restarted.stop() } }
        let ava = try await restarted.app.getEntitlements(query: .init(userId: "cus_ava")).ok.body.json.entitlements[0]
        #expect(ava.status.rawValue == "paused" && ava.pauseResumesAt == TestServer.start.addingTimeInterval(20 * 86_400))
        let george = try await restarted.desk.getCustomer(path: .init(customerId: "cus_george")).ok.body.json
        #expect(george.subscriptions.last?.discount?.percentOff == 40)
        let quinn = try await restarted.app.getEntitlements(query: .init(userId: "cus_quinn")).ok.body.json.entitlements[0]
        #expect(quinn.status.rawValue == "cancelled" && !quinn.isActive)
        let timeline = try await restarted.desk.getCustomerTimeline(path: .init(customerId: "cus_ava")).ok.body.json
        #expect(timeline.events.first?.action == "subscription.pause")
    }
}
