import Logging
import ServiceLifecycle

/// A job the server runs every `interval` inside its service lifecycle (the purge, the fold of
/// cancel-flow responses into the rollups), until the app shuts down. A run that fails is logged,
/// counted, and tried again at the next interval. Each run is reported to the `JobBoard` that
/// readiness reads.
struct PeriodicJob: Service {
    let name: String
    let interval: Duration
    let logger: Logger
    var board: JobBoard? = nil
    var metrics: ServerMetrics? = nil
    let work: @Sendable () async throws -> Void

    func run() async throws {
        board?.started(name, interval: interval)
        defer { board?.ended(name) }
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    board?.runStarted(name)
                    do {
                        try await work()
                    } catch is CancellationError {
                        return
                    } catch {
                        metrics?.jobFailed(name)
                        logger.warning("\(name) failed; it runs again later", metadata: ["error": "\(error)"])
                    }
                    board?.runEnded(name)
                    try await Task.sleep(for: interval)
                }
            }
        } catch is CancellationError {
            return
        }
    }
}
