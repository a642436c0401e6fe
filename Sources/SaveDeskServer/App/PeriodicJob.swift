import Logging
import ServiceLifecycle

/// A job the server runs every `interval` inside its service lifecycle (the purge, the fold of
/// cancel-flow responses into the rollups), until the app shuts down. A run that fails is logged
/// and tried again at the next interval.
struct PeriodicJob: Service {
    let name: String
    let interval: Duration
    let logger: Logger
    let work: @Sendable () async throws -> Void

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                while true {
                    do {
                        try await work()
                    } catch is CancellationError {
                        return
                    } catch {
                        logger.warning("\(name) failed; it runs again later", metadata: ["error": "\(error)"])
                    }
                    try await Task.sleep(for: interval)
                }
            }
        } catch is CancellationError {
            return
        }
    }
}
