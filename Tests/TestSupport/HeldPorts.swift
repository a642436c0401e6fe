import SaveDeskServer
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The loopback ports of stopped test servers, kept bound (not listening) for the rest of the
/// test process: a call to one is refused at once, as by a server that is down, and no server of
/// another test running meanwhile can be given the port (the kernel never hands out a bound port
/// for port 0). Without this, a console that queued calls for a stopped server could deliver them
/// to another test's server, which has the same demo key, when that server happened to get the
/// freed port.
public enum HeldPorts {
    private static let held = Mutex<[Int: Int32]>([:])

    /// Binds 127.0.0.1:`port` and keeps it. SO_REUSEADDR lets the bind go through while the
    /// stopped server's closed connections are in TIME_WAIT, and lets the test start its server
    /// again on the port (`release` first is tidier). Best effort: a port already taken stays as
    /// it is.
    public static func hold(_ port: Int) {
        guard port > 0, port <= Int(UInt16.max) else { return }
        held.withLock { held in
            guard held[port] == nil else { return }
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { return }
            var one: Int32 = 1
            setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
            if Loopback.bind(descriptor, port: port) != nil { held[port] = descriptor } else { close(descriptor) }
        }
    }

    /// A loopback port bound now and held, never listening: a server that is down, with no
    /// moment in which another test's server could be given the port (stopping a server and then
    /// holding its port leaves one).
    public static func holdFreshPort() -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0, let port = Loopback.bind(descriptor, port: 0) else {
            if descriptor >= 0 { close(descriptor) }
            return 0
        }
        held.withLock { $0[port] = descriptor }
        return port
    }

    /// Lets the port go (the test starts its server on it again).
    public static func release(_ port: Int) {
        held.withLock { held in
            if let descriptor = held.removeValue(forKey: port) { close(descriptor) }
        }
    }

    /// Whether the port is held (for the helper's own test).
    public static func isHeld(_ port: Int) -> Bool { held.withLock { $0[port] != nil } }
}

extension SaveDeskBackend.Running {
    /// Stops the server and holds its port (see `HeldPorts`): what a test that stands for a
    /// server that is down, or restarts it on the same port, uses.
    ///
    /// The listener closes first and the rest of the stop (draining, closing the store: seconds on
    /// PostgreSQL) comes after it, so the port is held as soon as it is free, while the stop goes
    /// on: held only after the whole stop, another test's server was once given it meanwhile.
    public func stopAndHoldPort() async {
        let stopped = Atomic<Bool>(false)
        async let stopping: Void = warningIfSlow("stopping the server on port \(port)") {
            await stop()
            stopped.store(true, ordering: .releasing)
        }
        while !HeldPorts.isHeld(port) {
            let done = stopped.load(ordering: .acquiring)
            HeldPorts.hold(port)
            if done { break }
            try? await Task.sleep(for: .milliseconds(1))
        }
        await stopping
    }
}
