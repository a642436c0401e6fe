import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing
import TestSupport

@testable import SaveDeskClient

#if canImport(Glibc)
import Glibc
#endif

/// The `http://` transport against servers that answer in each way HTTP/1.1 allows (the real
/// server's answers are covered by every other client test, which all go through it).
@Suite("Plain HTTP transport")
struct PlainHTTPTransportTests {
    /// A one-connection server on 127.0.0.1: reads the request head (and its Content-Length body),
    /// answers `reply` (nil: never answers, but keeps the connection open for `hold`), closes.
    final class OneShotServer: Sendable {
        let port: Int
        let request = Mutex<String>("")
        private let listener: Int32

        init(reply: String?, hold: Duration = .zero) throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard let bound = Loopback.bind(descriptor, port: 0), listen(descriptor, 4) == 0 else {
                close(descriptor)
                throw PlainHTTPTransport.Failure(description: "cannot listen")
            }
            listener = descriptor
            port = bound
            Thread { [self] in
                let connection = accept(self.listener, nil, nil)
                guard connection >= 0 else { return }
                defer { close(connection) }
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    if let end = PlainHTTPTransport.headerEnd(received) {
                        let head = String(decoding: received[..<end], as: UTF8.self)
                        let length = head.split(separator: "\r\n").first { $0.hasPrefix("Content-Length: ") }.flatMap { Int($0.dropFirst(16)) } ?? 0
                        if received.count - end >= length { break }
                    }
                    let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                    if count <= 0 { break }
                    received += buffer[..<count]
                }
                self.request.withLock { $0 = String(decoding: received, as: UTF8.self) }
                if let reply { _ = Array(reply.utf8).withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
                Thread.sleep(forTimeInterval: Double(hold.components.seconds) + Double(hold.components.attoseconds) / 1e18)
            }.start()
        }

        deinit { close(listener) }

        var url: URL { URL(string: "http://127.0.0.1:\(port)/base/")! }
    }

    static func call(_ server: OneShotServer, timeout: Duration = .seconds(5), body: String? = nil) async throws -> (HTTPResponse, String?) {
        let transport = PlainHTTPTransport(timeout: timeout)
        var request = HTTPRequest(method: body == nil ? .get : .post, scheme: nil, authority: nil, path: "/v1/thing?x=1")
        request.headerFields[.accept] = "application/json"
        let (response, responseBody) = try await transport.send(
            request, body: body.map { HTTPBody($0) }, baseURL: server.url, operationID: "test")
        guard let responseBody else { return (response, nil) }
        return (response, try await String(collecting: responseBody, upTo: 1 << 20))
    }

    @Test func aRequestGoesOutFramedByTheTransport() async throws {
        let server = try OneShotServer(reply: "HTTP/1.1 201 Created\r\nContent-Length: 2\r\nX-Thing: yes\r\n\r\nok")
        let (response, body) = try await Self.call(server, body: "{\"a\":1}")
        #expect(response.status.code == 201 && body == "ok")
        #expect(response.headerFields[HTTPField.Name("X-Thing")!] == "yes")
        let sent = server.request.withLock { $0 }
        #expect(sent.hasPrefix("POST /base/v1/thing?x=1 HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"), "\(sent)")
        #expect(sent.contains("Content-Length: 7\r\n") && sent.contains("Connection: close\r\n") && sent.hasSuffix("\r\n\r\n{\"a\":1}"))
    }

    @Test func aChunkedAnswerIsPutTogether() async throws {
        let server = try OneShotServer(
            reply: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
                + "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\n\r\n",
            hold: .seconds(30))
        // Complete at the last chunk: the answer does not wait for the server to close.
        let start = ContinuousClock.now
        let (response, body) = try await Self.call(server)
        #expect(response.status.code == 200 && body == "hello, world")
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func anAnswerWithoutALengthEndsWhenTheServerCloses() async throws {
        let server = try OneShotServer(reply: "HTTP/1.1 200 OK\r\n\r\nall of it")
        let (response, body) = try await Self.call(server)
        #expect(response.status.code == 200 && body == "all of it")
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let server = try OneShotServer(reply: nil, hold: .seconds(10))
        let start = ContinuousClock.now
        await #expect(throws: PlainHTTPTransport.Failure.self) { _ = try await Self.call(server, timeout: .seconds(1)) }
        #expect(ContinuousClock.now - start < .seconds(3))
    }

    @Test func malformedOrCutAnswersAreErrorsNotCrashes() async throws {
        for reply in [
            "garbage\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "HTTP/1.1 200 OK\r\nContent-Length: -4\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhi\r\n",
            "HTTP/1.1 200", "",
        ] {
            let server = try OneShotServer(reply: reply)
            await #expect(throws: PlainHTTPTransport.Failure.self, "\(reply.debugDescription)") { _ = try await Self.call(server) }
        }
    }
}
