import Foundation
import RetentionDomain
import SaveDeskClient
import Synchronization
import Testing

@Suite("StoreKit sync queue")
struct StoreKitSyncQueueTests {
    static let operatorKey = "sk_test_savedesk_demo_marco_0001"

    func queueFile() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-sync-\(UUID())/storekit-sync-queue.json")
    }

    @Test func aFailedSyncWaitsIsDeduplicatedAndIsAbandonedAfterFiveAttempts() async throws {
        let server = try await LocalServer.start()
        // The purchase is made with the default timeout (a loaded machine may take a while); only
        // the calls to the stopped server give up quickly.
        let signed = try await SaveDeskClient(serverURL: server.url, key: Self.operatorKey).simulateStoreKitPurchase(productId: "premium_monthly")
        await server.running.stopAndHoldPort()
        let client = SaveDeskClient(serverURL: server.url, key: Self.operatorKey, timeout: .seconds(2))

        let queue = try StoreKitSyncQueue(file: queueFile())
        let events = Mutex<[StoreKitSyncQueue.Event]>([])
        queue.addListener { event in events.withLock { $0.append(event) } }
        let start = Date()
        let first = await queue.sync(jws: signed.jwsRepresentation, transactionId: signed.transactionId,
                                     originalTransactionId: signed.originalTransactionId, userId: "cus_ava", using: client, now: start)
        #expect(first == nil && queue.pending().count == 1)
        // The same transaction again is the same entry, one more attempt.
        await queue.sync(jws: signed.jwsRepresentation, transactionId: signed.transactionId,
                         originalTransactionId: signed.originalTransactionId, userId: "cus_ava", using: client, now: start)
        #expect(queue.pending().count == 1 && queue.pending().first?.attempts == 2)
        // Delays 1 s, 5 s, 30 s, 5 min: nothing is due before them.
        let next = try #require(queue.nextAttempt)
        #expect(next.timeIntervalSince(start) >= 5 && next.timeIntervalSince(start) < 40)
        #expect(await queue.retryDue(using: client, now: start.addingTimeInterval(1)) == 0)
        #expect(queue.pending().first?.attempts == 2, "not due yet, not attempted")
        // Reopened from disk (the app restarted), then three more failures: abandoned and reported.
        let reopened = try StoreKitSyncQueue(file: queue.file)
        reopened.addListener { event in events.withLock { $0.append(event) } }
        #expect(reopened.pending().count == 1)
        for hour in 1...3 { await reopened.retryDue(using: client, now: start.addingTimeInterval(Double(hour) * 3_600)) }
        #expect(reopened.pending().isEmpty)
        let seen = events.withLock { $0 }
        #expect(seen.count == 5)
        #expect(seen.last == .syncFailed(transactionId: signed.transactionId, message: try #require({
            if case .syncFailed(_, let message, _, _) = seen.last { return message }
            return nil
        }()), attempts: 5, willRetry: false))
    }

    @Test func aSyncedTransactionIsReportedAndLogOutClearsTheQueue() async throws {
        let server = try await LocalServer.start()
        defer { Task { await server.running.stop() } }
        let client = SaveDeskClient(serverURL: server.url, key: Self.operatorKey)
        let queue = try StoreKitSyncQueue(file: queueFile())
        let events = Mutex<[StoreKitSyncQueue.Event]>([])
        queue.addListener { event in events.withLock { $0.append(event) } }
        let mine = try await client.simulateStoreKitPurchase(productId: "premium_monthly")
        let result = await queue.sync(jws: mine.jwsRepresentation, transactionId: mine.transactionId,
                                      originalTransactionId: mine.originalTransactionId, userId: "cus_ava", using: client)
        #expect(result?.originalTransactionId == mine.originalTransactionId && result?.conflict == false)
        // Chloé's subscription, synced under Ava: a conflict, reported, not applied.
        let chloes = try await client.simulateStoreKitPurchase(productId: "premium_monthly", originalTransactionId: "2000000810000001")
        let conflict = await queue.sync(jws: chloes.jwsRepresentation, transactionId: chloes.transactionId,
                                        originalTransactionId: chloes.originalTransactionId, userId: "cus_ava", using: client)
        #expect(conflict?.conflict == true)
        #expect(events.withLock { $0.count } == 2 && queue.pending().isEmpty)

        // A failure waits; logging out forgets it, on disk too.
        let refused = await queue.sync(jws: "not-a-jws", transactionId: "tx_bad", originalTransactionId: "x", userId: "cus_ava", using: client)
        #expect(refused == nil && queue.pending().isEmpty, "a refusal (4xx) is not retried")
        let waiting = SaveDeskClient(serverURL: URL(string: "http://127.0.0.1:9")!, key: Self.operatorKey, timeout: .seconds(1))
        await queue.sync(jws: mine.jwsRepresentation, transactionId: "tx_waiting", originalTransactionId: "x", userId: "cus_ava", using: waiting)
        #expect(queue.pending().count == 1)
        queue.logOut()
        #expect(try StoreKitSyncQueue(file: queue.file).pending().isEmpty)
    }
}
