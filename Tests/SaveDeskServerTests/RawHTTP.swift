import Foundation
import TestSupport

/// HTTP/1.1 as bytes on a socket, for what an HTTP client library would tidy up or refuse to
/// send: paths kept as written (`//`, `/./`, `%2F`), half-sent requests, oversize headers. The
/// blocking socket work runs on its own thread, never on the cooperative pool the server shares.
enum RawHTTP {
    struct Reply {
        var status: Int
        var head: String
        var body: String
        /// The server closed the connection after answering (or without answering).
        var closed: Bool
        var seconds: Double
    }

    /// Sends `request` to 127.0.0.1:`port` and reads until the server closes the connection or
    /// `timeout` passes.
    /// `from`: the loopback address to send from (0x7F00_0002 is 127.0.0.2), for another client
    /// address than the usual 127.0.0.1.
    /// `until`: stop reading once what arrived satisfies it (a stream that stays open).
    /// `later`: more to send on the same connection once `after` seconds have passed.
    static func exchange(
        port: Int, _ request: Data, timeout: Double = 10, from: UInt32? = nil, until: (@Sendable (String) -> Bool)? = nil,
        later: (after: Double, request: String)? = nil
    ) async -> Reply {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: exchangeBlocking(port: port, request, timeout: timeout, from: from, until: until, later: later))
            }
            thread.start()
        }
    }

    static func exchange(
        port: Int, _ request: String, timeout: Double = 10, from: UInt32? = nil, until: (@Sendable (String) -> Bool)? = nil,
        later: (after: Double, request: String)? = nil
    ) async -> Reply {
        await exchange(port: port, Data(request.utf8), timeout: timeout, from: from, until: until, later: later)
    }

    /// A GET of `target` exactly as written. It asks for the connection to close after the answer,
    /// so it returns as soon as the answer is whole; the bound is only for a server that never
    /// answers, far from any answer's time (a loaded CI run once took more than 10 s for a page).
    static func get(
        port: Int, _ target: String, key: String?, extraHeaders: String = "", from: UInt32? = nil, timeout: Double = 60
    ) async -> Reply {
        let keyLine = key.map { "X-ZeroSettle-Key: \($0)\r\n" } ?? ""
        return await exchange(
            port: port, "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(keyLine)\(extraHeaders)Connection: close\r\n\r\n", timeout: timeout, from: from
        )
    }

    private static func exchangeBlocking(
        port: Int, _ request: Data, timeout: Double, from: UInt32?, until: (@Sendable (String) -> Bool)? = nil,
        later: (after: Double, request: String)? = nil
    ) -> Reply {
        let started = Date()
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return Reply(status: 0, head: "", body: "socket failed", closed: true, seconds: 0) }
        defer { close(fd) }
        if let from, Loopback.bind(fd, port: 0, host: from) == nil {
            return Reply(status: 0, head: "", body: "bind failed", closed: true, seconds: 0)
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return Reply(status: 0, head: "", body: "connect failed", closed: true, seconds: 0) }
        func sendAll(_ data: Data) {
            var sent = 0
            data.withUnsafeBytes { buffer in
                while sent < buffer.count {
                    let n = send(fd, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                    if n <= 0 { break }
                    sent += n
                }
            }
        }
        sendAll(request)
        var pending = later
        var received = Data()
        var closed = false
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while Date().timeIntervalSince(started) < timeout {
            if let next = pending, Date().timeIntervalSince(started) >= next.after {
                sendAll(Data(next.request.utf8))
                pending = nil
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 100)
            if ready <= 0 { continue }
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 {
                closed = true
                break
            }
            received.append(contentsOf: chunk[0..<n])
            if let until, until(String(decoding: received, as: UTF8.self)) { break }
        }
        let text = String(decoding: received, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let head = parts.first ?? ""
        let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
        return Reply(status: status, head: head, body: parts.dropFirst().joined(separator: "\r\n\r\n"), closed: closed,
                     seconds: Date().timeIntervalSince(started))
    }
}
