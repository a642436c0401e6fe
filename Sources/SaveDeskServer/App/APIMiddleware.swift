import Foundation
import HTTPTypes
import Logging
import OpenAPIRuntime
import SaveDeskAPI

/// Runs around every API operation, in this order, before any handler:
/// 1. **who**: the operation's audience (`x-savedesk-audience` in openapi.yaml) decides which key
///    it needs, from the matched operation and never from the path string;
/// 2. **parameters**: every query, path and header value within the spec's limits;
/// 3. **body**: at most the operation's `x-savedesk-body-limit` bytes (413 otherwise);
/// 4. **idempotency**: an Idempotency-Key used before with a different request is 422, before
///    anything else is checked of the body;
/// 5. **body shape**: strict JSON (no duplicate keys) within the spec's limits.
/// Every error is mapped, once, to the wire envelope `{"error", "code"}` with its status.
/// Malformed input is a 4xx, never a 500.
struct APIMiddleware: ServerMiddleware {
    let keys: KeyRing
    let spec: APISpec
    let logger: Logger
    /// The fingerprint stored for (Idempotency-Key, operation, principal) within its lifetime.
    let storedFingerprint: @Sendable (_ key: String, _ operation: String, _ principal: String) async throws -> String?
    /// Runs once a request is authorized, before its operation (the shared test clock).
    var prepare: @Sendable (RequestScope) async throws -> Void = { _ in }
    /// Checks a Stripe webhook's `Stripe-Signature` over its raw body and answers the mode of the
    /// account whose secret signed it (nil: this server has no Stripe account).
    var stripeSignature: (@Sendable (_ header: String?, _ body: Data) throws(SaveDeskError) -> Bool)? = nil

    static let stripeSignatureHeader = HTTPField.Name("Stripe-Signature")!

    static let keyHeader = HTTPField.Name("X-ZeroSettle-Key")!
    static let requestIdHeader = HTTPField.Name("X-Request-Id")!
    static let idempotencyHeader = HTTPField.Name("Idempotency-Key")!

