#if canImport(Glibc)
import Glibc
#endif

/// Loopback sockets for tests that stand in for a server, or hold a port.
public enum Loopback {
    /// Binds `descriptor` to 127.0.0.1:`port` (or another loopback address `host`, such as
    /// 0x7F00_0002 for 127.0.0.2; port 0: a port the kernel picks) and returns the port it is
    /// bound to; nil when the bind fails (`errno` says why).
    public static func bind(_ descriptor: Int32, port: Int, host: UInt32 = 0x7F00_0001) -> Int? {
        guard (0...Int(UInt16.max)).contains(port) else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(host).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                Glibc.bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    /// A free loopback port below the kernel's ephemeral range (32768 and up on Linux): no server
    /// started on port 0 is ever given it, so once a test stops its server there, nothing else
    /// answers on it while the test expects the server to be down.
    public static func portOutsideTheEphemeralRange() -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: 20_000..<32_000)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            if bind(descriptor, port: port) != nil { return port }
        }
        return 0
    }
}
