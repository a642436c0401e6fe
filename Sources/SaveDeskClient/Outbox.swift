import Foundation
import RetentionDomain
import SaveDeskAPI
import Synchronization

/// Fire-and-forget calls that must never be lost: each is written to its own file before
/// `enqueue` returns, delivered in order with the RetentionDomain backoff, kept across restarts,
/// and sent with its own Idempotency-Key so a repeat is never applied twice.
///
/// - One outbox per server and key (`folder(in:serverURL:key:)`): a call recorded against a test
///   server is never delivered to a live one.
/// - Several processes may share a folder (the terminal UI and a headless command): each item's
///   file is created exclusively under a name no other process can take, so none replaces another.
/// - What cannot be delivered is never dropped in silence: a call the server refuses for good, or a
///   file that cannot be read, is moved to `rejected/` next to a `.reason` file, and counted.
public final class Outbox: Sendable {
    public enum Kind: String, Codable, Sendable {
        case cancelFlowResponse, offerViewed, migrationConverted
    }

    /// One waiting call.
    public struct Item: Codable, Sendable, Equatable {
        /// When it was recorded (nanoseconds); orders the outbox across processes.
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
        /// Refused by the server, or unreadable: moved to `rejected/`, never silently dropped.
        public var rejected: Int
        public var nextAttempt: Date?
    }

    public let directory: URL
    public var rejectedDirectory: URL { directory.appendingPathComponent("rejected") }
    let policy: RetryPolicy
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
    }

    /// The outbox folder of one server and key, under `root`: named by the server's host and port
    /// and a digest of the server and the key (the key itself is never written to disk).
    public static func folder(in root: URL, serverURL: URL, key: String) -> URL {
        let digest = SHA256Digest.hex("\(serverURL.absoluteString.lowercased())\n\(key)".utf8, prefix: 8)
        let host = (serverURL.host ?? "server").filter { $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" }
        return root.appendingPathComponent("\(host)-\(serverURL.port.map(String.init) ?? "default")-\(digest)")
    }

    /// Items an older SaveDesk left directly in `root`, before outboxes were kept per server and
    /// key: the server they were meant for is not known, so they are set aside in this outbox's
    /// `rejected/` with that reason rather than sent anywhere. Returns how many.
    @discardableResult
    public func setAsideLegacyItems(in root: URL) -> Int {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []).filter { $0.hasSuffix(".json") }
        for name in names {
            setAside(root.appendingPathComponent(name),
                     reason: "recorded before outboxes were kept per server and key; not sent, as the server it was meant for is not known")
        }
        return names.count
    }

    /// Writes the call to disk (durably, under a name of its own) and returns its Idempotency-Key.
    @discardableResult
    public func enqueue(_ kind: Kind, body: some Encodable) throws -> String {
        let data = try WireFormat.encoder().encode(body)
        for _ in 0..<100 {
            let nanos = UInt64(max(0, Date().timeIntervalSince1970 * 1_000_000_000))
            let item = Item(sequence: nanos, id: "sd_outbox_" + UUID().uuidString.lowercased(), kind: kind, body: data,
                            attempts: 0, nextAttempt: nil, lastError: nil)
            let name = String(format: "%020llu-%08x-%08x.json", nanos, UInt32(truncatingIfNeeded: getpid()), UInt32.random(in: 0...UInt32.max))
            if try DurableFile.create(try JSONEncoder().encode(item), at: directory.appendingPathComponent(name)) { return item.id }
        }
        throw DurableFile.Failure(path: directory.path, reason: "no free name for a new item")
    }

    /// The waiting calls, oldest first. A file that cannot be read is set aside with the reason.
    public func pending() -> [Item] { waiting().map(\.item) }

    /// How many calls wait, counted by their files alone (none is read or decoded): what the
    /// console's status bar shows, several times a second, however long the backlog.
    public var waitingCount: Int { Self.jsonFiles(in: directory).count }

    /// How many calls were set aside in `rejected/` (refused by the server, or unreadable).
    public var rejectedCount: Int { Self.jsonFiles(in: rejectedDirectory).count }

    /// The names of a folder's items (its `.json` files).
    private static func jsonFiles(in folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".json") }
    }

    private func waiting() -> [(file: URL, item: Item)] {
        Self.jsonFiles(in: directory).sorted().compactMap { name in
            let file = directory.appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: file.path) else { return nil }  // delivered meanwhile
            do {
                return (file, try JSONDecoder().decode(Item.self, from: data))
            } catch {
                setAside(file, reason: "the file cannot be read as an outbox item: \(error)")
                return nil
            }
        }
    }

    /// Moves a file to `rejected/` with a `.reason` file beside it.
    private func setAside(_ file: URL, reason: String) {
        let target = rejectedDirectory.appendingPathComponent(file.lastPathComponent)
        try? DurableFile.write(Data((reason + "\n").utf8), to: target.appendingPathExtension("reason"))
        if (try? DurableFile.move(file, to: target)) == nil { try? FileManager.default.removeItem(at: file) }
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
        var entries = waiting()[...]
        while var (file, item) = entries.first {
            if let next = item.nextAttempt, next > now, !(ignoringBackoff && report.delivered == 0 && report.rejected == 0) {
                report.nextAttempt = next
                break
            }
            do {
                try await client.deliver(item)
                try? FileManager.default.removeItem(at: file)
                DurableFile.syncFolder(of: file)
                report.delivered += 1
                entries = entries.dropFirst()
            } catch where !error.isDefinitiveRefusal {
                item.attempts += 1
                item.lastError = error.message
                // Back off from when the attempt failed (a timeout may have taken a while).
                item.nextAttempt = policy.nextAttempt(after: max(now, Date()), failedAttempts: item.attempts)
                // Another outbox on this folder (an app not yet shut down) may have delivered it
                // meanwhile: never bring a delivered item back.
                if FileManager.default.fileExists(atPath: file.path), let data = try? JSONEncoder().encode(item) {
                    try? DurableFile.write(data, to: file)
                }
                report.nextAttempt = item.nextAttempt
                break
            } catch {
                // The server refuses it for good (or it cannot be sent at all): keep it aside for a
                // person, with the reason, and go on.
                setAside(file, reason: "refused: \(error.message)")
                report.rejected += 1
                entries = entries.dropFirst()
            }
        }
        report.remaining = waiting().count
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
                throw SaveDeskClientError(kind: .unsendable, message: "outbox item \(item.id) cannot be read: \(error)")
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
