import Hummingbird

/// Errors outside the API operations (an unknown route, a wrong method) answer with the same
/// envelope as everything else; a path the API has, asked with a method it does not, is 405 with
/// the methods it does take.
struct EnvelopeMiddleware<Context: RequestContext>: RouterMiddleware {
    let spec: APISpec

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPResponseError {
            var status = error.status
            var headers: HTTPFields = [:]
            let allowed = status == .notFound ? spec.methods(forPath: request.uri.path) : []
            if !allowed.isEmpty {
                status = .methodNotAllowed
                headers[.allow] = allowed.joined(separator: ", ")
            }
            let path = RequestValidator.quote(request.uri.path)
            let failure: SaveDeskError
            switch status {
            case .notFound: failure = .notFound("no such endpoint: \(request.method) \(path)", code: "no_such_endpoint")
            case .methodNotAllowed:
                failure = SaveDeskError(status: 405, code: "method_not_allowed", "\(path) takes \(allowed.joined(separator: ", ")), not \(request.method)")
            default: failure = SaveDeskError(status: Int(status.code), code: "bad_request", status.reasonPhrase)
            }
            RequestTrace.note { $0.code = failure.code }
            return ErrorEnvelope.response(failure, extraHeaders: headers)
        }
    }
}
