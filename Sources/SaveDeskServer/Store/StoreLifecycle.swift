import ServiceLifecycle

/// The store as a service of the app's lifecycle: opened before the app is built, and closed
/// when the app shuts down, after the services started after it (the purge job, the HTTP server
/// and its requests in flight) have stopped.
struct StoreLifecycle: Service {
    let store: Store
    /// What still has to be written before the store closes (the requests Apple's cancel page
    /// answered and the recorder holds).
    var beforeClose: @Sendable () async -> Void = {}

    func run() async throws {
        // Until the app shuts down (gracefully, or cancelled): then close.
        try? await gracefulShutdown()
        await beforeClose()
        await store.close()
    }
}
