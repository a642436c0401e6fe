import Foundation

/// What went wrong with a call, with the server's own words when it answered.
public struct SaveDeskClientError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The server answered with an error envelope.
        case server(status: Int, code: String)
        /// No answer: the server is down, unreachable, or too slow.
        case unreachable
        /// An answer that is not what the contract says.
        case invalidResponse
        /// A call kept on disk that can no longer be read or sent (a damaged file).
        case unsendable
    }

    public var kind: Kind
    /// A sentence a person can act on (the server's `error` when it answered).
    public var message: String
    /// Steps the customer must take themselves (`managed_by_app_store`).
    public var steps: [String]
    /// Seconds the server asked to wait (409).
    public var retryAfter: Double?

    public init(kind: Kind, message: String, steps: [String] = [], retryAfter: Double? = nil) {
        self.kind = kind
        self.message = message
        self.steps = steps
        self.retryAfter = retryAfter
    }

    public var description: String { message }

    /// The server's machine code, when it answered.
    public var code: String? {
        if case .server(_, let code) = kind { return code }
        return nil
    }

    /// Worth trying again later: no answer, or a server-side failure.
    public var isTransient: Bool {
        switch kind {
        case .unreachable: true
        case .server(let status, _): status >= 500
        case .invalidResponse, .unsendable: false
        }
    }

    /// The SaveDesk server itself (its envelope, not a proxy's page) refused the request for what
    /// it says, so sending it again cannot help: 400, 404, 409, 410, 413, 422. Anything else, a
    /// 401 (a key being rotated), 403, 408, 429, a 5xx, an answer that is not the envelope, no
    /// answer at all, is worth trying again later.
    public var isDefinitiveRefusal: Bool {
        switch kind {
        case .server(let status, let code): code != "unknown" && [400, 404, 409, 410, 413, 422].contains(status)
        case .unsendable: true
        case .unreachable, .invalidResponse: false
        }
    }
}
