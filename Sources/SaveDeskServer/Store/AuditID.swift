import Foundation
import Synchronization

/// Audit event ids that sort in the order the events were written, so a timeline of events
/// within the same second (or under a stopped test clock) reads in order: wall-clock
/// nanoseconds, forced to increase within the process, zero-padded.
enum AuditID {
    private static let last = Mutex<UInt64>(0)

    static func next() -> String {
        let wall = UInt64(max(0, Date().timeIntervalSince1970 * 1_000_000_000))
        let value = last.withLock { last in
            last = max(last + 1, wall)
            return last
        }
        // Twenty digits, zero-padded (what `%020llu` wrote; without Foundation's formatter,
        // which was a hundredth of the writer's time).
        let digits = String(value)
        return "ev_" + String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }
}
