import Foundation
import RetentionDomain
import SaveDeskAPI
import Synchronization

/// Fire-and-forget calls that must never be lost: each is written to its own file in the data
/// directory before `enqueue` returns, delivered in order with the RetentionDomain backoff, kept
/// across restarts, and sent with its own Idempotency-Key so a repeat is never applied twice.
public final class Outbox: Sendable {
    public enum Kind: String, Codable, Sendable {
        case cancelFlowResponse, offerViewed, migrationConverted
    }

    /// One waiting call.
    public struct Item: Codable, Sendable, Equatable {
        public var sequence: UInt64
        /// Also the Idempotency-Key of every attempt.
        public var id: String
        public var kind: Kind
        /// The request body as wire JSON.
        public var body: Data
        public var attempts: Int
        public var nextAttempt: Date?
        public var lastError: String?
    }

    /// What a delivery pass did.
    public struct Report: Sendable, Equatable {
        public var delivered: Int
        public var remaining: Int
        /// Refused by the server (a 4xx); moved to `rejected/`, never silently dropped.
        public var rejected: Int
        public var nextAttempt: Date?
    }

    public let directory: URL
    let policy: RetryPolicy
    private let state: Mutex<UInt64>
    private let delivering = Mutex(false)
    private let loop = Mutex(LoopState())

    /// The background delivery loop: at most one runs; a kick while it runs asks for another pass.
    private struct LoopState {
        var running = false
        var again = false
        var stopped = false
    }

