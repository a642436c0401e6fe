import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1

/// Sits on every connection, after HTTP decoding and before Hummingbird: a request must arrive
/// whole in time (its head within `headTimeout` of the connection opening or the last answer, its
/// body within `bodyTimeout` of its head), its target must be at most `maxTargetLength` bytes, and
/// a request the HTTP parser cannot read (headers too large, malformed) is answered in the wire
/// envelope instead of an empty 400. Each of these answers closes the connection.
final class HTTPGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    struct Limits: Sendable {
        var headTimeout: TimeAmount = .seconds(10)
        var bodyTimeout: TimeAmount = .seconds(30)
        /// How long an idle kept-alive connection stays open.
        var idleTimeout: TimeAmount = .seconds(30)
        var maxTargetLength = 8 * 1024
        /// How long a connection answered `Connection: close` keeps dropping what the client
        /// still sends before it is closed.
        var lingerTimeout: TimeAmount = .seconds(2)
        /// …and how much of it: a hostile sender is cut off after this many bytes.
        var lingerBytes = 256 * 1024
    }

    private enum State {
        /// Nothing of the next request seen yet.
        case waitingForHead
        case readingBody
        /// The request is complete; the server is working on it or answering.
        case answering
        /// An answer of our own was written; the connection is closing.
        case closing
    }

    private let limits: Limits
    private var state = State.waitingForHead
    private var responseStarted = false
    /// The answer being written says `Connection: close`.
    private var closeAfterAnswer = false
    /// Bytes dropped since the connection started closing.
    private var lingered = 0
    private var answered = 0
    /// When the current phase runs out (nil: no limit, while the server answers).
    private var deadline: NIODeadline?
    /// The one scheduled check, and when it runs: it acts only if `deadline` has passed by then,
    /// else schedules itself again for it. A kept-alive connection's requests then move a
    /// deadline instead of cancelling and scheduling a task three times each (two timers per
    /// request were a few percent of a small request's cost).
    private var timer: (task: Scheduled<Void>, at: NIODeadline)?

    init(limits: Limits) { self.limits = limits }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context, after: limits.headTimeout) }
        // HTTP/1.0 without keep-alive (or `Connection: close`) must be closed after its answer;
        // the HTTP-types conversion after the HTTP/1 decoder drops the version, so this is said
        // before it, as a header the server acts on.
        let pipeline = context.pipeline.syncOperations
        if let codec = try? pipeline.context(handlerType: HTTP1ToHTTPServerCodec.self) {
            try? pipeline.addHandler(KeepAliveMarker(), position: .before(codec.handler))
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) { cancelTimer() }

    func channelActive(context: ChannelHandlerContext) {
        arm(context, after: limits.headTimeout)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        cancelTimer()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .closing = state {
            // Lingering after a refusal: what the client still sends is dropped, up to a bound.
            if case .body(let chunk) = unwrapInboundIn(data) {
                lingered += chunk.readableBytes
                if lingered > limits.lingerBytes { context.close(promise: nil) }
            }
            return
        }
        switch unwrapInboundIn(data) {
        case .head(let head):
            if (head.path?.utf8.count ?? 0) > limits.maxTargetLength {
                refuse(context, status: .uriTooLong, code: "uri_too_long",
                       "the request target is over \(limits.maxTargetLength) bytes; send long values in a body")
                return
            }
            state = .readingBody
            arm(context, after: limits.bodyTimeout)
        case .body:
            break
        case .end:
            state = .answering
            disarm()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head(let head) where head.status.kind != .informational:
            responseStarted = true
            closeAfterAnswer = head.headerFields.value(.connection)?.lowercased() == "close"
        case .end:
            answered += 1
            responseStarted = false
            if closeAfterAnswer {
                // An answer that ends the connection (a refusal before the body was read): once it
                // is written, stop writing and drop (not parse) what the client is still sending
                // for a moment, so it reads the answer rather than a reset; then close.
                state = .closing
                disarm()
                let written = context.eventLoop.makePromise(of: Void.self)
                written.futureResult.whenComplete { [self, context] result in
                    promise?.completeWith(result)
                    context.close(mode: .output, promise: nil)
                    arm(context, after: limits.lingerTimeout)
                }
                context.writeAndFlush(data, promise: written)
                return
            }
            if case .answering = state {
                state = .waitingForHead
                arm(context, after: limits.idleTimeout)
            }
        default:
            break
        }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let parse = error as? HTTPParserError else {
            context.fireErrorCaught(error)
            return
        }
        switch parse {
        case .headerOverflow:
            refuse(context, status: .init(code: 431), code: "headers_too_large", "the request headers are too large")
        default:
            refuse(context, status: .badRequest, code: "malformed_request", "the request is not valid HTTP/1.1")
        }
    }

    private func arm(_ context: ChannelHandlerContext, after delay: TimeAmount) {
        let due = NIODeadline.now() + delay
        deadline = due
        if let timer, timer.at <= due { return }
        schedule(context, at: due)
    }

    private func schedule(_ context: ChannelHandlerContext, at due: NIODeadline) {
        timer?.task.cancel()
        let loop = context.eventLoop.assumeIsolatedUnsafeUnchecked()
        let task = loop.scheduleTask(deadline: due) { [self] in
            timer = nil
            guard let deadline else { return }
            guard NIODeadline.now() >= deadline else {
                schedule(context, at: deadline)
                return
            }
            self.deadline = nil
            switch state {
            case .waitingForHead where answered > 0:
                // A kept-alive connection left idle: close it quietly.
                state = .closing
                context.close(promise: nil)
            case .waitingForHead, .readingBody:
                refuse(context, status: .requestTimeout, code: "request_timeout",
                       "the request did not arrive in time; send it whole and promptly")
            case .closing:
                context.close(promise: nil)
            case .answering:
                break
            }
        }
        timer = (task, due)
    }

    /// No limit until the next `arm`; the scheduled check, if any, will find none.
    private func disarm() {
        deadline = nil
    }

    /// The connection is gone: its check too.
    private func cancelTimer() {
        deadline = nil
        timer?.task.cancel()
        timer = nil
    }

    /// Answers in the wire envelope (unless an answer is already on its way) and closes.
    private func refuse(_ context: ChannelHandlerContext, status: HTTPResponse.Status, code: String, _ message: String) {
        disarm()
        guard state != .closing else { return }
        state = .closing
        guard !responseStarted else {
            context.close(promise: nil)
            return
        }
        let failure = SaveDeskError(status: status.code, code: code, message)
        let body = ErrorEnvelope.body(failure)
        var head = ErrorEnvelope.head(failure)
        head.headerFields[.contentLength] = String(body.count)
        head.headerFields[.connection] = "close"
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        context.write(wrapOutboundOut(.body(context.channel.allocator.buffer(bytes: body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in context.close(promise: nil) }
    }
}

/// Marks a request the client wants closed after its answer (HTTP/1.0 without `keep-alive`,
/// or `Connection: close`) with `Connection: close`, which survives the conversion to HTTP types.
final class KeepAliveMarker: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data), !head.isKeepAlive else {
            context.fireChannelRead(data)
            return
        }
        head.headers.replaceOrAdd(name: "connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
