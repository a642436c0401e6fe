import Foundation
import Observation
import RetentionDomain
import SaveDeskClient

/// The phone that is not there (test mode only): the App Store's events, web payments, StoreKit
/// purchases synced through the sync queue, and the server's clock.
@MainActor @Observable
public final class DemoDevice {
    public private(set) var serverTime: Date?
    /// What the last step did, or why it failed, as a sentence.
    public private(set) var lastResult: String?
    public private(set) var isWorking = false
    /// The sync queue's events, newest last ("synced tx_…", "sync failed tx_…: …").
    public private(set) var syncLog: [String] = []
    public private(set) var syncWaiting = 0
    /// What a purchase on the device buys: the first product of the catalog sold on the App Store
    /// (nil until `loadCatalog()` has read the catalog, or when none is).
    public private(set) var purchasableProductId: String?

    public let syncQueue: StoreKitSyncQueue
    @ObservationIgnored let client: SaveDeskClient

    init(client: SaveDeskClient, queueFile: URL) throws {
        self.client = client
        syncQueue = try StoreKitSyncQueue(file: queueFile)
        syncWaiting = syncQueue.pending().count
        if let aside = syncQueue.setAside {
            syncLog.append("the sync queue file could not be read; it was kept as \(aside.lastPathComponent), nothing overwritten")
        }
        syncQueue.addListener { [weak self] event in
            Task { @MainActor in self?.record(event) }
        }
    }

    /// Reads the catalog for what the device can buy.
    public func loadCatalog() async {
        guard purchasableProductId == nil, let products = try? await client.products() else { return }
        purchasableProductId = products.first { $0.storekitProductId != nil && $0.storekitPrice != nil }?.id
    }

    public func advanceClock(days: Int = 0, hours: Int = 0) async {
        await perform { [client] () throws(SaveDeskClientError) in
            let result = try await client.advanceClock(days: days, hours: hours)
            self.serverTime = result.now
            let steps = result.transitions.flatMap { transition in transition.steps.map { "\(transition.customerId): \($0)" } }
            return "Now \(CalendarDays.display(result.now, in: .gmt))" + (steps.isEmpty ? "" : " · " + steps.joined(separator: "; "))
        }
    }

    /// The customer pays (or fails to pay) a pending web checkout.
    public func completeCheckout(transactionId: String, paid: Bool) async {
        await perform { [client] () throws(SaveDeskClientError) in
            let transaction = try await client.simulateCheckout(transactionId: transactionId, outcome: paid ? .paid : .failed)
            return "Checkout \(transaction.id): \(transaction.status)"
        }
    }

    /// An App Store event for a subscription (renewal off, refund, billing failure…).
    public func appStoreEvent(_ event: Wire.AppStoreEvent, originalTransactionId: String, graceDays: Int? = nil) async {
        await perform { [client] () throws(SaveDeskClientError) in
            let status = try await client.simulateAppStoreEvent(originalTransactionId: originalTransactionId, event: event, graceDays: graceDays)
            return "App Store \(event.rawValue): \(status)"
        }
    }

    /// An App Store event for a customer's App Store subscription: the active one, or with
    /// `activeOnly` false any (a lapsed one can still be refunded or renewed). Says so when the
    /// customer has none.
    public func appStoreEvent(_ event: Wire.AppStoreEvent, customerId: String, activeOnly: Bool = true) async {
        await perform { [client] () throws(SaveDeskClientError) in
            guard let otid = try await client.appStoreOriginalTransactionId(userId: customerId, activeOnly: activeOnly) else {
                return "\(customerId) has no App Store subscription"
            }
            let status = try await client.simulateAppStoreEvent(originalTransactionId: otid, event: event)
            return "App Store \(event.rawValue): \(status)"
        }
    }

    /// The customer opens Apple's cancel page (Settings → Subscriptions → Cancel): what Apple
    /// shows them, as the server chose it.
    public func openCancelPage(customerId: String, locale: String? = nil) async {
        await perform { [client] () throws(SaveDeskClientError) in
            guard let otid = try await client.appStoreOriginalTransactionId(userId: customerId, activeOnly: true) else {
                return "\(customerId) has no active App Store subscription"
            }
            guard let shown = try await client.simulateCancelPage(originalTransactionId: otid, locale: locale) else {
                return "Apple's cancel page: no answer"
            }
            return shown.sentence
        }
    }

    /// The customer buys (or renews) on the App Store: StoreKit signs the transaction and the
    /// device syncs it through the queue (kept and retried when the sync fails).
    public func purchaseOnAppStore(userId: String, productId: String, originalTransactionId: String? = nil) async {
        await perform { [client, syncQueue] () throws(SaveDeskClientError) in
            let signed = try await client.simulateStoreKitPurchase(productId: productId, originalTransactionId: originalTransactionId)
            let result = await syncQueue.sync(jws: signed.jwsRepresentation, transactionId: signed.transactionId,
                                              originalTransactionId: signed.originalTransactionId, userId: userId, using: client)
            guard let result else { return "Purchased; the sync failed and waits in the queue" }
            return result.conflict ? "Purchased, but another user owns \(result.originalTransactionId)" : "Purchased and synced (\(result.originalTransactionId))"
        }
    }

    /// Retries the sync queue's due entries.
    public func retrySync() async {
        await syncQueue.retryDue(using: client)
        syncWaiting = syncQueue.pending().count
    }

    /// The demo user logs out: the queue is cleared so nothing is replayed under another user.
    public func logOut() {
        syncQueue.logOut()
        syncWaiting = 0
        syncLog.append("logged out; sync queue cleared")
    }

    private func record(_ event: StoreKitSyncQueue.Event) {
        switch event {
        case .synced(let id, let result):
            syncLog.append(result.conflict ? "synced \(id): owned by another user" : "synced \(id)")
        case .syncFailed(let id, let message, let attempts, let willRetry):
            syncLog.append("sync failed \(id) (attempt \(attempts)\(willRetry ? "" : ", abandoned")): \(message)")
        case .writeFailed(let message):
            syncLog.append(message)
        }
        syncWaiting = syncQueue.pending().count
    }

    private func perform(_ step: () async throws(SaveDeskClientError) -> String) async {
        isWorking = true
        defer { isWorking = false }
        do { lastResult = try await step() } catch { lastResult = error.message }
    }
}
