import CoreMetrics

/// What the store reports about itself, through swift-metrics (the server passes its factory;
/// tools that open a store alone report nowhere): how long transactions take and how often one is
/// run again (PostgreSQL retries a transaction that lost a race), and how long a read waits for a
/// reader connection and a change for the writer (SQLite's gate, PostgreSQL's pool and the
/// customer's lock).
struct StoreMetrics: Sendable {
    let transactionDuration: CoreMetrics.Timer
    let transactionRetries: Counter
    let readerWait: CoreMetrics.Timer
    let writerWait: CoreMetrics.Timer

    init(factory: any MetricsFactory) {
        transactionDuration = CoreMetrics.Timer(label: "savedesk_store_transaction_duration_seconds", factory: factory)
        transactionRetries = Counter(label: "savedesk_store_transaction_retries_total", factory: factory)
        readerWait = CoreMetrics.Timer(label: "savedesk_store_pool_wait_seconds", dimensions: [("pool", "reader")], factory: factory)
        writerWait = CoreMetrics.Timer(label: "savedesk_store_pool_wait_seconds", dimensions: [("pool", "writer")], factory: factory)
    }

    /// Reports nothing.
    static let none = StoreMetrics(factory: NOOPMetricsHandler.instance)
}
