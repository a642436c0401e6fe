import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Testing
import TestSupport

@testable import SaveDeskServer

/// Decodes as the SDK does (convertFromSnakeCase, `.iso8601` dates as iOS reads them: no
/// fractional seconds), and first refuses what the SDK would silently mangle: a camelCase key
/// (outside the objects used as maps, whose keys are data).
enum SDKDecoder {
    static let mapKeys: Set<String> = ["jurisdictions", "per_product_prompts", "metadata"]

    struct Refused: Error, CustomStringConvertible { var description: String }

    static func decode<T: Decodable>(_ type: T.Type, _ data: Data, context: String) throws -> T {
        let json = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        try checkKeys(json, path: context)
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            // YYYY-MM-DDTHH:MM:SS then Z or ±HH:MM: nothing else (iOS refuses fractions).
            let pattern = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$"#
            guard text.range(of: pattern, options: .regularExpression) != nil, let date = ISO8601DateFormatter().date(from: text) else {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a strict ISO-8601 date: \(text)"))
            }
            return date
        }
        do {
            return try decoder.decode(T.self, from: data)
        } catch {
            throw Refused(description: "\(context): \(T.self) does not decode: \(error)\n\(String(decoding: data.prefix(2_000), as: UTF8.self))")
        }
    }

    static func checkKeys(_ value: Any, path: String, isMap: Bool = false) throws {
        if let object = value as? [String: Any] {
            for (key, child) in object {
                if !isMap, key.contains(where: \.isUppercase) {
                    throw Refused(description: "\(path): the key \"\(key)\" is not snake_case")
                }
                try checkKeys(child, path: "\(path).\(key)", isMap: !isMap && mapKeys.contains(key))
            }
        } else if let array = value as? [Any] {
            for (index, child) in array.enumerated() { try checkKeys(child, path: "\(path)[\(index)]") }
        }
    }
}

/// A SaveDesk server as an app built on the SDK sees it: the demo config and customers, a
/// publishable key in the SDK's own format, paths with the trailing slash the SDK sends.
struct SDKApp {
    static let key = "zs_pk_test_savedesk_contract_0001"
    static let operatorKey = "sk_test_savedesk_demo_marco_0001"
    static let start = Date(timeIntervalSince1970: 1_795_348_800)  // 2026-11-22T12:00:00Z

    let running: SaveDeskBackend.Running
    let directory: URL
    let clock: ManualClock

    static func start() async throws -> SDKApp {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-sdk-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var config = try ConfigReader.load(file: try #require(DemoSeed.demoConfigPath))
        config.apiKeys.append(try #require(APIKey(key: key)))
        let clock = ManualClock(start)
        // SQLite, or the run's PostgreSQL cluster (`make test`'s second pass).
        let database = try await TestDatabase.prepare(in: directory)
        _ = try await DemoSeed.apply(file: try #require(DemoSeed.demoSeedPath), config: config, databasePath: database, now: start)
        let running = try await SaveDeskBackend.start(
            config: config, databasePath: database, clock: clock, options: .init(testClock: true, dataDirectory: directory.path),
            logger: Logger(label: "sdk") { _ in SwiftLogNoOpLogHandler() }
        )
        return SDKApp(running: running, directory: directory, clock: clock)
    }

    func stop() async { await running.stop() }

    struct Reply {
        var status: Int
        var body: Data
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// A request as the SDK sends it: its key header, its version header, JSON only with a body.
    func call(_ method: HTTPMethod, _ path: String, body: String? = nil, key: String = SDKApp.key) async throws -> Reply {
        var request = HTTPClientRequest(url: running.baseURL + path)
        request.method = method
        request.headers.add(name: "X-ZeroSettle-Key", value: key)
        request.headers.add(name: "X-ZS-SDK-Version", value: "1.5.0")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: TimeAmount(answerPatience))
        return Reply(status: Int(response.status.code), body: Data(buffer: try await response.body.collect(upTo: 8 << 20)))
    }

    /// Calls and decodes a 2xx answer with the SDK's model; anything else is a test failure.
    func decoded<T: Decodable>(
        _ type: T.Type, _ method: HTTPMethod, _ path: String, body: String? = nil, key: String = SDKApp.key,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> T {
        let reply = try await call(method, path, body: body, key: key)
        #expect((200..<300).contains(reply.status), "\(method) \(path): \(reply.status) \(reply.text)", sourceLocation: sourceLocation)
        return try SDKDecoder.decode(T.self, reply.body, context: "\(method) \(path)")
    }
}