    var validator: RequestValidator { RequestValidator(spec: spec) }

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, metadata: ServerRequestMetadata, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        // The access log's id for this request (one of its own outside a server, as in tests).
        let requestId = RequestTrace.running?.id ?? RequestScope.newRequestId()
        var bodyRead = false
        do {
            guard let operation = spec.operations[operationID] else {
                throw SaveDeskError(status: 500, code: "internal", "operation \(operationID) is not in the spec")
            }
            RequestTrace.note { $0.operation = operationID }
            var scope = try authorize(request, operation: operation, requestId: requestId)
            scope.clientAddress = RateLimitMiddleware.clientAddress
            RequestTrace.note { [scope] in
                $0.actor = scope.actor
                $0.livemode = scope.livemode
            }
            try checkParameters(request, metadata: metadata, operation: operation)
            scope.expectedVersion = try Self.versionPrecondition(request, scope: scope)
            bodyRead = true
            let data = try await collect(body, request: request, limit: operation.bodyLimit)
            if operation.audience == .stripeWebhook {
                // Signed over the raw body: checked before the body is parsed, and the secret that
                // matched sets the mode.
                guard let verify = stripeSignature else {
                    throw SaveDeskError.unprocessable("this server does not keep billing on Stripe", code: "stripe_not_configured")
                }
                scope.livemode = try verify(request.headerFields.value(Self.stripeSignatureHeader), data ?? Data())
                RequestTrace.note { [scope] in $0.livemode = scope.livemode }
            }
            // Read within the operation's limits (lists, strings, values, depth) as it is parsed.
            let limits = StrictJSON.Limits(maxValues: operation.bodyValueLimit)
            // Parsed when it is checked or fingerprinted: a GET's empty body is neither.
            let idempotencyKey = request.headerFields.value(Self.idempotencyHeader)
            let parsed: Result<StrictJSON, StrictJSON.Failure>? = operation.body == nil && idempotencyKey == nil ? nil : data.map { data in
                Result { () throws(StrictJSON.Failure) in try StrictJSON.parse(data, limits: limits, spec: spec, schema: operation.body) }
            }
            // Only a call with an Idempotency-Key is bound to its fingerprint.
            if idempotencyKey != nil {
                scope.fingerprint = Self.fingerprint(operation: operationID, metadata: metadata, body: data, parsed: try? parsed?.get())
            }
            if let key = idempotencyKey, let fingerprint = scope.fingerprint {
                let stored = try await storedFingerprint(key, operationID, scope.principal)
                if let stored, stored != fingerprint {
                    throw SaveDeskError.unprocessable(
                        "this Idempotency-Key was already used with a different request", code: "idempotency_key_reused"
                    )
                }
                scope.idempotencyKeyFree = stored == nil
            }
            if let parsed, let schema = operation.body {
                switch parsed {
                case .success(let json): try validator.check(body: json, schema: schema)
                case .failure(let failure): throw Self.refusal(failure)
                }
            }
            // A probe reads no mode's data: it needs no clock, and must answer while the store does not.
            if operation.audience != .anyone { try await prepare(scope) }
            let forwarded = data.map { HTTPBody($0) }
            var normalized = request
            if let path = request.path, let target = Self.normalizedTarget(path) { normalized.path = target }
            var (response, responseBody) = try await RequestScope.authorizing(scope) {
                try await next(normalized, forwarded, metadata)
            }
            response.headerFields[Self.requestIdHeader] = requestId
            response.headerFields[.cacheControl] = "no-store"
            return (response, responseBody)
        } catch {
            // Refused before its body was read: read it (up to the smallest limit) so the client,
            // still sending, gets the answer on a sound connection rather than a reset.
            if !bodyRead, let body { await Self.drain(body, request: request, limit: spec.operations[operationID]?.bodyLimit ?? 0) }
            let failure = Self.describe(error)
            RequestTrace.note { $0.code = failure.code }
            if failure.status >= 500 {
                // The underlying error only: the generated server's wrapper prints the whole
                // request, headers and all (the redacting handler would still catch a key).
                let underlying = (error as? ServerError)?.underlyingError ?? error
                logger.error("request failed", metadata: ["operation": "\(operationID)", "error": "\(underlying)", "request_id": "\(requestId)"])
            } else {
                // The access log's line has the code at info; this one adds the reason.
                logger.debug("request refused", metadata: ["operation": "\(operationID)", "code": "\(failure.code)", "reason": "\(failure.message)"])
            }
            return Self.envelope(failure, requestId: requestId)
        }
    }

    /// `If-Match: "<version>"` on an operator's change (see the spec's description); apps' calls
    /// carry none. A value that is not a version is 400.
    static func versionPrecondition(_ request: HTTPRequest, scope: RequestScope) throws(SaveDeskError) -> Int64? {
        guard request.method != .get, !scope.isPublishable, let value = request.headerFields.value(.ifMatch) else { return nil }
        var text = Substring(value.trimmingCharacters(in: .whitespaces))
        if text.hasPrefix("W/") { text = text.dropFirst(2) }
        if text.count >= 2, text.first == "\"", text.last == "\"" { text = text.dropFirst().dropLast() }
        guard text.count <= 18, !text.isEmpty, text.allSatisfy(\.isASCII), text.allSatisfy(\.isNumber), let version = Int64(text) else {
            throw SaveDeskError.badRequest("If-Match must be a customer version such as \"42\" (from the customer's detail)", code: "invalid_request")
        }
        return version
    }

    /// The answer to a body that could not be read within its limits.
    static func refusal(_ failure: StrictJSON.Failure) -> SaveDeskError {
        switch failure.kind {
        case .duplicateKey: return .badRequest(failure.message, code: "duplicate_key")
        case .tooManyItems, .tooManyValues: return .badRequest(failure.message, code: "too_many_items")
        case .tooLong: return .unprocessable(failure.message, code: "too_long")
        case .syntax, .tooDeep:
            let at = failure.path.isEmpty ? "" : " at \"\(failure.path)\""
            return .badRequest("the body is not valid JSON\(at): \(failure.message)", code: "invalid_json")
        }
    }

    // MARK: 1. Who

    /// The scope of a request the operation's audience admits.
    func authorize(_ request: HTTPRequest, operation: APISpec.Operation, requestId: String) throws(SaveDeskError) -> RequestScope {
        switch operation.audience {
        case .appleWebhook:
            // Apple calls it: the signed payload is the proof, checked by the handler, which also
            // sets the mode from the signed environment.
            return RequestScope(actor: "app_store", principal: "app_store", requestId: requestId, livemode: false)
        case .stripeWebhook:
            // Stripe calls it: the signature over the body is the proof, checked once the body is
            // read; the mode is the signing account's.
            return RequestScope(actor: "stripe", principal: "stripe", requestId: requestId, livemode: false)
        case .anyone:
            // A probe: it reads no customer's data, so it acts in neither mode's name.
            return RequestScope(actor: "probe", principal: "probe", requestId: requestId, livemode: false)
        case .app:
            return RequestScope(key: try authenticate(request), requestId: requestId)
        case .operator:
            let key = try authenticate(request)
            guard key.kind == .secret else {
                throw .forbidden("this needs a secret operator key; publishable keys are for apps", code: "secret_key_required")
            }
            return RequestScope(key: key, requestId: requestId)
        case .testOperator:
            let key = try authenticate(request)
            guard key.kind == .secret else {
                throw .forbidden("this needs a secret operator key; publishable keys are for apps", code: "secret_key_required")
            }
            guard key.mode == .test else {
                throw .forbidden("the test clock and the simulators need a test-mode key (sk_test_…); they never touch live data",
                                 code: "test_mode_only")
            }
            return RequestScope(key: key, requestId: requestId)
        }
    }

    /// The key a request presents: `X-ZeroSettle-Key`, or `Authorization: Bearer`.
    static func presentedKey(_ headers: HTTPFields) -> String? {
        if let key = headers.value(keyHeader) { return key }
        guard let authorization = headers.value(.authorization) else { return nil }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        return parts.count == 2 && parts[0].lowercased() == "bearer" ? String(parts[1]) : nil
    }

    /// The key of a request, known to the server.
    func authenticate(_ request: HTTPRequest) throws(SaveDeskError) -> APIKey {
        guard let presented = Self.presentedKey(request.headerFields), !presented.isEmpty else {
            throw .unauthorized("an API key is required (X-ZeroSettle-Key or Authorization: Bearer)")
        }
        // The rate limiter looked it up already when its limits are on.
        let found: APIKey? = if let known = RateLimitMiddleware.knownKey(presented: presented) { known } else { keys.lookup(presented) }
        guard let key = found else {
            throw .unauthorized("this API key is not known")
        }
        return key
    }

    // MARK: 2. Parameters

    func checkParameters(_ request: HTTPRequest, metadata: ServerRequestMetadata, operation: APISpec.Operation) throws(SaveDeskError) {
        let query = try Self.queryItems(request.path ?? "")
        for parameter in operation.parameters {
            let values: [String]
            switch parameter.location {
            case "query": values = query.filter { $0.name == parameter.name }.map(\.value)
            case "path":
                if let raw = metadata.pathParameters[parameter.name] { values = [try Self.decode(raw, name: parameter.name)] } else { values = [] }
            case "header": values = HTTPField.Name(parameter.name).map { request.headerFields[values: $0] } ?? []
            default: values = []
            }
            if values.isEmpty, parameter.required { throw validator.missing(parameter) }
            for value in values { try validator.check(parameter: parameter, raw: value) }
        }
    }

    /// The query of a request target, percent-decoded (no `+` as a space: the SDK leaves `+`
    /// as it is). A part that does not decode to UTF-8 text is refused, naming its parameter.
    static func queryItems(_ target: String) throws(SaveDeskError) -> [(name: String, value: String)] {
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return [] }
        var items: [(name: String, value: String)] = []
        for pair in target[target.utf8.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = try decode(parts[0], name: "a query parameter's name")
            items.append((name, parts.count > 1 ? try decode(parts[1], name: name) : ""))
        }
        return items
    }

    /// A percent-encoded part of a request target, decoded; 400 when it is not UTF-8.
    static func decode(_ text: Substring, name: String) throws(SaveDeskError) -> String {
        guard let decoded = String(text).removingPercentEncoding else {
            throw .badRequest("\(name) is not valid percent-encoded UTF-8: \"\(RequestValidator.quote(String(text)))\"", code: "invalid_encoding")
        }
        return decoded
    }

    /// The request target with every query part in `name=value` form (the generated server reads
    /// a bare `?flag` as a malformed query); nil when it is in that form already. The `?` is found
    /// among the bytes: a search by Character ran grapheme breaking over every request's path.
    static func normalizedTarget(_ target: String) -> String? {
        guard let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return nil }
        let parts = target[target.utf8.index(after: mark)...].split(separator: "&")
        guard parts.contains(where: { !$0.utf8.contains(UInt8(ascii: "=")) }) else { return nil }
        return String(target[...mark]) + parts.map { $0.utf8.contains(UInt8(ascii: "=")) ? String($0) : $0 + "=" }.joined(separator: "&")
    }

    // MARK: 3. Body

    func collect(_ body: HTTPBody?, request: HTTPRequest, limit: Int) async throws -> Data? {
        guard let body else { return nil }
        // HTTP/1.1: a request with neither header has no body (every GET of an app); its stream
        // is not waited on.
        if !request.headerFields.contains(.contentLength), !request.headerFields.contains(.transferEncoding) { return Data() }
        let tooLarge = SaveDeskError(status: 413, code: "body_too_large", "the request body is over \(limit) bytes, the most this call accepts")
        if let declared = request.headerFields.value(.contentLength).flatMap(Int.init), declared > limit { throw tooLarge }
        var data = Data()
        for try await chunk in body {
            guard data.count + chunk.count <= limit else { throw tooLarge }
            data.append(contentsOf: chunk)
        }
        return data
    }

    /// Reads and drops a body that will not be used, up to `limit` bytes (a longer one is left:
    /// the connection closes after the answer).
    static func drain(_ body: HTTPBody, request: HTTPRequest, limit: Int) async {
        if let declared = request.headerFields.value(.contentLength).flatMap(Int.init), declared > limit { return }
        var read = 0
        do {
            for try await chunk in body {
                read += chunk.count
                if read > limit { return }
            }
        } catch {}
    }

    // MARK: 4. Idempotency

    /// What an Idempotency-Key is bound to: the operation, its path parameters and its body
    /// (canonical JSON, so key order and spacing do not matter).
    static func fingerprint(operation: String, metadata: ServerRequestMetadata, body: Data?, parsed: StrictJSON?) -> String {
        var text = operation + "\n"
        for (name, value) in metadata.pathParameters.sorted(by: { $0.key < $1.key }) { text += "\(name)=\(value)\n" }
        if let parsed {
            text += parsed.canonical
        } else if let body {
            text += Fingerprint.of(data: body)
        }
        return Fingerprint.of(text: text)
    }

    // MARK: Errors

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
        (ErrorEnvelope.head(failure, requestId: requestId), HTTPBody(ErrorEnvelope.body(failure)))
    }
}
