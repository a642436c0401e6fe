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
    /// Each kept answer, as the bytes an `HTTPBody` takes without a copy (from `Data` it copied
    /// them into a new array on every request).
    private let stored = Mutex<[String: (HTTPResponse, HTTPBody.ByteChunk)]>([:])

    init(operations: Set<String>) { self.operations = operations }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard operations.contains(operationID) else { return try await next(request, body, metadata) }
        if let (response, bytes) = stored.withLock({ $0[operationID] }) { return (response, HTTPBody(bytes)) }
        let (response, responseBody) = try await next(request, body, metadata)
        guard response.status == .ok, let responseBody else { return (response, responseBody) }
        let bytes = try await [UInt8](collecting: responseBody, upTo: 1 << 20)[...]
        stored.withLock { $0[operationID] = (response, bytes) }
        return (response, HTTPBody(bytes))
    }
}
