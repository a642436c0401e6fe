import ArgumentParser
import Foundation
import Logging
import SaveDeskServer

/// `savedesk-server demo-server`: the demo's backend, as `savedesk demo` starts it. The demo config
/// and customers (plus about 90 days of history on a fresh database) in `--data-dir`, on
/// 127.0.0.1 and an ephemeral port; the address is the first line on stdout. It stops when its
/// stdin closes: the console quit, or died.
struct DemoServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-server", abstract: "The demo's backend (savedesk demo starts it).", shouldDisplay: false
    )

    @Option(help: "The demo server's folder (its database).") var dataDir: String

    func run() async throws {
        ServerLogging.bootstrap(level: .info)
        let logger = Logger(label: "savedesk.demo")
        guard let configPath = DemoSeed.demoConfigPath, let seedPath = DemoSeed.demoSeedPath else {
            FileHandle.standardError.write(Data("error: the demo files are missing from this build\n".utf8))
            throw ExitCode.failure
        }
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let config = try ConfigReader.load(file: configPath)
        let database = URL(fileURLWithPath: dataDir).appendingPathComponent("savedesk.sqlite").path
        // A fresh demo starts with its customers and about 90 days of generated history.
        if try await DemoSeed.apply(file: seedPath, config: config, databasePath: database) > 0 {
            _ = try await DemoHistory.apply(config: config, databasePath: database)
        }
        let server = try await SaveDeskBackend.start(config: config, databasePath: database, host: "127.0.0.1", port: 0, logger: logger)
        logger.info("demo server started", metadata: ["address": "\(server.baseURL)", "data": "\(dataDir)"])
        FileHandle.standardOutput.write(Data((server.baseURL + "\n").utf8))
        await Self.untilStandardInputCloses()
        await server.stop()
    }

    /// Returns when stdin reaches its end (the parent closed the pipe, or exited).
    static func untilStandardInputCloses() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                var byte: UInt8 = 0
                while read(STDIN_FILENO, &byte, 1) > 0 {}
                done.resume()
            }
        }
    }
}
