import Hummingbird
import NIOCore

/// The innermost middleware: an answer whose length is known and small (every API answer but
/// the event stream) leaves as one buffer, so the HTTP writer hands head, body and end to the
/// connection's event loop in one step.
///
/// Why: the OpenAPI transport turns every body into a writer closure, and Hummingbird writes such
/// a body as three hand-offs from the request's task to the event loop (head, each buffer, end),
/// each one a wake-up of the loop's thread. `make bench` measured GET cancel-flow at 0.73× bare
/// Hummingbird (which writes its one buffer in one hand-off); see README, Performance.
/// A body whose length is unknown (the server-sent events) or over `limit` streams as before.
struct WholeResponseMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The largest body gathered into one buffer: well above any API page, so what is larger
    /// (none today) streams rather than doubling its memory.
    var limit = 1 << 20

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        guard let length = response.body.contentLength, length > 0, length <= limit else { return response }
        let gathered = Gatherer(capacity: length)
        try await response.body.write(gathered)
        if let trailers = gathered.trailers {
            // None of the API's answers has trailers; one that did still ends with them.
            response.body = ResponseBody(contentLength: gathered.buffer.readableBytes) { [buffer = gathered.buffer] writer in
                try await writer.write(buffer)
                try await writer.finish(trailers)
            }
        } else {
            response.body = ResponseBody(byteBuffer: gathered.buffer)
        }
        return response
    }

    /// A writer that keeps what a body writes, and the trailers it ends with.
    final class Gatherer: ResponseBodyWriter {
        var buffer: ByteBuffer
        var trailers: HTTPFields?
        init(capacity: Int) { buffer = ByteBuffer(); buffer.reserveCapacity(capacity) }

        func write(_ buffer: ByteBuffer) async throws {
            var buffer = buffer
            self.buffer.writeBuffer(&buffer)
        }
        func finish(_ trailingHeaders: HTTPFields?) async throws { trailers = trailingHeaders }
    }
}
