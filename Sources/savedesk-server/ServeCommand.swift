import ArgumentParser
import Foundation
import Logging
import SaveDeskServer

/// `savedesk serve`: the backend on loopback (unless told otherwise), until SIGINT or SIGTERM.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the SaveDesk backend (IAP and Desk APIs, customer portal)."
    )

    @Option(help: "The TOML config file.") var config: String
    @Option(help: "The database: a SQLite file (created if missing), or postgres://user[:password]@host[:port]/database for several instances on one database.")
    var db: String
    @Option(help: "Where the server keeps its files (the local StoreKit CA). Default: the SQLite file's folder, or ./savedesk-data on PostgreSQL.")
    var dataDir: String?
    @Option(help: "The address to bind. Loopback unless you mean otherwise.") var host = "127.0.0.1"
    @Option(help: "The port to listen on.") var port = 8080
    @Option(help: "A seed file applied when the database has no customers yet.") var seed: String?
    @Option(help: "Log level: trace, debug, info, notice, warning, error.") var logLevel: Logger.Level = .info
    @Option(help: "Log lines as text, or as one JSON object a line (json): level, time, request_id, operation, status, latency_ms, actor.")
    var logFormat: ServerLogging.Format = .text
    @Option(help: "Serve Prometheus metrics at http://HOST:PORT/metrics (overrides [metrics] listen; port 0: any free port).")
    var metricsListen: String?
    @Option(help: "After SIGTERM, seconds to answer not ready on /readyz before no longer taking requests (overrides [server] drain_delay_seconds).")
    var drainDelay: Int?
    @Flag(help: "Let test-mode operator keys move test-mode time forward (demos and QA; refused next to live keys).") var testClock = false

    func run() async throws {
        ServerLogging.bootstrap(level: logLevel, format: logFormat)
        let logger = Logger(label: "savedesk.server")
        let serverConfig: ServerConfig
        do {
            serverConfig = try ConfigReader.load(file: config)
        } catch {
            FileHandleOutput.standardError("\(error)\nThe server did not start.\n")
            throw ExitCode(2)
        }
        if let seed {
            let added = try await DemoSeed.apply(file: seed, config: serverConfig, databasePath: db)
            logger.info("seed applied", metadata: ["customers_added": "\(added)"])
        }
        var metrics: ServerConfig.MetricsSettings?
        if let metricsListen {
            guard let settings = ConfigReader.metricsAddress(metricsListen) else {
                FileHandleOutput.standardError("--metrics-listen must be HOST:PORT, got \"\(metricsListen)\"\nThe server did not start.\n")
                throw ExitCode(2)
            }
            metrics = settings
        }
        if let drainDelay, !(0...300).contains(drainDelay) {
            FileHandleOutput.standardError("--drain-delay must be 0 to 300 seconds\nThe server did not start.\n")
            throw ExitCode(2)
        }
        let problems = serverConfig.deploymentIssues(testClock: testClock)
        guard problems.isEmpty else {
            FileHandleOutput.standardError("\(InvalidConfig(file: config, issues: problems))\nThe server did not start.\n")
            throw ExitCode(2)
        }
        try await SaveDeskBackend.run(
            config: serverConfig, databasePath: db, host: host, port: port, options: .init(testClock: testClock, dataDirectory: dataDir, drainDelay: drainDelay.map { .seconds($0) }, metrics: metrics),
            logger: logger
        )
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension ServerLogging.Format: ExpressibleByArgument {}

enum FileHandleOutput {
    static func standardError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
