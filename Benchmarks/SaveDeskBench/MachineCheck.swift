import Foundation

/// A few fixed pieces of work timed on this machine before the first row and after the last: a
/// sort (the cores), a pass over memory larger than any cache, and small writes each made durable
/// with fsync (the disk). Not a goal: on a shared machine the same code measured a third slower on
/// one day than the day before, on the rows that lean on memory and fsync, and only the GET row has
/// an anchor in the run to correct for that. These figures, compared between runs and days, tell a
/// reader whether a row that moved is the code or the machine.
enum MachineCheck {
    /// Each piece of work timed this many times; the median is reported.
    static let repeats = 5

    static func report(directory: URL, when: String) -> String {
        let sort = median { sortMilliseconds() }
        let memory = median { memoryMilliseconds() }
        let (fsyncMedian, fsyncP99) = fsyncMilliseconds(directory: directory)
        return String(format: "machine check %@ (fixed work, to compare runs and days; not a goal): sort of 1M integers %.1f ms, "
                      + "one pass over 256 MB %.1f ms (medians of %d), 4 KB write + fsync median %.2f ms, p99 %.2f ms",
                      when, sort, memory, repeats, fsyncMedian, fsyncP99)
    }

    private static func median(_ measure: () -> Double) -> Double {
        (0..<repeats).map { _ in measure() }.sorted()[repeats / 2]
    }

    /// Sorting the same million pseudo-random integers (a fixed seed).
    private static func sortMilliseconds() -> Double {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var values = (0..<1_000_000).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 11
        }
        let elapsed = ContinuousClock().measure { values.sort() }
        precondition(values.first! <= values.last!)
        return EventsBench.milliseconds(elapsed)
    }

    /// Reading one byte of each 64-byte line of a 256 MB buffer, written beforehand.
    private static func memoryMilliseconds() -> Double {
        let count = 256 << 20
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 64)
        defer { buffer.deallocate() }
        for index in stride(from: 0, to: count, by: 4096) { buffer[index] = UInt8(truncatingIfNeeded: index >> 12) }
        var sum = 0
        let elapsed = ContinuousClock().measure {
            for index in stride(from: 0, to: count, by: 64) { sum &+= Int(buffer[index]) }
        }
        precondition(sum >= 0)
        return EventsBench.milliseconds(elapsed)
    }

    /// 200 writes of 4 KB to one file in the bench's folder, each followed by fsync: the median
    /// and p99 of one write and its fsync.
    private static func fsyncMilliseconds(directory: URL) -> (Double, Double) {
        let path = directory.appendingPathComponent("machine-check").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { return (.nan, .nan) }
        defer {
            close(descriptor)
            unlink(path)
        }
        let block = [UInt8](repeating: 0x5A, count: 4096)
        var times: [Double] = []
        for _ in 0..<200 {
            let elapsed = ContinuousClock().measure {
                _ = block.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                fsync(descriptor)
            }
            times.append(EventsBench.milliseconds(elapsed))
        }
        times.sort()
        return (times[times.count / 2], times[Int(Double(times.count) * 0.99) - 1])
    }
}