    public init(directory: URL, policy: RetryPolicy = .outbox) throws {
        self.directory = directory
        self.policy = policy
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("rejected"), withIntermediateDirectories: true)
        let last = (try? FileManager.default.contentsOfDirectory(atPath: directory.path))?
            .compactMap { UInt64($0.prefix(20)) }.max() ?? 0
        state = Mutex(last)
    }

    /// Writes the call to disk (durably) and returns its Idempotency-Key.
    @discardableResult
    public func enqueue(_ kind: Kind, body: some Encodable) throws -> String {
        let data = try WireFormat.encoder().encode(body)
        return try state.withLock { sequence in
            sequence += 1
            let item = Item(sequence: sequence, id: "sd_outbox_" + UUID().uuidString.lowercased(), kind: kind, body: data,
                            attempts: 0, nextAttempt: nil, lastError: nil)
            try write(item)
            return item.id
        }
    }

    /// The waiting calls, oldest first.
    public func pending() -> [Item] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else { return nil }
            return try? JSONDecoder().decode(Item.self, from: data)
        }
    }

    /// Delivers waiting calls in order until one fails (later ones wait behind it, so order is
    /// kept). One pass runs at a time: a call made during another pass waits for it to end first.
    /// `ignoringBackoff` sends the first waiting call now (the agent asked to retry).
    public func deliver(using client: SaveDeskClient, now: Date = Date(), ignoringBackoff: Bool = false) async -> Report {
        while !delivering.withLock({ busy in
            if busy { return false }
            busy = true
            return true
        }) {
            try? await Task.sleep(for: .milliseconds(10))
        }
        defer { delivering.withLock { $0 = false } }
        var report = Report(delivered: 0, remaining: 0, rejected: 0, nextAttempt: nil)
        var items = pending()[...]
        while var item = items.first {
            if let next = item.nextAttempt, next > now, !(ignoringBackoff && report.delivered == 0 && report.rejected == 0) {
                report.nextAttempt = next
                break
            }
            do {
                try await client.deliver(item)
                try? FileManager.default.removeItem(at: url(of: item))
                report.delivered += 1
                items = items.dropFirst()
            } catch {
                if error.isTransient {
                    item.attempts += 1
                    item.lastError = error.message
                    // Back off from when the attempt failed (a timeout may have taken a while).
                    item.nextAttempt = policy.nextAttempt(after: max(now, Date()), failedAttempts: item.attempts)
                    // Another outbox on this folder (an app not yet shut down) may have delivered
                    // it meanwhile: never bring a delivered item back.
                    if FileManager.default.fileExists(atPath: url(of: item).path) { try? write(item) }
                    report.nextAttempt = item.nextAttempt
                    break
                }
                // The server refuses it for good: keep it aside for a person, and go on.
                item.lastError = error.message
                try? write(item, in: directory.appendingPathComponent("rejected"))
                try? FileManager.default.removeItem(at: url(of: item))
                report.rejected += 1
                items = items.dropFirst()
            }
        }
        report.remaining = pending().count
        return report
    }

    /// Delivers in the background now, and again whenever the backoff says, until nothing waits
    /// (or `stop()`). Safe to call often: one loop runs at a time.
    public func kick(using client: SaveDeskClient, ignoringBackoff: Bool = false) {
        let start = loop.withLock { state -> Bool in
            if state.stopped { return false }
            if state.running {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        guard start else { return }
        Task.detached { await self.run(using: client, ignoringBackoff: ignoringBackoff) }
    }

    /// Whether the background loop is still running (it ends after its current pass once stopped).
    public var isRunning: Bool { loop.withLock { $0.running } }

    /// Ends the background loop (the items stay on disk for the next start).
    public func stop() { loop.withLock { $0.stopped = true } }

    private func run(using client: SaveDeskClient, ignoringBackoff: Bool) async {
        var force = ignoringBackoff
        while true {
            let stopped = loop.withLock { state -> Bool in
                state.again = false
                if state.stopped { state.running = false }
                return state.stopped
            }
            if stopped { return }
            let report = await deliver(using: client, ignoringBackoff: force)
            force = false
            let finished = loop.withLock { state -> Bool in
                if state.stopped || (report.remaining == 0 && !state.again) {
                    state.running = false
                    return true
                }
                return false
            }
            if finished { return }
            if report.remaining == 0 { continue }
            // Something waits behind a failed call: sleep until its next attempt.
            let wait = max(0.05, (report.nextAttempt ?? Date().addingTimeInterval(1)).timeIntervalSinceNow)
            var slept = 0.0
            while slept < wait, !loop.withLock({ $0.stopped }) {
                let step = min(0.25, wait - slept)
                try? await Task.sleep(for: .milliseconds(Int64(step * 1000)))
                slept += step
            }
        }
    }

    private func url(of item: Item, in folder: URL? = nil) -> URL {
        (folder ?? directory).appendingPathComponent(String(format: "%020llu", item.sequence) + ".json")
    }

    private func write(_ item: Item, in folder: URL? = nil) throws {
        try DurableFile.write(try JSONEncoder().encode(item), to: url(of: item, in: folder))
    }
}

extension SaveDeskClient {
    /// A fire-and-forget call: written to the outbox, then delivered in the background. Never
    /// throws, never blocks. Without an outbox (or when the disk refuses the write) it is sent
    /// once in the background, with the client's one retry.
    func enqueue(_ kind: Outbox.Kind, _ body: some Encodable & Sendable) {
        if let outbox, (try? outbox.enqueue(kind, body: body)) != nil {
            outbox.kick(using: self)
            return
        }
        guard let data = try? WireFormat.encoder().encode(body) else { return }
        let item = Outbox.Item(sequence: 0, id: "sd_" + UUID().uuidString.lowercased(), kind: kind, body: data,
                               attempts: 0, nextAttempt: nil, lastError: nil)
        Task { try? await deliver(item, retry: true) }
    }

    /// Sends one outbox item with its own Idempotency-Key.
    func deliver(_ item: Outbox.Item, retry: Bool = false) async throws(SaveDeskClientError) {
        func decode<T: Decodable>(_ type: T.Type) throws(SaveDeskClientError) -> T {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            do { return try decoder.decode(T.self, from: item.body) } catch {
                throw SaveDeskClientError(kind: .invalidResponse, message: "outbox item \(item.id) cannot be read: \(error)")
            }
        }
        switch item.kind {
        case .cancelFlowResponse:
            let body = try decode(Components.Schemas.CancelFlowResponse.self)
            try await send(retry: retry, { try await api.submitCancelFlowResponse(headers: .init(idempotencyKey: item.id), body: .json(body)) }) { _ = try $0.ok }
        case .offerViewed:
            let body = try decode(Components.Schemas.OfferViewedRequest.self)
            try await send(retry: retry, { try await api.recordOfferViewed(headers: .init(idempotencyKey: item.id), body: .json(body)) }) { _ = try $0.ok }
        case .migrationConverted:
            let body = try decode(Components.Schemas.MigrationConvertedRequest.self)
            try await send(retry: retry, { try await api.recordMigrationConverted(headers: .init(idempotencyKey: item.id), body: .json(body)) }) { _ = try $0.ok }
        }
    }
}
