import Foundation
import RetentionDomain
import SaveDeskAPI
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What the desk's event stream says.
public enum DeskStreamMessage: Sendable, Equatable {
    /// A recorded change.
    case event(Wire.DeskEvent)
    /// An agent on a customer (or gone: activity `left`).
    case presence(Wire.DeskPresence)
    /// Events after `after` up to `through` were purged before this resume.
    case gap(after: Int64, through: Int64)
}

/// The desk's event stream (`GET /v1/desk/events`), followed for as long as it runs: on a
/// thread of its own (the console's input never waits on it), over a socket as
/// `PlainHTTPTransport` talks (an `http://` server), reconnecting with backoff and
/// `Last-Event-ID` so nothing recorded is missed. A refusal (a wrong key, a live key's mode…)
/// stops it and says why.
public final class DeskEventFeed: Sendable {
    public enum State: Sendable, Equatable {
        case connecting
        case live
        /// Lost; the next attempt in `seconds`.
        case reconnecting(seconds: Int, reason: String)
        /// Not followable (an https server); the manual keys still work.
        case stopped(String)
        /// Refused for good (a wrong key, a publishable one, a bad parameter).
        case refused(SaveDeskClientError)
    }

    public let serverURL: URL
    let key: String
    let customerId: String?
    /// Silence this long (no heartbeat) means the connection is gone.
    let silence: Duration
    private let shared: Mutex<Shared>

    private struct Shared {
        var lastEventId: Int64?
        var stopped = false
        var socket: Int32 = -1
    }

    /// How long to wait before each reconnect (the last repeats).
    static let backoff: [Int] = [1, 2, 5, 10, 30]

    public init(serverURL: URL, key: String, customerId: String? = nil, after lastEventId: Int64? = nil, silence: Duration = .seconds(45)) {
        self.serverURL = serverURL
        self.key = key
        self.customerId = customerId
        self.silence = silence
        shared = Mutex(Shared(lastEventId: lastEventId))
    }

    /// The id of the last event received (what a reconnect resumes after).
    public var lastEventId: Int64? { shared.withLock { $0.lastEventId } }

    /// Starts following; `state` and `message` are called on the feed's thread.
    public func start(state: @escaping @Sendable (State) -> Void, message: @escaping @Sendable (DeskStreamMessage) -> Void) {
        guard serverURL.scheme?.lowercased() == "http", let host = serverURL.host, !host.isEmpty else {
            state(.stopped("live updates need an http:// server; press the refresh keys"))
            return
        }
        let started = PlainHTTPTransport.detachThread { [self] in
            var failures = 0
            while !isStopped {
                state(.connecting)
                do {
                    try follow(host: host, port: serverURL.port ?? 80) {
                        failures = 0
                        state(.live)
                    } message: { received in
                        if case .event(let event) = received { shared.withLock { $0.lastEventId = event.id } }
                        message(received)
                    }
                    if isStopped { return }
                    failures += 1
                    let wait = Self.backoff[min(failures - 1, Self.backoff.count - 1)]
                    state(.reconnecting(seconds: wait, reason: "the stream ended"))
                    pause(seconds: wait)
                } catch let error as SaveDeskClientError where Self.isFinal(error) {
                    state(.refused(error))
                    return
                } catch {
                    if isStopped { return }
                    failures += 1
                    let wait = Self.backoff[min(failures - 1, Self.backoff.count - 1)]
                    state(.reconnecting(seconds: wait, reason: "\(error)"))
                    pause(seconds: wait)
                }
            }
        }
        if !started { state(.stopped("cannot start a thread for live updates")) }
    }

    /// A refusal that a reconnect would only repeat (a wrong key, a bad parameter); 429 and 5xx
    /// are tried again.
    static func isFinal(_ error: SaveDeskClientError) -> Bool {
        guard case .server(let status, _) = error.kind else { return false }
        return (400..<500).contains(status) && status != 429 && status != 408
    }

