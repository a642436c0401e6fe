import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime
import SaveDeskAPI

/// Runs around every API operation: gives the request an id, authenticates the key, and maps
/// every error, once, to the wire envelope `{"error", "code"}` with its status. Malformed input
/// (bad JSON, wrong types, missing fields) is a 400, never a 500.
struct APIMiddleware: ServerMiddleware {
    let keys: KeyRing
    let logger: Logger

    static let keyHeader = HTTPField.Name("X-ZeroSettle-Key")!
    static let requestIdHeader = HTTPField.Name("X-Request-Id")!

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let requestId = "req_" + UUID().uuidString.lowercased().prefix(18)
        let path = request.path ?? ""
        do {
            let scope: RequestScope
            if path.hasPrefix("/v1/webhooks/") {
                // Apple calls these: the signed payload is the authentication, checked by the handler.
                scope = RequestScope(actor: "app_store", principal: "app_store", requestId: String(requestId))
            } else {
                scope = RequestScope(key: try authenticate(request, path: path), requestId: String(requestId))
            }
            var (response, responseBody) = try await RequestScope.$current.withValue(scope) {
                try await next(request, body, metadata)
            }
            response.headerFields[Self.requestIdHeader] = String(requestId)
            return (response, responseBody)
        } catch {
            let failure = Self.describe(error)
            if failure.status >= 500 {
                logger.error("request failed", metadata: ["operation": "\(operationID)", "error": "\(error)", "request_id": "\(requestId)"])
            } else {
                logger.info("request refused", metadata: ["operation": "\(operationID)", "code": "\(failure.code)", "request_id": "\(requestId)"])
            }
            return Self.envelope(failure, requestId: String(requestId))
        }
    }

    /// The key of a request: `X-ZeroSettle-Key`, or `Authorization: Bearer`. Desk endpoints need
    /// a secret key.
    func authenticate(_ request: HTTPRequest, path: String) throws(SaveDeskError) -> APIKey {
        var presented = request.headerFields[Self.keyHeader]
        if presented == nil, let authorization = request.headerFields[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { presented = String(parts[1]) }
        }
        guard let presented, !presented.isEmpty else {
            throw .unauthorized("an API key is required (X-ZeroSettle-Key or Authorization: Bearer)")
        }
        guard let key = keys.lookup(presented) else { throw .unauthorized("this API key is not known") }
        if path.hasPrefix("/v1/desk"), key.kind != .secret {
            throw .forbidden("desk endpoints need a secret operator key; publishable keys are for apps", code: "secret_key_required")
        }
        return key
    }

    static func describe(_ error: any Error) -> SaveDeskError {
        let underlying = (error as? ServerError)?.underlyingError ?? error
        if let failure = underlying as? SaveDeskError { return failure }
        if let decoding = underlying as? DecodingError { return .badRequest(describe(decoding), code: "invalid_request") }
        if String(reflecting: type(of: underlying)).contains("OpenAPIRuntime") {
            // The generated server could not read the request (missing body, wrong content
            // type, a query value of the wrong type…).
            let detail = (error as? ServerError)?.causeDescription ?? "\(underlying)"
            return .badRequest("the request could not be read: \(detail)", code: "invalid_request")
        }
        return SaveDeskError(status: 500, code: "internal", "something went wrong on the server; nothing was changed")
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context, _ extra: CodingKey? = nil) -> String {
            let keys = context.codingPath + (extra.map { [$0] } ?? [])
            return keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
                .trimmingCharacters(in: CharacterSet(charactersIn: "."))
        }
        switch error {
        case .keyNotFound(let key, let context): return "missing field \"\(path(context, key))\""
        case .typeMismatch(let type, let context): return "field \"\(path(context))\" should be \(typeName(type))"
        case .valueNotFound(let type, let context): return "field \"\(path(context))\" should be \(typeName(type)), not null"
        case .dataCorrupted(let context):
            let at = path(context)
            return at.isEmpty ? "the body is not valid JSON" : "field \"\(at)\" is not valid: \(context.debugDescription)"
        @unknown default: return "the body could not be read"
        }
    }

    static func typeName(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "text"
        case is Bool.Type: "true or false"
        case is Int.Type, is Int64.Type, is Int32.Type: "a whole number"
        case is Double.Type: "a number"
        default: "\(type)".lowercased()
        }
    }

    static func envelope(_ failure: SaveDeskError, requestId: String) -> (HTTPResponse, HTTPBody?) {
        let body = Components.Schemas.ErrorBody(
            error: failure.message, code: failure.code, retryAfter: failure.retryAfter,
            steps: failure.steps.isEmpty ? nil : failure.steps
        )
        let data = (try? JSONEncoder().encode(body)) ?? Data(#"{"error":"error","code":"internal"}"#.utf8)
        var response = HTTPResponse(status: .init(code: failure.status))
        response.headerFields[.contentType] = "application/json; charset=utf-8"
        response.headerFields[requestIdHeader] = requestId
        if let retry = failure.retryAfter { response.headerFields[.retryAfter] = String(Int(retry.rounded(.up))) }
        return (response, HTTPBody(data))
    }
}
