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

/// A clock the test clock endpoint may move forward (test and demo servers only).
public protocol AdjustableClock: ServerClock {
    func advance(by interval: TimeInterval)
}

/// The system time plus an offset that only grows: a demo server's clock.
public final class OffsetClock: AdjustableClock {
    private let offset = Mutex<TimeInterval>(0)

    public init() {}

    public func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    public func advance(by interval: TimeInterval) { offset.withLock { $0 += interval } }
}

/// A clock that only moves when told to.
public final class ManualClock: AdjustableClock {
    private let current: Mutex<Date>

    public init(_ start: Date) { current = Mutex(start) }

    public func now() -> Date { current.withLock { $0 } }

    public func advance(by interval: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(interval) }
    }

    public func set(_ date: Date) { current.withLock { $0 = date } }
}
