import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SaveDeskAPI

/// The wire envelope of every error, written once: `{"error": "<message>", "code": "<code>"}`
/// (with `retry_after` and `steps` when there are), JSON, not cached, with `Retry-After` when the
/// error says when to try again. The API middleware, the router's own errors, the rate limiter
/// and the connection guard all answer with it.
enum ErrorEnvelope {
    static func body(_ failure: SaveDeskError) -> Data {
        let body = Components.Schemas.ErrorBody(
            error: failure.message, code: failure.code, retryAfter: failure.retryAfter,
            steps: failure.steps.isEmpty ? nil : failure.steps
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(body)) ?? Data(#"{"code":"internal","error":"error"}"#.utf8)
    }

    static func head(_ failure: SaveDeskError, requestId: String? = nil) -> HTTPResponse {
        var response = HTTPResponse(status: .init(code: failure.status))
        response.headerFields[.contentType] = "application/json; charset=utf-8"
        response.headerFields[.cacheControl] = "no-store"
        if let requestId { response.headerFields[APIMiddleware.requestIdHeader] = requestId }
        if let retry = failure.retryAfter { response.headerFields[.retryAfter] = String(Int(retry.rounded(.up))) }
        return response
    }

    /// A whole answer for Hummingbird's router (errors before or outside an API operation).
    static func response(_ failure: SaveDeskError, extraHeaders: HTTPFields = [:]) -> Response {
        var head = head(failure)
        head.headerFields.append(contentsOf: extraHeaders)
        return Response(status: head.status, headers: head.headerFields, body: .init(byteBuffer: ByteBuffer(bytes: body(failure))))
    }
}
