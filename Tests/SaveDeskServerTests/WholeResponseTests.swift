import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization
import Testing

@testable import SaveDeskServer

/// The GET path's own costs: an answer of known length leaves in one write, the rate limiter's
/// key lookup serves the API middleware, and a peer's IPv4 address is written without sprintf.
@Suite("The answer path")
struct WholeResponseTests {
    struct Source: RequestContextSource { var logger = Logger(label: "test") }
    struct Context: RequestContext {
        typealias Source = WholeResponseTests.Source
        var coreContext: CoreRequestContextStorage
        init(source: Source) { coreContext = .init(source: source) }
    }

    /// Records what a body writes, write by write.
    final class Recorder: ResponseBodyWriter, @unchecked Sendable {
        var writes: [String] = []
        var trailers: HTTPFields?
        func write(_ buffer: ByteBuffer) async throws { writes.append(String(buffer: buffer)) }
        func finish(_ trailingHeaders: HTTPFields?) async throws { trailers = trailingHeaders }
    }

    /// A response whose body writes `parts` one by one (as the OpenAPI transport's does).
    static func response(_ parts: [String], length: Int?, trailers: HTTPFields? = nil) -> Response {
        Response(status: .ok, body: ResponseBody(contentLength: length) { writer in
            for part in parts { try await writer.write(ByteBuffer(string: part)) }
            try await writer.finish(trailers)
        })
    }

    static func through(_ middleware: WholeResponseMiddleware<Context>, _ response: Response) async throws -> (Response, Recorder) {
        let request = Request(head: HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/iap/cancel-flow"), body: RequestBody(buffer: ByteBuffer()))
        let answered = try await middleware.handle(request, context: Context(source: Source())) { _, _ in response }
        let recorder = Recorder()
        try await answered.body.write(recorder)
        return (answered, recorder)
    }

    @Test func aBodyOfKnownLengthLeavesInOneWrite() async throws {
        let (response, recorder) = try await Self.through(WholeResponseMiddleware(), Self.response(["{\"a\":", "1", "}"], length: 7))
        #expect(recorder.writes == ["{\"a\":1}"])
        #expect(response.headers[.contentLength] == "7")
    }

    @Test func anEventStreamAndABodyOverTheLimitStillStream() async throws {
        // The server-sent events: no length.
        let (_, stream) = try await Self.through(WholeResponseMiddleware(), Self.response([": subscribed\n\n", "data: 1\n\n"], length: nil))
        #expect(stream.writes == [": subscribed\n\n", "data: 1\n\n"])
        let (_, large) = try await Self.through(WholeResponseMiddleware(limit: 4), Self.response(["abc", "def"], length: 6))
        #expect(large.writes == ["abc", "def"])
    }

    @Test func trailersStillEndTheBody() async throws {
        let trailers: HTTPFields = [.init("X-Checksum")!: "1"]
        let (_, recorder) = try await Self.through(WholeResponseMiddleware(), Self.response(["ab", "c"], length: 3, trailers: trailers))
        #expect(recorder.writes == ["abc"])
        #expect(recorder.trailers == trailers)
    }

    @Test func aFieldsValueIsWhatTheSubscriptAnswers() throws {
        let key = try #require(HTTPField.Name("X-ZeroSettle-Key"))
        var fields: HTTPFields = [key: "pk_test_one", .contentType: "application/json"]
        #expect(fields.value(key) == "pk_test_one")
        #expect(fields.value(.authorization) == nil)
        // Two of one name: joined as the subscript joins them (so two keys are no key).
        fields.append(HTTPField(name: key, value: "pk_test_two"))
        #expect(fields.value(key) == "pk_test_one, pk_test_two")
        #expect(fields.value(key) == fields[key])
    }

    @Test func anIPv4PeerIsWrittenAsNIOWritesIt() throws {
        for text in ["127.0.0.1", "10.20.30.255", "0.0.0.0", "255.255.255.255", "192.168.1.100"] {
            let address = try SocketAddress(ipAddress: text, port: 443)
            #expect(RateLimitMiddleware.text(of: address) == text)
            #expect(RateLimitMiddleware.text(of: address) == address.ipAddress)
        }
        let v6 = try SocketAddress(ipAddress: "::1", port: 443)
        #expect(RateLimitMiddleware.text(of: v6) == v6.ipAddress)
    }

    @Test func theLimitersLookupServesOnlyTheKeyItLookedUp() throws {
        let key = try #require(APIKey(key: "pk_test_answer_path_0001"))
        let admitted = RateLimitMiddleware.Admitted(address: "127.0.0.1", key: ("pk_test_answer_path_0001", key))
        RateLimitMiddleware.$admitted.withValue(admitted) {
            #expect(RateLimitMiddleware.knownKey(presented: "pk_test_answer_path_0001") == .some(key))
            #expect(RateLimitMiddleware.knownKey(presented: "pk_test_other") == nil, "another key is looked up again")
        }
        let unknown = RateLimitMiddleware.Admitted(address: "127.0.0.1", key: ("pk_test_nobody", nil))
        RateLimitMiddleware.$admitted.withValue(unknown) {
            #expect(RateLimitMiddleware.knownKey(presented: "pk_test_nobody") == .some(nil), "looked up and not known")
        }
        #expect(RateLimitMiddleware.knownKey(presented: "pk_test_answer_path_0001") == nil, "outside a request: not looked up")
    }
}
