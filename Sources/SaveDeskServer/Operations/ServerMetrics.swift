import CoreMetrics
import Foundation
import Prometheus
import Synchronization

/// The server's metrics, through swift-metrics on a Prometheus registry of this server's own (two
/// servers in one process, as in the tests, never share figures). Served in Prometheus' text
/// format by the metrics listener (`[metrics] listen`), never on the public port.
///
/// Labels are bounded: an operation is an operationId or a route's name, never a path; a code is
/// one of the envelope's codes.
final class ServerMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory

    init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
            .seconds(5), .seconds(10),
        ]
        self.factory = factory
        store = StoreMetrics(factory: factory)
    }

    /// The store's transaction times, retries and pool waits.
    let store: StoreMetrics

    /// The exposition text (`GET /metrics` on the metrics listener).
    func exposition() -> String { registry.emitToString() }

    // MARK: Requests

    /// One answered request: `savedesk_http_requests_total{operation,status}` and
    /// `savedesk_http_request_duration_seconds{operation}`; an error's code also counts in
    /// `savedesk_http_refusals_total{operation,code}`.
    func request(operation: String, status: Int, code: String?, duration: Duration) {
        let key = RequestLabels(operation: operation, status: status, code: code)
        let handles = requestHandles.withLock { $0[key] } ?? makeRequestHandles(key)
        handles.requests.increment()
        handles.duration.recordNanoseconds(Self.nanoseconds(duration))
        handles.refusals?.increment()
    }

    /// One request's labels (bounded: see above).
    private struct RequestLabels: Hashable {
        var operation: String
        var status: Int
        var code: String?
    }

    /// The metrics one kind of request counts in, made once: making them asks the registry
    /// (a lock, a dictionary of its own and label arrays) each time.
    private struct RequestHandles: @unchecked Sendable {
        let requests: CoreMetrics.Counter
        let duration: CoreMetrics.Timer
        let refusals: CoreMetrics.Counter?
    }

    private let requestHandles = Mutex<[RequestLabels: RequestHandles]>([:])

    private func makeRequestHandles(_ labels: RequestLabels) -> RequestHandles {
        let handles = RequestHandles(
            requests: CoreMetrics.Counter(label: "savedesk_http_requests_total", dimensions: [("operation", labels.operation), ("status", String(labels.status))],
                              factory: factory),
            duration: CoreMetrics.Timer(label: "savedesk_http_request_duration_seconds", dimensions: [("operation", labels.operation)], factory: factory),
            refusals: labels.code.map {
                CoreMetrics.Counter(label: "savedesk_http_refusals_total", dimensions: [("operation", labels.operation), ("code", $0)], factory: factory)
            }
        )
        requestHandles.withLock { $0[labels] = handles }
        return handles
    }

    /// A request the rate limits refused (`savedesk_rate_limit_refusals_total{payer,budget}`):
    /// payer "address" or "key", budget "requests" or "bytes".
    func rateLimited(payer: String, budget: String) {
        Counter(label: "savedesk_rate_limit_refusals_total", dimensions: [("payer", payer), ("budget", budget)], factory: factory).increment()
    }

    /// A new customer refused (`savedesk_new_customer_refusals_total{reason}`): address, key or
    /// daily_cap.
    func newCustomerRefused(reason: String) {
        Counter(label: "savedesk_new_customer_refusals_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    /// A customer made by an app call (`savedesk_new_customers_total{mode}`).
    func newCustomer(livemode: Bool) {
        Counter(label: "savedesk_new_customers_total", dimensions: [("mode", livemode ? "live" : "test")], factory: factory).increment()
    }

    // MARK: App Store

    /// An App Store notification: verified with its outcome (applied, duplicate, unchanged, stale,
    /// unmatched), or refused with the code it was refused with.
    func appStoreNotification(verified: Bool, outcome: String) {
        Counter(label: "savedesk_app_store_notifications_total", dimensions: [("result", verified ? "verified" : "refused"), ("outcome", outcome)],
                factory: factory).increment()
    }

    /// A real-time retention request from Apple's cancel page: answered with its kind (message,
    /// alternate_product, promotional_offer, holdout, none, fallback, repeat) or refused with its
    /// code; and how long the answer took.
    func retentionRequest(outcome: String, seconds: Double?) {
        Counter(label: "savedesk_retention_requests_total", dimensions: [("outcome", outcome)], factory: factory).increment()
        if let seconds {
            CoreMetrics.Timer(label: "savedesk_retention_answer_seconds", factory: factory)
                .recordNanoseconds(Int64(seconds * 1_000_000_000))
        }
    }

    // MARK: Event stream

    /// The desk's event streams open on this instance (`savedesk_event_subscribers`).
    func eventSubscribers(_ count: Int) {
        Gauge(label: "savedesk_event_subscribers", factory: factory).record(count)
    }

    /// Events read from the log and handed to this instance's subscribers (`savedesk_events_read_total`).
    func eventsRead(_ count: Int) {
        Counter(label: "savedesk_events_read_total", factory: factory).increment(by: count)
    }

    /// A subscriber disconnected because its queue was full (`savedesk_event_subscribers_cut_total`).
    func eventSubscriberCut() {
        Counter(label: "savedesk_event_subscribers_cut_total", factory: factory).increment()
    }

    // MARK: Jobs

    /// The age of the oldest cancel-flow response not folded into the rollups yet (0: none
    /// waiting), and how many wait, per mode.
    func foldBacklog(livemode: Bool, oldestAge: Int64, waiting: Int) {
        let mode = [("mode", livemode ? "live" : "test")]
        Gauge(label: "savedesk_cancel_flow_fold_lag_seconds", dimensions: mode, factory: factory).record(max(0, oldestAge))
        Gauge(label: "savedesk_cancel_flow_unfolded", dimensions: mode, factory: factory).record(waiting)
    }

    /// Rows the purge removed (`savedesk_purged_rows_total{what}`).
    func purged(_ rows: Int, what: String) {
        Counter(label: "savedesk_purged_rows_total", dimensions: [("what", what)], factory: factory).increment(by: rows)
    }

    /// A periodic job's run that failed (`savedesk_job_failures_total{job}`).
    func jobFailed(_ name: String) {
        Counter(label: "savedesk_job_failures_total", dimensions: [("job", name)], factory: factory).increment()
    }

    /// 1 while the server drains (after SIGTERM, before it stops), else 0.
    func draining(_ on: Bool) {
        Gauge(label: "savedesk_draining", factory: factory).record(on ? 1 : 0)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
