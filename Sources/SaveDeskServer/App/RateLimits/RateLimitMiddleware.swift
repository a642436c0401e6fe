import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import RetentionDomain

/// The request context of SaveDesk's router: Hummingbird's core, and who is on the other end of
/// the connection.
struct SaveDeskRequestContext: RequestContext, RemoteAddressRequestContext {
    var coreContext: CoreRequestContextStorage
    let remoteAddress: SocketAddress?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }
}

/// The first thing every request meets: its client address and its publishable key are charged a
/// request, and its body's bytes, before anything is read or parsed (`RateLimiter`). A refusal is
/// 429 in the envelope with `Retry-After`; a refused request's body is not read (the connection
/// closes after the answer). Requests with a secret operator key are not limited.
struct RateLimitMiddleware: RouterMiddleware {
    typealias Context = SaveDeskRequestContext
    let limiter: RateLimiter
    let keys: KeyRing

    /// What this layer learned of the request the running task answers: the client's address
    /// (the API middleware puts it in the request's scope; new customers are charged to it) and,
    /// when it looked the presented key up, that key, so the API middleware does not again.
    struct Admitted: Sendable {
        var address: String
        var key: (presented: String, known: APIKey?)?
    }

    @TaskLocal static var admitted: Admitted?

    /// The client's address for the request the running task answers.
    static var clientAddress: String? { admitted?.address }

    /// The key the running request presented, as this layer found it: nil when it did not look
    /// (limits off) or `presented` is not what it looked up.
    static func knownKey(presented: String) -> APIKey?? {
        guard let key = admitted?.key, key.presented == presented else { return nil }
        return .some(key.known)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var admitted = Admitted(address: address(of: request, context: context))
        if limiter.settings.enabled, let presented = APIMiddleware.presentedKey(request.headers) {
            admitted.key = (presented, keys.lookup(presented))
        }
        return try await Self.$admitted.withValue(admitted) { try await limit(request, context: context, admitted: admitted, next: next) }
    }

    func limit(
        _ request: Request, context: Context, admitted: Admitted, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard limiter.settings.enabled else { return try await next(request, context) }
        let key = admitted.key?.known
        if key?.kind == .secret { return try await next(request, context) }
        let payer = RateLimiter.Payer(address: admitted.address, key: key?.principal)
        let declared = request.headers.value(.contentLength).flatMap(Int.init)
        if let refusal = limiter.admit(payer) ?? limiter.charge(bytes: declared ?? 0, to: payer) {
            return refused(refusal, bodyPending: declared.map { $0 > 0 } ?? request.headers.contains(.transferEncoding))
        }
        guard declared == nil, request.headers.contains(.transferEncoding) else { return try await next(request, context) }
        // A body of unknown length pays for its bytes as they arrive.
        var request = request
        request.body = RequestBody(asyncSequence: ChargedBody(base: request.body, limiter: limiter, payer: payer))
        return try await next(request, context)
    }

    /// The client's address: the connection's peer, or the last entry of the configured header
    /// (the one the proxy in front added).
    func address(of request: Request, context: Context) -> String {
        if let header = limiter.settings.clientAddressHeader, let name = HTTPField.Name(header),
            let forwarded = request.headers[values: name].last?.split(separator: ",").last
        {
            return forwarded.trimmedOfWhitespace
        }
        return context.remoteAddress.flatMap(Self.text(of:)) ?? "unknown"
    }

    /// An address as text; an IPv4 one is written here, since NIO's `ipAddress` goes through
    /// glibc's `inet_ntop`, which formats it with `sprintf` (once for every request).
    static func text(of address: SocketAddress) -> String? {
        guard case .v4(let v4) = address else { return address.ipAddress }
        let value = UInt32(bigEndian: v4.address.sin_addr.s_addr)
        var text = String(value >> 24)
        for shift in stride(from: 16, through: 0, by: -8) {
            text += "."
            text += String(value >> UInt32(shift) & 0xFF)
        }
        return text
    }

    func refused(_ refusal: SaveDeskError, bodyPending: Bool) -> Response {
        RequestTrace.note { $0.code = refusal.code }
        return ErrorEnvelope.response(refusal, extraHeaders: bodyPending ? [.connection: "close"] : [:])
    }
}

/// A request body that charges its bytes as they are read; past the budget it ends in a 429.
struct ChargedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let base: RequestBody
    let limiter: RateLimiter
    let payer: RateLimiter.Payer

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: RequestBody.AsyncIterator
        let limiter: RateLimiter
        let payer: RateLimiter.Payer

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            if let refusal = limiter.charge(bytes: chunk.readableBytes, to: payer) { throw refusal }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), limiter: limiter, payer: payer) }
}
