import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1

/// Stripe's API as SaveDesk calls it: form-encoded requests with the pinned `Stripe-Version`, an
/// `Idempotency-Key` on every POST and DELETE (derived by the caller from SaveDesk's own action,
/// so SaveDesk's retries and Stripe's agree), one attempt bounded by the timeout, and 429, 5xx,
/// timeouts and lost connections retried with backoff (Stripe's `Stripe-Should-Retry` and
/// `Retry-After` win). The secret key goes in the Authorization header only; nothing about a
/// request is logged but its method, path and outcome.
struct StripeClient: Sendable {
    let settings: StripeSettings
    let account: StripeSettings.Account
    let livemode: Bool
    var http: HTTPClient = .shared
    var logger: Logger = Logger(label: "savedesk.stripe")

    /// What Stripe answered that was not a success.
    enum Failure: Error, CustomStringConvertible {
        /// No answer that could be trusted: a timeout, a lost connection, 5xx or 429 after the retries.
        case unreachable(String)
        /// Stripe refused the request (its error envelope).
        case refused(status: Int, error: StripeError)

        var description: String {
            switch self {
            case .unreachable(let why): "Stripe could not be reached: \(why)"
            case .refused(let status, let error): "Stripe refused (\(status) \(error.type)\(error.code.map { " " + $0 } ?? "")): \(error.message ?? "")"
            }
        }
    }

    /// A form body in Stripe's bracket notation, in the order the pairs were added.
    struct Form: Sendable, Equatable {
        var pairs: [(String, String)] = []

        mutating func add(_ name: String, _ value: String) { pairs.append((name, value)) }
        mutating func add(_ name: String, _ value: Int64) { pairs.append((name, String(value))) }
        mutating func add(_ name: String, _ value: Bool) { pairs.append((name, value ? "true" : "false")) }

        var encoded: String {
            pairs.map { "\(Self.escape($0.0))=\(Self.escape($0.1))" }.joined(separator: "&")
        }

        static func escape(_ text: String) -> String {
            var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: "\u{0}"..."\u{7F}"))
            allowed.insert(charactersIn: "-._~[]")
            return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
        }

        static func == (lhs: Form, rhs: Form) -> Bool { lhs.encoded == rhs.encoded }
    }

    func get<Object: Decodable>(_ path: String, query: Form = Form(), as: Object.Type = Object.self) async throws(Failure) -> Object {
        try await send(.GET, path, form: query, idempotencyKey: nil)
    }

    func post<Object: Decodable>(_ path: String, _ form: Form, idempotencyKey: String, as: Object.Type = Object.self) async throws(Failure) -> Object {
        try await send(.POST, path, form: form, idempotencyKey: idempotencyKey)
    }

    func delete<Object: Decodable>(_ path: String, _ form: Form, idempotencyKey: String, as: Object.Type = Object.self) async throws(Failure) -> Object {
        try await send(.DELETE, path, form: form, idempotencyKey: idempotencyKey)
    }

    /// Largest answer read (Stripe's objects are a few kilobytes).
    static let maxAnswer = 1 << 20

    private func send<Object: Decodable>(_ method: HTTPMethod, _ path: String, form: Form, idempotencyKey: String?) async throws(Failure) -> Object {
        let base = settings.apiBase.hasSuffix("/") ? String(settings.apiBase.dropLast()) : settings.apiBase
        var url = base + path
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(account.secretKey.value)")
        request.headers.add(name: "Stripe-Version", value: StripeSettings.apiVersion)
        request.headers.add(name: "User-Agent", value: "SaveDesk")
        if let idempotencyKey { request.headers.add(name: "Idempotency-Key", value: idempotencyKey) }
        if method == .GET {
            if !form.pairs.isEmpty { url += "?" + form.encoded }
            request.url = url
        } else {
            request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
            request.body = .bytes(ByteBuffer(string: form.encoded))
        }
        var attempt = 0
        while true {
            let outcome = await once(request)
            switch outcome {
            case .answer(let status, let headers, let body):
                if (200..<300).contains(status) {
                    do {
                        return try JSONDecoder().decode(Object.self, from: body)
                    } catch {
                        throw .unreachable("an answer SaveDesk cannot read (\(status), \(Object.self))")
                    }
                }
                let error = (try? JSONDecoder().decode(StripeError.Envelope.self, from: body))?.error
                    ?? StripeError(type: "api_error", code: nil, message: "HTTP \(status)", param: nil)
                let shouldRetry = headers.first(name: "Stripe-Should-Retry").map { $0 == "true" }
                    ?? (status == 429 || status == 409 || status >= 500)
                if shouldRetry, attempt < settings.maxRetries {
                    attempt += 1
                    await pause(attempt: attempt, retryAfter: headers.first(name: "Retry-After").flatMap(Double.init))
                    continue
                }
                logger.info("stripe refused", metadata: ["method": "\(method)", "path": "\(path)", "status": "\(status)", "stripe_error": "\(error.type)"])
                if status == 429 || status >= 500 { throw .unreachable("HTTP \(status) after \(attempt + 1) attempts") }
                throw .refused(status: status, error: error)
            case .lost(let why):
                if attempt < settings.maxRetries {
                    attempt += 1
                    await pause(attempt: attempt, retryAfter: nil)
                    continue
                }
                logger.info("stripe unreachable", metadata: ["method": "\(method)", "path": "\(path)", "reason": "\(why)"])
                throw .unreachable("\(why) after \(attempt + 1) attempts")
            }
        }
    }

    private enum Outcome {
        case answer(status: Int, headers: HTTPHeaders, body: Data)
        case lost(String)
    }

    private func once(_ request: HTTPClientRequest) async -> Outcome {
        do {
            let response = try await http.execute(request, timeout: .seconds(Int64(settings.timeoutSeconds)))
            let body = try await response.body.collect(upTo: Self.maxAnswer)
            return .answer(status: Int(response.status.code), headers: response.headers, body: Data(buffer: body))
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            return .lost("no answer within \(settings.timeoutSeconds) s")
        } catch {
            return .lost("the connection failed (\(type(of: error)))")
        }
    }

    private func pause(attempt: Int, retryAfter: Double?) async {
        let doubling = settings.retryBaseDelay * (1 << min(attempt - 1, 6))
        let wait = retryAfter.map { max(Duration.milliseconds(Int64(min($0, 10) * 1000)), doubling) } ?? doubling
        try? await Task.sleep(for: wait)
    }
}

/// Stripe's error object (`{"error": {"type", "code", "message", "param"}}`).
struct StripeError: Codable, Sendable, Equatable {
    var type: String
    var code: String?
    var message: String?
    var param: String?

    struct Envelope: Codable { var error: StripeError }
}
