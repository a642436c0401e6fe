import AsyncHTTPClient
import NIOCore
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import RetentionDomain
import SaveDeskAPI
import Synchronization

/// The client of a SaveDesk server: the generated OpenAPI client behind the primitives the seeds
/// name. Calls time out; a GET, or a POST carrying an Idempotency-Key (which this client
/// generates), is tried once more when the server cannot be reached or answers 5xx; a 409 with
/// `retry_after` is honoured once.
public final class SaveDeskClient: Sendable {
    public let serverURL: URL
    let api: Client
    /// Where fire-and-forget calls wait until the server has them.
    public let outbox: Outbox?
    /// Whether the last call got an answer, and who wants to know when that changes.
    private let reachability = Mutex(Reachability())

    /// A struct, not a tuple: a closure in a tuple kept in a `Mutex` is wrapped in one more thunk
    /// each time `withLock` hands it out, and the wrapping stays stored (see `Store.CommitHook`).
    private struct Reachability {
        var reachable: Bool?
        var handler: (@Sendable (Bool) -> Void)?
    }

    /// Calls `handler` whenever calls start or stop getting answers (any call: a search, a
    /// delivery…), so a console can show the connection as it is.
    public func onReachabilityChange(_ handler: @escaping @Sendable (Bool) -> Void) {
        reachability.withLock { $0.handler = handler }
    }

    private func noteReachable(_ reachable: Bool) {
        let handler = reachability.withLock { state -> (@Sendable (Bool) -> Void)? in
            guard state.reachable != reachable else { return nil }
            state.reachable = reachable
            return state.handler
        }
        handler?(reachable)
    }

    public init(serverURL: URL, key: String, timeout: Duration = .seconds(10), outbox: Outbox? = nil) {
        self.serverURL = serverURL
        self.outbox = outbox
        let seconds = Int64(timeout.components.seconds)
        let transport: any ClientTransport = if serverURL.scheme?.lowercased() == "http" {
            PlainHTTPTransport(timeout: timeout)
        } else {
            AsyncHTTPClientTransport(configuration: .init(client: Self.http, timeout: .seconds(max(1, seconds))))
        }
        api = Client(serverURL: serverURL, configuration: .wire, transport: transport, middlewares: [APIKeyHeader(key: key), VersionPrecondition()])
    }

    /// The process's HTTP client: AsyncHTTPClient's shared one, except that a connection that
    /// cannot be made fails at once. By default it tries again with backoff until the connect
    /// timeout, so with the server down the console said "connecting…" for 10 s, and a call
    /// retried once took 20 s to say the server could not be reached. Never shut down (like
    /// `HTTPClient.shared`): it lives as long as the process.
    static let http: HTTPClient = {
        if oneNetworkThread.withLock({ $0 }) {
            NIOSingletons.groupLoopCountSuggestion = 1
            NIOSingletons.blockingPoolThreadCountSuggestion = 1
        }
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool.retryConnectionEstablishment = false
        // Kept connections are let go before the server closes idle ones (after 30 s): a call
        // never goes out on a connection the server is closing at that moment.
        configuration.connectionPool.idleTimeout = .seconds(20)
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// For a process that talks to one server a request or two at a time (the console, the
    /// headless commands): one network thread and one blocking-pool thread, not NIO's default of
    /// one per core, each with its own stack and malloc arena. Call before the first client. Only
    /// an `https://` server needs NIO (see PlainHTTPTransport): the suggestion is applied when its
    /// HTTP client is first made, so a console on an `http://` server never starts NIO at all.
    public static func useOneNetworkThread() {
        oneNetworkThread.withLock { $0 = true }
    }

    private static let oneNetworkThread = Mutex(false)

    /// A fresh Idempotency-Key for one logical call (kept across its retries).
    public static func newIdempotencyKey() -> String { "sd_" + UUID().uuidString.lowercased() }

    /// Runs a call; `retry` marks it safe to repeat (GET, or POST with an Idempotency-Key).
    /// `value` reads the answer through its success case (`$0.ok…`), which throws for any other:
    /// only then is the answer looked at as an error (`failure(of:)` reflects it, and reflection
    /// looks up each answer type among every conformance of the binary, a few milliseconds of
    /// the console's start when every answer went through it).
    func send<Output: Sendable, Value>(
        retry: Bool, _ call: () async throws -> Output, _ value: (Output) throws -> Value
    ) async throws(SaveDeskClientError) -> Value {
        var retried = false, waitedForConflict = false
        while true {
            let failure: SaveDeskClientError
            do {
                let output = try await call()
                let unread: any Error
                do {
                    let answer = try value(output)
                    noteReachable(true)
                    return answer
                } catch {
                    unread = error
                }
                if let error = Self.failure(of: output) {
                    failure = error
                } else {
                    noteReachable(true)
                    throw SaveDeskClientError(kind: .invalidResponse, message: "the server's answer could not be read: \(unread)")
                }
            } catch let error as SaveDeskClientError {
                throw error
            } catch {
                failure = SaveDeskClientError(
                    kind: .unreachable, message: "the SaveDesk server at \(serverURL.absoluteString) could not be reached"
                )
            }
            noteReachable(failure.kind != .unreachable)
            if case .server(409, _) = failure.kind, let wait = failure.retryAfter, !waitedForConflict {
                waitedForConflict = true
                try? await Task.sleep(for: RetryPolicy.conflictRetryDelay(retryAfter: wait))
                continue
            }
            if retry, failure.isTransient, !retried {
                retried = true
                continue
            }
            throw failure
        }
    }

    /// The error of a generated operation output (its `default` case), or nil on success.
    static func failure(of output: Any) -> SaveDeskClientError? {
        let mirror = Mirror(reflecting: output)
        guard let child = mirror.children.first, child.label == "default" else { return nil }
        let parts = Mirror(reflecting: child.value).children.map(\.value)
        guard parts.count == 2, let status = parts[0] as? Int else {
            return SaveDeskClientError(kind: .invalidResponse, message: "the server answered in a way this client does not understand")
        }
        guard let response = parts[1] as? Components.Responses._Error, let body = try? response.body.json else {
            return SaveDeskClientError(kind: .server(status: status, code: "unknown"), message: "the server answered \(status)")
        }
        return SaveDeskClientError(
            kind: .server(status: status, code: body.code), message: body.error, steps: body.steps ?? [], retryAfter: body.retryAfter
        )
    }

    static func convert<Target: Decodable>(_ value: some Encodable, to type: Target.Type = Target.self) throws -> Target {
        try WireConversion.convert(value, to: type)
    }
}

/// Sends the API key the way the SDK does.
struct APIKeyHeader: ClientMiddleware {
    let key: String

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[HTTPField.Name("X-ZeroSettle-Key")!] = key
        return try await next(request, body, baseURL)
    }
}

/// Sends the customer version a change is built on (`SaveDeskClient.expecting(version:)`) as
/// `If-Match` on the calls that change something.
struct VersionPrecondition: ClientMiddleware {
    @TaskLocal static var expected: Int64?

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let version = Self.expected, request.method != .get else { return try await next(request, body, baseURL) }
        var request = request
        request.headerFields[.ifMatch] = "\"\(version)\""
        return try await next(request, body, baseURL)
    }
}
