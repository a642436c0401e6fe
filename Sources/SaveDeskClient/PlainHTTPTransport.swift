import Dispatch
import Foundation
import HTTPTypes
import OpenAPIRuntime
import RetentionDomain

#if canImport(Glibc)
import Glibc
#endif

/// The client's transport for an `http://` server (the demo, a server on this machine or the
/// office network): HTTP/1.1 over a socket of its own per call, on a thread of its own, with one
/// deadline for the whole exchange. The console talks to one server a call or two at a time, so
/// nothing is pooled (a loopback connect costs microseconds). Not a dispatch queue: on Linux its
/// threads are few, and calls blocked in poll starved each other and the in-process test
/// servers (timeouts under load). It spares the console the NIO event loop and AsyncHTTPClient
/// (about 3 MB of its resident memory); `https://` still goes through AsyncHTTPClient, which has
/// TLS.
struct PlainHTTPTransport: ClientTransport {
    /// For the whole exchange: connecting, sending and the complete answer.
    var timeout: Duration
    /// The largest answer accepted (the biggest real one, a customer page, is a few hundred KB).
    static let maximumResponseBytes = 16 << 20
    static let maximumHeaderBytes = 64 << 10

    struct Failure: Error, Equatable, CustomStringConvertible {
        var description: String
    }

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        guard let host = baseURL.host, !host.isEmpty else { throw Failure(description: "no host in \(baseURL)") }
        let port = baseURL.port ?? 80
        let requestBody: [UInt8] = if let body { try await [UInt8](collecting: body, upTo: Self.maximumResponseBytes) } else { [] }
        let message = Self.requestMessage(request, body: requestBody, baseURL: baseURL, host: host, port: baseURL.port)
        let deadline = Clock.system.now() &+ Self.nanoseconds(timeout)
        let answer = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
            let started = Self.detachThread {
                continuation.resume(with: Result { try Self.exchange(message, host: host, port: port, deadline: deadline) })
            }
            if !started { continuation.resume(throwing: Failure(description: "cannot start a thread for the call")) }
        }
        return try Self.response(from: answer, method: request.method)
    }

    /// A timeout in nanoseconds (at least a millisecond).
    static func nanoseconds(_ timeout: Duration) -> UInt64 {
        let (seconds, attoseconds) = timeout.components
        return max(1_000_000, UInt64(clamping: seconds) &* 1_000_000_000 &+ UInt64(clamping: attoseconds / 1_000_000_000))
    }

    /// Runs `work` on a new detached thread (a plain pthread: Foundation's Thread brings its run
    /// loop machinery along). False if the thread could not be made.
    static func detachThread(_ work: @escaping @Sendable () -> Void) -> Bool {
        final class Work {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }
        let context = Unmanaged.passRetained(Work(work)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            Unmanaged<Work>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<Work>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    /// The request as it goes on the wire. The framing headers are this transport's own.
    static func requestMessage(_ request: HTTPRequest, body: [UInt8], baseURL: URL, host: String, port: Int?) -> [UInt8] {
        var basePath = baseURL.path
        while basePath.hasSuffix("/") { basePath.removeLast() }
        let target = basePath + (request.path ?? "/")
        let authority = host.contains(":") ? "[\(host)]" : host
        var head = "\(request.method.rawValue) \(target) HTTP/1.1\r\nHost: \(authority)\(port.map { ":\($0)" } ?? "")\r\n"
        for field in request.headerFields where !["host", "content-length", "connection", "transfer-encoding"].contains(field.name.canonicalName) {
            head += "\(field.name.rawName): \(field.value)\r\n"
        }
        if !body.isEmpty || [.post, .put, .patch].contains(request.method) { head += "Content-Length: \(body.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + body
    }

    /// The clock a deadline is read on (uptime nanoseconds); tests give their own.
    struct Clock: Sendable {
        var now: @Sendable () -> UInt64
        static let system = Clock { DispatchTime.now().uptimeNanoseconds }
    }

    /// Connects, sends `message` and reads the whole answer, all before `deadline` on `clock`.
    static func exchange(_ message: [UInt8], host: String, port: Int, deadline: UInt64, clock: Clock = .system) throws -> [UInt8] {
        let socket = try connect(host: host, port: port, deadline: deadline, clock: clock)
        defer { close(socket) }
        var sent = 0
        while sent < message.count {
            try wait(socket, for: Int16(POLLOUT), deadline: deadline, clock: clock)
            let count = message[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw Failure(description: "sending: \(String(cString: strerror(errno)))")
            }
            sent += count
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while !isComplete(answer) {
            try wait(socket, for: Int16(POLLIN), deadline: deadline, clock: clock)
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw Failure(description: "reading: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            answer += chunk[..<count]
            guard answer.count <= maximumResponseBytes + maximumHeaderBytes else { throw Failure(description: "the answer is too large") }
        }
        return answer
    }

    static func connect(host: String, port: Int, deadline: UInt64, clock: Clock) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else { throw Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(status)))") }
        defer { freeaddrinfo(list) }
        var reason = "no address"
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let address = candidate {
            candidate = address.pointee.ai_next
            let socket = Glibc.socket(address.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard socket >= 0 else { continue }
            var one: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            if Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return socket }
            if errno == EINPROGRESS {
                do {
                    try wait(socket, for: Int16(POLLOUT), deadline: deadline, clock: clock)
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
                    if error == 0 { return socket }
                    reason = String(cString: strerror(error))
                } catch {
                    reason = "\(error)"
                }
            } else {
                reason = String(cString: strerror(errno))
            }
            close(socket)
        }
        throw Failure(description: "cannot connect to \(host):\(port): \(reason)")
    }

    /// Waits until the socket is ready for `events`, or throws when the deadline passes.
    static func wait(_ socket: Int32, for events: Int16, deadline: UInt64, clock: Clock) throws {
        while true {
            let now = clock.now()
            guard now < deadline else { throw Failure(description: "timed out") }
            var descriptor = pollfd(fd: socket, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(Int64((deadline - now) / 1_000_000) + 1, Int64(Int32.max))))
            if ready > 0 { return }
            if ready < 0, errno != EINTR { throw Failure(description: "poll: \(String(cString: strerror(errno)))") }
        }
    }

    /// Where the header ends (the index after its blank line), if it has arrived.
    static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count where bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return nil
    }

    /// Whether the answer has all of its body (by Content-Length, or the chunked terminator);
    /// otherwise the server's close ends it.
    static func isComplete(_ bytes: [UInt8]) -> Bool {
        guard let end = headerEnd(bytes), let head = try? parseHead(bytes[..<end]) else { return false }
        if head.chunked { return (try? dechunk(bytes[end...])) != nil }
        if let length = head.length { return bytes.count - end >= length }
        return false
    }

    struct Head {
        var status: Int
        var fields: HTTPFields
        var length: Int?
        var chunked: Bool
    }

    /// The status line and header fields, read as bytes: `String.split` on a separator and
    /// `lowercased()` go through the generic string algorithms, whose types are each looked up
    /// among every conformance of the binary the first time (a call made at the console's start).
    static func parseHead(_ bytes: ArraySlice<UInt8>) throws -> Head {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = start
        while index < bytes.endIndex {
            if bytes[index] == 13, index + 1 < bytes.endIndex, bytes[index + 1] == 10 {
                if index > start { lines.append(bytes[start..<index]) }
                index += 2
                start = index
            } else {
                index += 1
            }
        }
        if start < bytes.endIndex { lines.append(bytes[start...]) }
        guard let statusLine = lines.first else { throw Failure(description: "an empty answer") }
        let parts = statusLine.split(separator: 32, maxSplits: 2)
        guard parts.count >= 2, parts[0].starts(with: Array("HTTP/1.".utf8)), let status = Int(String(decoding: parts[1], as: UTF8.self)),
              (100...599).contains(status)
        else {
            throw Failure(description: "not an HTTP answer")
        }
        var head = Head(status: status, fields: HTTPFields(), length: nil, chunked: false)
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: 58) else { throw Failure(description: "a malformed header line") }
            let name = String(decoding: trimmed(line[..<colon]), as: UTF8.self)
            let value = String(decoding: trimmed(line[(colon + 1)...]), as: UTF8.self)
            if equalsIgnoringCase(name, "content-length") {
                guard let length = Int(value), length >= 0, length <= maximumResponseBytes else { throw Failure(description: "a bad Content-Length") }
                head.length = length
            } else if equalsIgnoringCase(name, "transfer-encoding") {
                let last = value.utf8.split(separator: 44).last.map { String(decoding: trimmed($0), as: UTF8.self) }
                head.chunked = last.map { equalsIgnoringCase($0, "chunked") } ?? false
            } else if let fieldName = HTTPField.Name(name) {
                head.fields.append(HTTPField(name: fieldName, value: value))
            }
        }
        return head
    }

    /// Without the spaces and tabs at either end.
    static func trimmed<C: BidirectionalCollection<UInt8>>(_ bytes: C) -> C.SubSequence {
        let isBlank = { (byte: UInt8) in byte == 32 || byte == 9 }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) }) else {
            return bytes[bytes.endIndex...]
        }
        return bytes[first...last]
    }

    /// ASCII letters compared without their case (`lowercase` is lowercase already).
    static func equalsIgnoringCase(_ text: String, _ lowercase: StaticString) -> Bool {
        let lower = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        return text.utf8.count == lower.count && zip(text.utf8, lower).allSatisfy { ($0 >= 65 && $0 <= 90 ? $0 + 32 : $0) == $1 }
    }

    /// The body of a chunked answer; throws if it is not all there yet (or malformed).
    static func dechunk(_ bytes: ArraySlice<UInt8>) throws -> [UInt8] {
        var body: [UInt8] = []
        var index = bytes.startIndex
        while true {
            guard let lineEnd = bytes[index...].firstIndex(of: 10), lineEnd > index, bytes[lineEnd - 1] == 13 else {
                throw Failure(description: "an incomplete chunk")
            }
            let sizeText = String(decoding: bytes[index..<(lineEnd - 1)], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmedOfWhitespace, radix: 16), size >= 0, size <= maximumResponseBytes else {
                throw Failure(description: "a bad chunk size")
            }
            let start = lineEnd + 1
            if size == 0 { return body }  // trailers, if any, are ignored
            guard bytes.endIndex - start >= size + 2 else { throw Failure(description: "an incomplete chunk") }
            body += bytes[start..<(start + size)]
            index = start + size + 2
        }
    }

    static func response(from bytes: [UInt8], method: HTTPRequest.Method) throws -> (HTTPResponse, HTTPBody?) {
        guard let end = headerEnd(bytes) else { throw Failure(description: "the connection closed before a whole answer") }
        let head = try parseHead(bytes[..<end])
        let body: [UInt8]
        if head.chunked {
            body = try dechunk(bytes[end...])
        } else if let length = head.length {
            guard bytes.count - end >= length else { throw Failure(description: "the connection closed before a whole answer") }
            body = Array(bytes[end..<(end + length)])
        } else {
            body = Array(bytes[end...])
        }
        let hasBody = !(method == .head || head.status == 204 || head.status == 304 || head.status < 200)
        return (HTTPResponse(status: .init(code: head.status), headerFields: head.fields), hasBody ? HTTPBody(body) : nil)
    }
}
