import Foundation

/// Runs `body`; if it has not finished after `after`, prints a line naming it (and again every
/// `after`), so a run that stalls says where. It never fails or cancels anything: a busy machine
/// may be slow, and a figure is not a test.
public func warningIfSlow<T>(_ label: String, after: Duration = .seconds(60), _ body: () async throws -> T) async rethrows -> T {
    let watcher = Task.detached {
        var waited = Duration.zero
        while !Task.isCancelled {
            try? await Task.sleep(for: after)
            if Task.isCancelled { return }
            waited += after
            print("slow step: \(label) has not finished after \(waited)")
        }
    }
    defer { watcher.cancel() }
    return try await body()
}

/// How long a test waits for an answer from a server on loopback before taking it for a hang. A
/// guard, not a figure: hundreds of tests in parallel on two cores (and on PostgreSQL) can keep a
/// request waiting for many seconds, and a shorter bound failed a run that was only busy.
public let answerPatience: Duration = .seconds(120)
