import Foundation
import SaveDeskAPI
import Synchronization

/// The periodic jobs as readiness sees them: each job says when its loop starts and ends and when
/// each run starts and ends. A job is running while its loop is alive and no run of it has lasted
/// longer than `stuckAfter(interval)`.
final class JobBoard: Sendable {
    struct Job: Sendable {
        var interval: Duration
        var alive = true
        var runningSince: ContinuousClock.Instant?
    }

    private let jobs = Mutex<[String: Job]>([:])

    func started(_ name: String, interval: Duration) { jobs.withLock { $0[name] = Job(interval: interval) } }
    func ended(_ name: String) { jobs.withLock { $0[name]?.alive = false } }
    func runStarted(_ name: String) { jobs.withLock { $0[name]?.runningSince = .now } }
    func runEnded(_ name: String) { jobs.withLock { $0[name]?.runningSince = nil } }

    /// How long one run may take before the job counts as stuck: ten intervals, at least a minute.
    static func stuckAfter(_ interval: Duration) -> Duration { max(interval * 10, .seconds(60)) }

    /// The jobs that are not running (stopped, or stuck in a run), by name; `expected` are the
    /// jobs the server starts (one that never started counts as stopped).
    func notRunning(expected: [String], now: ContinuousClock.Instant = .now) -> [String] {
        let jobs = jobs.withLock { $0 }
        return expected.filter { name in
            guard let job = jobs[name], job.alive else { return true }
            return job.runningSince.map { now - $0 > Self.stuckAfter(job.interval) } ?? false
        }.sorted()
    }
}

/// Whether this instance should be sent traffic (`GET /readyz`): its store answers a read within
/// `storeTimeout`, the store's migrations are all applied, its background jobs are running, and
/// it is not draining. Each check answers in a fixed phrase: nothing about the database's
/// address, its errors or the data is said.
final class Readiness: Sendable {
    let store: Store
    let jobs: JobBoard
    let expectedJobs: [String]
    let metrics: ServerMetrics
    private let isDraining = Atomic<Bool>(false)

    /// How long the store has to answer the readiness read.
    static let storeTimeout: Duration = .seconds(2)

    init(store: Store, jobs: JobBoard, expectedJobs: [String], metrics: ServerMetrics) {
        self.store = store
        self.jobs = jobs
        self.expectedJobs = expectedJobs
        self.metrics = metrics
        metrics.draining(false)
    }

    /// From now on the instance answers not ready (SIGTERM: the balancer stops sending it work).
    func startDraining() {
        isDraining.store(true, ordering: .sequentiallyConsistent)
        metrics.draining(true)
    }

    var draining: Bool { isDraining.load(ordering: .sequentiallyConsistent) }

    /// The checks, in order, and whether all passed.
    func check() async -> (ready: Bool, checks: [(name: String, result: String)]) {
        var checks: [(name: String, result: String)] = []
        switch await storeAnswer() {
        case .none:
            checks.append(("store", "unavailable"))
            checks.append(("migrations", "unknown"))
        case .some(let applied):
            checks.append(("store", "ok"))
            let missing = store.knownMigrations.subtracting(applied)
            checks.append(("migrations", missing.isEmpty ? "ok" : "\(missing.count) not applied"))
        }
        let stopped = jobs.notRunning(expected: expectedJobs)
        checks.append(("jobs", stopped.isEmpty ? "ok" : "not running: \(stopped.joined(separator: ", "))"))
        checks.append(("draining", draining ? "yes" : "no"))
        let ready = checks.allSatisfy { $0.result == "ok" || ($0.name == "draining" && $0.result == "no") }
        return (ready, checks)
    }

    /// The applied migrations, if the store answered in time. The read is not waited for past
    /// the bound (a pool waiting for a database that is gone may not notice cancellation at once).
    private func storeAnswer() async -> Set<Int>? {
        let store = self.store
        let read = Task { try await store.appliedMigrations() }
        guard case .success(let applied)? = await Deadline.value(of: read, within: Self.storeTimeout) else {
            read.cancel()
            return nil
        }
        return applied
    }
}
