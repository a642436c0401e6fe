#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A TCP proxy on 127.0.0.1 in front of another loopback port, which a test can cut (every
/// connection through it is closed, and new ones are closed as soon as they are accepted: the
/// server behind it is gone, as far as its clients can tell) and restore.
public final class TCPProxy: @unchecked Sendable {
    public let port: Int
    private let upstream: Int
    private let listener: Int32
    // Guarded by `lock`.
    fileprivate let lock = NSLock()
    fileprivate var connections: Set<Int32> = []
    private var cutOff = false

    public init(to upstream: Int) throws {
        self.upstream = upstream
        listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        guard let port = Loopback.bind(listener, port: 0), listen(listener, 64) == 0 else {
            close(listener)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "the proxy could not listen: errno \(errno)"])
        }
        self.port = port
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    /// Closes every connection through the proxy, and each new one as it comes.
    public func cut() {
        let open = lock.withLock {
            cutOff = true
            return connections
        }
        for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    /// Lets connections through again.
    public func restore() { lock.withLock { cutOff = false } }

    /// Stops listening (connections still open are cut).
    public func stop() {
        cut()
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            guard !lock.withLock({ cutOff }) else {
                close(client)
                continue
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard connectUpstream(server) else {
                close(client)
                close(server)
                continue
            }
            lock.withLock { connections.formUnion([client, server]) }
            let pair = Pair(client: client, server: server, proxy: self)
            Thread.detachNewThread { pair.pump(from: client, to: server) }
            Thread.detachNewThread { pair.pump(from: server, to: client) }
        }
    }

    /// One connection through the proxy: two pumps, one each way; the second to end closes both.
    private final class Pair: @unchecked Sendable {
        let client: Int32, server: Int32
        let proxy: TCPProxy
        private let lock = NSLock()
        private var ended = 0

        init(client: Int32, server: Int32, proxy: TCPProxy) {
            self.client = client
            self.server = server
            self.proxy = proxy
        }

        func pump(from: Int32, to: Int32) {
            var buffer = [UInt8](repeating: 0, count: 16_384)
            copying: while true {
                let count = read(from, &buffer, buffer.count)
                if count <= 0 { break }
                var offset = 0
                while offset < count {
                    let written = buffer.withUnsafeBytes { write(to, $0.baseAddress! + offset, count - offset) }
                    if written <= 0 { break copying }
                    offset += written
                }
            }
            shutdown(from, Int32(SHUT_RDWR))
            shutdown(to, Int32(SHUT_RDWR))
            let last = lock.withLock { () -> Bool in
                ended += 1
                return ended == 2
            }
            guard last else { return }
            proxy.lock.withLock { proxy.connections.subtract([client, server]) }
            close(client)
            close(server)
        }
    }

    private func connectUpstream(_ descriptor: Int32) -> Bool {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(upstream).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
