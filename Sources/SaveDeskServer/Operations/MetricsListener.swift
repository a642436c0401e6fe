import Hummingbird
import Logging
import NIOCore

/// The metrics listener (`[metrics] listen`): `GET /metrics` in Prometheus' text exposition
/// format, on an address of its own, so the public port never shows them.
enum MetricsListener {
    static func application(
        settings: ServerConfig.MetricsSettings, metrics: ServerMetrics, logger: Logger, onRunning: @escaping @Sendable (Int) async -> Void
    ) -> some ApplicationProtocol {
        let router = Router()
        router.get("/metrics") { _, _ -> Response in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition()))
            )
        }
        return Application(
            router: router, configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "SaveDesk metrics"),
            onServerRunning: { channel in await onRunning(channel.localAddress?.port ?? settings.port) },
            logger: logger
        )
    }
}
