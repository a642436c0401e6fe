import Foundation
import Synchronization

/// Where the server reads the time. Production uses the system clock; tests and demos use a
/// `ManualClock` that the Desk API's test clock can advance.
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
