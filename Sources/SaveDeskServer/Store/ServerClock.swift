import Foundation
import Synchronization

/// Where the server reads the time. Production uses the system clock; tests use a `ManualClock`.
/// Test-mode data runs on this clock plus the test clock's offset (`TestClock`); live data always
/// runs on this clock alone.
public protocol ServerClock: Sendable {
    func now() -> Date
}

public struct SystemClock: ServerClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to.
public final class ManualClock: ServerClock {
    private let current: Mutex<Date>

    public init(_ start: Date) { current = Mutex(start) }

    public func now() -> Date { current.withLock { $0 } }

    public func advance(by interval: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(interval) }
    }

    public func set(_ date: Date) { current.withLock { $0 = date } }
}
