import Foundation
import SaveDeskAPI
import Testing

@testable import SaveDeskServer

/// Every input has a limit checked before use; a bad request is a 4xx in the envelope, never a
/// 5xx, a hang or a crash.
@Suite("Limits")
struct LimitsTests {
    @Test func integersOutsideTheSpecsRangeAre400NamingTheParameter() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        for (query, name) in [
            ("page=9223372036854775807", "page"), ("page=99999999999999999999", "page"), ("page=0", "page"),
            ("per_page=101", "per_page"), ("page=-1", "page"),
        ] {
            let reply = try await server.raw(.GET, "/v1/desk/customers?\(query)", key: TestServer.operatorKey)
            #expect(reply.status == 400, "\(query)")
            let error = try envelope(reply.body)
            #expect(error.code == "out_of_range" && error.error.hasPrefix(name), "\(query): \(error.error)")
        }
        let timeline = try await server.raw(.GET, "/v1/desk/customers/cus_ava/timeline?limit=501", key: TestServer.operatorKey)
        #expect(timeline.status == 400 && timeline.body.contains("limit must be between 1 and 500"))
        let advance = try await server.raw(.POST, "/v1/desk/clock/advance", body: #"{"days":1,"hours":9223372036854775807}"#,
                                           key: TestServer.operatorKey)
        #expect(advance.status == 400 && advance.body.contains("hours must be between 0 and 87600"), "\(advance.body)")
        // The server is alive and time did not move.
        #expect(try await server.desk.getDeskSession().ok.body.json.serverTime == TestServer.start)
    }

    @Test func bodiesOverTheirLimitAre413AndFreeTextOverItsLengthIs422() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        func response(freeText: String) -> String {
            #"{"user_id":"cus_ava","product_id":"premium_monthly","outcome":"cancelled","offer_shown":false,"offer_accepted":false,"pause_shown":false,"pause_accepted":false,"last_step_seen":1,"answers":[{"question_id":3,"free_text":"\#(freeText)"}]}"#
        }
        let huge = try await server.raw(.POST, "/v1/iap/cancel-flow/respond", body: response(freeText: String(repeating: "x", count: 10_000_000)))
        #expect(huge.status == 413)
        #expect(try envelope(huge.body).code == "body_too_large")
        let long = try await server.raw(.POST, "/v1/iap/cancel-flow/respond", body: response(freeText: String(repeating: "é", count: 2_001)))
        #expect(long.status == 422)
        let error = try envelope(long.body)
        #expect(error.code == "too_long" && error.error.hasPrefix("answers[0].free_text is 2001 characters long"), "\(error.error)")
        let fine = try await server.raw(.POST, "/v1/iap/cancel-flow/respond", body: response(freeText: String(repeating: "é", count: 2_000)))
        #expect(fine.status == 200)
        // The webhook takes no key, and still no more than Apple sends.
        let webhook = try await server.raw(.POST, "/v1/webhooks/appstore-notifications",
                                           body: #"{"signedPayload":"\#(String(repeating: "a", count: 2_000_000))"}"#, key: nil)
        #expect(webhook.status == 413)
        // Nothing oversize was stored: the analytics stay small.
        let analytics = try await server.raw(.GET, "/v1/desk/analytics/cancel-flow", key: TestServer.operatorKey)
        #expect(analytics.body.utf8.count < 50_000)
    }

    @Test func duplicateKeysAndBadJSONAre400() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let duplicate = try await server.raw(.POST, "/v1/iap/subscriptions/pause",
                                             body: #"{"user_id":"cus_ava","product_id":"premium_monthly","user_id":"cus_ben"}"#)
        #expect(duplicate.status == 400)
        #expect(try envelope(duplicate.body).code == "duplicate_key")
        #expect(try envelope(duplicate.body).error.contains("\"user_id\" appears twice"))
        let nested = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        let deep = try await server.raw(.POST, "/v1/iap/subscriptions/pause", body: nested)
        #expect(deep.status == 400)
        #expect(try envelope(deep.body).code == "invalid_json")
        let status = try await server.app.getEntitlements(query: .init(userId: "cus_ava")).ok.body.json.entitlements[0].status
        #expect(status == .active)
    }

    @Test func aHalfSentRequestIsAnswered408AndClosed() async throws {
        let server = try await TestServer.start(readTimeout: .seconds(1))
        defer { Task { await server.stop() } }
        let half = await RawHTTP.exchange(port: server.running.port, "GET /v1/iap/cancel-flow HTTP/1.1\r\nHost: x\r\nX-ZeroSett", timeout: 8)
        #expect(half.status == 408 && half.closed, "\(half.head)")
        #expect(half.body.contains("request_timeout"))
        #expect(half.seconds < 5)
        // A body promised and never sent.
        let body = await RawHTTP.exchange(
            port: server.running.port,
            "POST /v1/iap/subscriptions/pause HTTP/1.1\r\nHost: x\r\nX-ZeroSettle-Key: \(TestServer.appKey)\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"user_id\"",
            timeout: 10
        )
        #expect(body.closed && body.seconds < 8, "\(body.head)")
        // The server still answers.
        #expect(try await server.app.getCancelFlowConfig().ok.body.json.enabled)
    }

    /// The limits of a kept-alive connection's next request are its own: a body promised and
    /// never sent after a first answer is refused in the body's time, not the idle connection's
    /// (30 s), and a connection left idle is closed once that runs out, not before.
    @Test func aKeptAliveConnectionsNextRequestHasItsOwnLimits() async throws {
        let server = try await TestServer.start(readTimeout: .seconds(1))
        defer { Task { await server.stop() } }
        let first = "GET /v1/iap/cancel-flow HTTP/1.1\r\nHost: x\r\nX-ZeroSettle-Key: \(TestServer.appKey)\r\n\r\n"
        // Sent after the first answer, once the connection's head limit (1 s) has passed.
        let second = "POST /v1/iap/subscriptions/pause HTTP/1.1\r\nHost: x\r\nX-ZeroSettle-Key: \(TestServer.appKey)\r\n"
            + "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"user_id\""
        let reply = await RawHTTP.exchange(port: server.running.port, first, timeout: 25, later: (after: 2, request: second))
        #expect(reply.status == 200, "\(reply.head)")
        #expect(reply.closed && reply.body.contains("408") && reply.body.contains("request_timeout"), "\(reply.body)")
        // The body's limit is 3 s from its head (sent at 2 s); the idle connection's would be 30 s.
        #expect(reply.seconds < 20)
        // Answered and left idle: still open after the head limit (1 s) and the body limit (3 s).
        let idle = await RawHTTP.exchange(port: server.running.port, first, timeout: 5)
        #expect(idle.status == 200 && !idle.closed, "\(idle.head)")
    }

    @Test func oversizeHeadersAndTargetsAreAnsweredInTheEnvelope() async throws {
        let server = try await TestServer.start()
        defer { Task { await server.stop() } }
        let headers = await RawHTTP.get(port: server.running.port, "/v1/iap/cancel-flow", key: TestServer.appKey,
                                        extraHeaders: "X-Padding: \(String(repeating: "p", count: 40_000))\r\n")
        #expect(headers.status == 431 && headers.closed)
        #expect(try envelope(headers.body).code == "headers_too_large")
        let target = await RawHTTP.get(port: server.running.port, "/v1/iap/cancel-flow?user_id=\(String(repeating: "u", count: 10_000))",
                                       key: TestServer.appKey)
        #expect(target.status == 414)
        #expect(try envelope(target.body).code == "uri_too_long")
        let garbage = await RawHTTP.exchange(port: server.running.port, "NOT HTTP AT ALL\r\n\r\n")
        #expect(garbage.status == 400)
        #expect(try envelope(garbage.body).code == "malformed_request")
        #expect(try await server.app.getCancelFlowConfig().ok.body.json.enabled)
    }
}
