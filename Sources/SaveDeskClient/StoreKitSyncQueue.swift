import Foundation
import RetentionDomain
import Synchronization

/// The StoreKit sync queue (flows.md): a signed transaction whose sync to the server fails is kept
/// on disk and retried after 1 s, 5 s, 30 s, then every 5 min, at most 5 attempts; then it is
/// abandoned and reported. Entries are keyed by transaction id (a re-enqueue counts as an attempt),
/// a transaction is "finished" only once its sync succeeded, and `logOut()` clears the queue so one
/// user's data is never replayed under another.
///
/// Only a definitive refusal of the transaction by the server (400, 404, 409, 410, 413, 422 in its
/// envelope) abandons an entry at once; a 401, 408, 429, 5xx, a page that is not the envelope, or
/// no answer is retried. A queue file that cannot be read is kept aside (never overwritten: it
/// holds signed purchases), and a write that fails is reported, not ignored.
public final class StoreKitSyncQueue: Sendable {
    /// One transaction waiting to be synced.
    public struct Entry: Codable, Sendable, Equatable {
        public var transactionId: String
        public var originalTransactionId: String
        public var userId: String
        public var jws: String
        /// Kept across attempts, so the server applies the sync once.
        public var idempotencyKey: String
        public var attempts: Int
        public var nextAttempt: Date?
        public var lastError: String?
    }

    /// The delegate-style events of the seed's sync.
    public enum Event: Sendable, Equatable {
        /// The server has the transaction; it may now be finished.
        case synced(transactionId: String, result: SyncResult)
        /// An attempt failed; `willRetry` is false when the entry was abandoned.
        case syncFailed(transactionId: String, message: String, attempts: Int, willRetry: Bool)
        /// The queue could not be written to disk: what waits is only in memory until a write works.
        case writeFailed(message: String)
    }

    /// What the server said of a synced transaction.
    public struct SyncResult: Sendable, Equatable {
        public var originalTransactionId: String
        /// Another user owns it: nothing was changed, a claim is possible.
        public var conflict: Bool
    }

    public let file: URL
    let policy: RetryPolicy
    private let entries: Mutex<[Entry]>
    private let listeners = Mutex<[UUID: @Sendable (Event) -> Void]>([:])
    private let draining = Mutex(false)

    /// Where an unreadable queue file was kept aside at start, if one was.
    public let setAside: URL?
    /// The last write that failed, until one succeeds.
    public var writeError: String? { writeFailure.withLock { $0 } }
    private let writeFailure = Mutex<String?>(nil)

    public init(file: URL, policy: RetryPolicy = .storeKitSync) throws {
        self.file = file
        self.policy = policy
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        var saved: [Entry] = []
        var setAside: URL?
        if let data = FileManager.default.contents(atPath: file.path) {
            if let decoded = try? JSONDecoder().decode([Entry].self, from: data) {
                saved = decoded
            } else {
                // Never overwrite what cannot be read: it may hold signed purchases a person can recover.
                let aside = file.appendingPathExtension("unreadable-\(Int(Date().timeIntervalSince1970))")
                try DurableFile.move(file, to: aside)
                setAside = aside
            }
        }
        self.setAside = setAside
        entries = Mutex(saved)
    }

    /// Transactions not yet finished, oldest first.
    public func pending() -> [Entry] { entries.withLock { $0 } }

    /// Calls `handler` with every event; returns a token for `removeListener`.
    @discardableResult
    public func addListener(_ handler: @escaping @Sendable (Event) -> Void) -> UUID {
        let id = UUID()
        listeners.withLock { $0[id] = handler }
        return id
    }

    public func removeListener(_ id: UUID) { _ = listeners.withLock { $0.removeValue(forKey: id) } }

    /// Syncs a transaction now; if that fails it waits in the queue. Returns the server's answer
    /// when the sync succeeded at once.
    @discardableResult
    public func sync(
        jws: String, transactionId: String, originalTransactionId: String, userId: String, using client: SaveDeskClient, now: Date = Date()
    ) async -> SyncResult? {
        let entry = entries.withLock { list -> Entry in
            if let index = list.firstIndex(where: { $0.transactionId == transactionId }) {
                // Already queued: the same transaction again counts as an attempt, nothing is duplicated.
                list[index].jws = jws
                list[index].nextAttempt = nil
                return list[index]
            }
            let entry = Entry(transactionId: transactionId, originalTransactionId: originalTransactionId, userId: userId, jws: jws,
                              idempotencyKey: SaveDeskClient.newIdempotencyKey(), attempts: 0, nextAttempt: nil, lastError: nil)
            list.append(entry)
            return entry
        }
        save()
        return await attempt(entry, using: client, now: now)
    }

    /// Retries every entry that is due. Returns how many synced.
    @discardableResult
    public func retryDue(using client: SaveDeskClient, now: Date = Date()) async -> Int {
        guard draining.withLock({ busy in
            if busy { return false }
            busy = true
            return true
        }) else { return 0 }
        defer { draining.withLock { $0 = false } }
        var synced = 0
        for entry in pending() where (entry.nextAttempt ?? .distantPast) <= now {
            if await attempt(entry, using: client, now: now) != nil { synced += 1 }
        }
        return synced
    }

    /// When the next entry is due, nil when nothing waits.
    public var nextAttempt: Date? { pending().compactMap(\.nextAttempt).min() }

    /// Forgets every waiting transaction (the user logged out).
    public func logOut() {
        entries.withLock { $0.removeAll() }
        save()
    }

    private func attempt(_ entry: Entry, using client: SaveDeskClient, now: Date) async -> SyncResult? {
        do {
            let answer = try await client.syncStoreKitTransaction(jws: entry.jws, userId: entry.userId, idempotencyKey: entry.idempotencyKey)
            let result = SyncResult(originalTransactionId: answer.originalTransactionId, conflict: answer.conflict)
            entries.withLock { $0.removeAll { $0.transactionId == entry.transactionId } }
            save()
            emit(.synced(transactionId: entry.transactionId, result: result))
            return result
        } catch {
            let failed = entries.withLock { list -> Entry? in
                guard let index = list.firstIndex(where: { $0.transactionId == entry.transactionId }) else { return nil }
                list[index].attempts += 1
                list[index].lastError = error.message
                // A definitive refusal of the transaction will not change by waiting: give up at once.
                list[index].nextAttempt = error.isDefinitiveRefusal
                    ? nil : policy.nextAttempt(after: max(now, Date()), failedAttempts: list[index].attempts)
                let entry = list[index]
                if entry.nextAttempt == nil { list.remove(at: index) }
                return entry
            }
            guard let entry = failed else { return nil }
            save()
            emit(.syncFailed(transactionId: entry.transactionId, message: error.message, attempts: entry.attempts,
                             willRetry: entry.nextAttempt != nil))
            return nil
        }
    }

    private func emit(_ event: Event) {
        for handler in listeners.withLock({ Array($0.values) }) { handler(event) }
    }

    /// The whole queue, replaced atomically (under the lock, so writes never interleave). A failed
    /// write is kept as `writeError` and reported to the listeners.
    private func save() {
        let failure = entries.withLock { list -> String? in
            do {
                try DurableFile.write(try JSONEncoder().encode(list), to: file)
                return nil
            } catch {
                return "the StoreKit sync queue could not be saved to \(file.path): \(error)"
            }
        }
        writeFailure.withLock { $0 = failure }
        if let failure { emit(.writeFailed(message: failure)) }
    }
}