    /// Stops following (the connection is closed at once).
    public func stop() {
        let socket = shared.withLock { state -> Int32 in
            state.stopped = true
            return state.socket
        }
        if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private var isStopped: Bool { shared.withLock { $0.stopped } }

    private func pause(seconds: Int) {
        let until = ContinuousClock.now + .seconds(seconds)
        while !isStopped, ContinuousClock.now < until { usleep(50_000) }
    }

    /// One connection: the request, the answer's head, then events until it ends.
    private func follow(host: String, port: Int, opened: () -> Void, message: (DeskStreamMessage) -> Void) throws {
        let connectDeadline = PlainHTTPTransport.Clock.system.now() &+ 10_000_000_000
        let socket = try PlainHTTPTransport.connect(host: host, port: port, deadline: connectDeadline, clock: .system)
        let stopped = shared.withLock { state -> Bool in
            state.socket = socket
            return state.stopped
        }
        defer {
            shared.withLock { $0.socket = -1 }
            close(socket)
        }
        if stopped { return }
        var target = serverURL.path
        while target.hasSuffix("/") { target.removeLast() }
        target += "/v1/desk/events"
        if let customerId { target += "?customer_id=" + Self.percentEncoded(customerId) }
        var head = "GET \(target) HTTP/1.1\r\nHost: \(host.contains(":") ? "[\(host)]" : host):\(port)\r\n"
        head += "X-ZeroSettle-Key: \(key)\r\nAccept: text/event-stream\r\n"
        if let last = lastEventId { head += "Last-Event-ID: \(last)\r\n" }
        head += "Connection: close\r\n\r\n"
        try send(Array(head.utf8), on: socket, deadline: connectDeadline)

        var reader = Reader(socket: socket, silence: PlainHTTPTransport.nanoseconds(silence))
        var buffered: [UInt8] = []
        // The head.
        while PlainHTTPTransport.headerEnd(buffered) == nil {
            guard let bytes = try reader.read() else { throw PlainHTTPTransport.Failure(description: "the connection closed before an answer") }
            buffered += bytes
            if buffered.count > PlainHTTPTransport.maximumHeaderBytes { throw PlainHTTPTransport.Failure(description: "the answer's head is too large") }
        }
        let end = PlainHTTPTransport.headerEnd(buffered)!
        let answer = try PlainHTTPTransport.parseHead(buffered[..<end])
        var body = Array(buffered[end...])
        guard answer.status == 200 else {
            // An error answer is small and whole: read it to its end, and say it as its envelope says.
            var whole = buffered
            while !PlainHTTPTransport.isComplete(whole), whole.count < 1 << 20, let bytes = try reader.read() { whole += bytes }
            throw Self.refusal(status: answer.status, bytes: whole)
        }
        opened()
        var chunks = ChunkDecoder(chunked: answer.chunked)
        var lines = EventParser()
        func consume(_ bytes: [UInt8]) throws {
            for piece in try chunks.feed(bytes) {
                for received in lines.feed(piece) { message(received) }
            }
        }
        try consume(body)
        while !chunks.finished, let bytes = try reader.read() { try consume(bytes) }
    }

    private func send(_ message: [UInt8], on socket: Int32, deadline: UInt64) throws {
        var sent = 0
        while sent < message.count {
            try PlainHTTPTransport.wait(socket, for: Int16(POLLOUT), deadline: deadline, clock: .system)
            let count = message[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw PlainHTTPTransport.Failure(description: "sending: \(String(cString: strerror(errno)))")
            }
            sent += count
        }
    }

    static func refusal(status: Int, bytes: [UInt8]) -> SaveDeskClientError {
        struct Envelope: Decodable { var error: String; var code: String }
        if let end = PlainHTTPTransport.headerEnd(bytes), let head = try? PlainHTTPTransport.parseHead(bytes[..<end]),
            let body = head.chunked ? try? PlainHTTPTransport.dechunk(bytes[end...]) : Array(bytes[end...].prefix(head.length ?? Int.max)),
            let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(body)) {
            return SaveDeskClientError(kind: .server(status: status, code: envelope.code), message: envelope.error)
        }
        return SaveDeskClientError(kind: .server(status: status, code: "unknown"), message: "the server answered \(status)")
    }

    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// Reads what arrives, waiting at most `silence` for anything (a heartbeat comes well within).
    struct Reader {
        let socket: Int32
        let silence: UInt64
        var chunk = [UInt8](repeating: 0, count: 64 << 10)

