import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// The outermost middleware: every request gets its `RequestTrace` (its id, in the answer's
/// `X-Request-Id` and in every log line written while it runs), and once answered one log line
/// (`request`: method, operation, status, latency, actor, mode, the error's code) and its metrics.
/// Successful probes (`/healthz`, `/readyz`) log at debug, not to drown the rest.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let logger: Logger
    let metrics: ServerMetrics

    static func isProbe(_ operation: String) -> Bool { operation == "getHealth" || operation == "getReadiness" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let trace = RequestTrace()
        let started = ContinuousClock.now
        do {
            var response = try await RequestTrace.$running.withValue(trace) { try await next(request, context) }
            if !response.headers.contains(APIMiddleware.requestIdHeader) { response.headers[APIMiddleware.requestIdHeader] = trace.id }
            record(request, status: Int(response.status.code), trace: trace, since: started)
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            record(request, status: Int(status), trace: trace, since: started)
            throw error
        }
    }

    func record(_ request: Request, status: Int, trace: RequestTrace, since started: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - started
        let facts = trace.current
        let operation = facts.operation ?? "none"
        let code = status >= 400 ? (facts.code ?? "http_\(status)") : nil
        metrics.request(operation: operation, status: status, code: code, duration: elapsed)
        let level: Logger.Level = status < 400 && Self.isProbe(operation) ? .debug : .info
        // The line is made only when it will be written.
        guard logger.logLevel <= level else { return }
        var metadata: Logger.Metadata = [
            "request_id": .string(trace.id), "method": .string(request.method.rawValue), "operation": .string(operation),
            "status": .stringConvertible(status), "latency_ms": .string(Self.milliseconds(elapsed)),
        ]
        if let actor = facts.actor { metadata["actor"] = .string(actor) }
        if let livemode = facts.livemode { metadata["mode"] = .string(livemode ? "live" : "test") }
        if let code { metadata["code"] = .string(code) }
        logger.log(level: level, "request", metadata: metadata)
    }

    /// Milliseconds with three decimals.
    static func milliseconds(_ duration: Duration) -> String {
        let micros = ServerMetrics.nanoseconds(duration) / 1_000
        let fraction = String(micros % 1_000)
        return "\(micros / 1_000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
