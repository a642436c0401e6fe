import Foundation
import Synchronization

/// The time data lives in. Live data runs on the server's clock; test data on the server's clock
/// plus the test clock's offset, which is kept in the store (`test_clock`), moved only by
/// `POST /v1/desk/clock/advance` on a server started with `--test-clock`, and read again
/// whenever another instance may have moved it.
final class DataClock: Sendable {
    /// The server's own clock (the system's, or a test's `ManualClock`).
    let server: any ServerClock
    /// Whether test-mode operator keys may move test time.
    let isAdjustable: Bool
    private let offset = Mutex<Int64>(0)

    init(server: any ServerClock, isAdjustable: Bool = false) {
        self.server = server
        self.isAdjustable = isAdjustable
    }

    /// Seconds test-mode time is ahead.
    var offsetSeconds: Int64 { offset.withLock { $0 } }

    /// The time of the data `scope` sees (live, or test).
    func now(_ scope: RequestScope) -> Date { now(livemode: scope.livemode) }

    func now(livemode: Bool) -> Date {
        livemode ? server.now() : server.now().addingTimeInterval(TimeInterval(offsetSeconds))
    }

    /// Reads the committed offset from the store (at start, after an advance, and on a shared
    /// store before test data is used).
    func reload(from store: Store) async throws {
        let committed = try await store.read { data in try await data.testClock.offset() }
        offset.withLock { $0 = committed }
    }
}
