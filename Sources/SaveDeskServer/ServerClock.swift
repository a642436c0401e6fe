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

/// The test clock: how far test-mode time is ahead of the server's clock. Kept in the database
/// (`test_clock`), moved only by `POST /v1/desk/clock/advance` on a server started with
/// `--test-clock`, and never applied to live data.
final class TestClock: Sendable {
    /// Whether test-mode operator keys may move it.
    let isAdjustable: Bool
    private let offset = Mutex<Int64>(0)

    init(isAdjustable: Bool) { self.isAdjustable = isAdjustable }

    /// Seconds test-mode time is ahead.
    var offsetSeconds: Int64 { offset.withLock { $0 } }

    /// Sets the offset read from the database (at start, and after a committed advance).
    func set(offsetSeconds: Int64) { offset.withLock { $0 = offsetSeconds } }
}
