import Logging
import ServiceLifecycle

/// The first thing a graceful shutdown (SIGTERM, SIGINT) reaches: readiness turns to "not ready"
/// and, for `delay`, everything else goes on answering, so a load balancer that probes `/readyz`
/// stops sending requests here before the server stops taking them. Then the HTTP server stops
/// accepting connections and finishes the requests in flight, the jobs stop, the store closes.
struct DrainGate: Service {
    let readiness: Readiness
    let delay: Duration
    let logger: Logger
    /// What else turns when draining starts (the event streams end, so their clients reconnect to
    /// an instance that stays).
    var onDrain: @Sendable () -> Void = {}

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            return  // cancelled: no drain
        }
        readiness.startDraining()
        onDrain()
        logger.notice("draining: /readyz answers not ready; the server stops taking requests after the drain delay",
                      metadata: ["drain_delay_seconds": "\(delay.components.seconds)"])
        if delay > .zero { try? await Task.sleep(for: delay) }
        logger.notice("stopping: finishing the requests in flight")
    }
}