        /// Bytes, or nil when the server closed.
        mutating func read() throws -> [UInt8]? {
            let deadline = PlainHTTPTransport.Clock.system.now() &+ silence
            while true {
                try PlainHTTPTransport.wait(socket, for: Int16(POLLIN), deadline: deadline, clock: .system)
                let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count < 0 {
                    if errno == EAGAIN || errno == EINTR { continue }
                    throw PlainHTTPTransport.Failure(description: "reading: \(String(cString: strerror(errno)))")
                }
                return count == 0 ? nil : Array(chunk[..<count])
            }
        }
    }
}

/// Chunked transfer coding taken apart as it arrives (or passed through when not chunked).
struct ChunkDecoder {
    let chunked: Bool
    private var pending: [UInt8] = []
    /// Bytes of the current chunk still to come (nil: a size line is next).
    private var remaining: Int?
    private(set) var finished = false

    init(chunked: Bool) { self.chunked = chunked }

    mutating func feed(_ bytes: [UInt8]) throws -> [[UInt8]] {
        guard chunked else { return [bytes] }
        pending += bytes
        var out: [[UInt8]] = []
        var index = 0
        while !finished {
            if let left = remaining {
                if left > 0 {
                    let take = min(left, pending.count - index)
                    if take == 0 { break }
                    out.append(Array(pending[index..<(index + take)]))
                    index += take
                    remaining = left - take
                    continue
                }
                // The CRLF after a chunk's data.
                guard pending.count - index >= 2 else { break }
                index += 2
                remaining = nil
            } else {
                guard let lineEnd = pending[index...].firstIndex(of: 10) else {
                    if pending.count - index > 1024 { throw PlainHTTPTransport.Failure(description: "a bad chunk size line") }
                    break
                }
                let text = String(decoding: pending[index..<lineEnd], as: UTF8.self).split(separator: ";").first ?? ""
                guard let size = Int(text.trimmedOfWhitespace, radix: 16), size >= 0 else {
                    throw PlainHTTPTransport.Failure(description: "a bad chunk size")
                }
                index = lineEnd + 1
                if size == 0 { finished = true } else { remaining = size }
            }
        }
        pending.removeFirst(index)
        return out
    }
}

/// Server-sent events taken apart line by line (the fields SaveDesk sends: id, event, data;
/// comments and retry are skipped).
struct EventParser {
    private var line: [UInt8] = []
    private var id: String?
    private var type: String?
    private var data: [String] = []
    /// A line longer than this is not SaveDesk's: dropped.
    static let maximumLine = 64 << 10

    mutating func feed(_ bytes: [UInt8]) -> [DeskStreamMessage] {
        var out: [DeskStreamMessage] = []
        for byte in bytes {
            if byte == 10 {
                if line.last == 13 { line.removeLast() }
                if let message = take(String(decoding: line, as: UTF8.self)) { out.append(message) }
                line.removeAll(keepingCapacity: true)
            } else if line.count < Self.maximumLine {
                line.append(byte)
            }
        }
        return out
    }

    /// One line: a blank one dispatches what the fields gathered.
    private mutating func take(_ text: String) -> DeskStreamMessage? {
        guard !text.isEmpty else {
            defer { id = nil; type = nil; data = [] }
            return dispatch()
        }
        if text.hasPrefix(":") { return nil }
        let (name, value): (Substring, Substring) = if let colon = text.firstIndex(of: ":") {
            (text[..<colon], text[text.index(after: colon)...].drop { $0 == " " })
        } else {
            (text[...], "")
        }
        switch name {
        case "id": id = String(value)
        case "event": type = String(value)
        case "data": data.append(String(value))
        default: break
        }
        return nil
    }

    private func dispatch() -> DeskStreamMessage? {
        guard !data.isEmpty else { return nil }
        let payload = Data(data.joined(separator: "\n").utf8)
        let decoder = WireFormat.decoder()
        switch type {
        case "presence": return (try? decoder.decode(Wire.DeskPresence.self, from: payload)).map(DeskStreamMessage.presence)
        case "gap":
            struct Gap: Decodable { var after: Int64; var through: Int64 }
            return (try? decoder.decode(Gap.self, from: payload)).map { .gap(after: $0.after, through: $0.through) }
        default: return (try? decoder.decode(Wire.DeskEvent.self, from: payload)).map(DeskStreamMessage.event)
        }
    }
}
