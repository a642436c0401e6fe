import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization

/// Answers operations whose response depends only on the server's config (which does not change
/// while it runs) with the bytes of their first answer: the cancel-flow config is encoded once
/// per config, not once per request. It runs inside `APIMiddleware`, so authorization, limits
/// and the per-request headers still apply to every call; only a 200 is kept.
final class ConstantResponses: ServerMiddleware, Sendable {
    let operations: Set<String>
    private let stored = Mutex<[String: (HTTPResponse, Data)]>([:])

    init(operations: Set<String>) { self.operations = operations }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard operations.contains(operationID) else { return try await next(request, body, metadata) }
        if let (response, data) = stored.withLock({ $0[operationID] }) { return (response, HTTPBody(data)) }
        let (response, responseBody) = try await next(request, body, metadata)
        guard response.status == .ok, let responseBody else { return (response, responseBody) }
        let data = try await Data(collecting: responseBody, upTo: 1 << 20)
        stored.withLock { $0[operationID] = (response, data) }
        return (response, HTTPBody(data))
    }
}
