import Crypto
import Foundation
import Logging
import NIOHTTP1
import RetentionDomain
import SaveDeskAPI
import TestSupport
import Testing
import X509

@testable import SaveDeskServer

/// Apple's cancel page: the App Store's real-time retention request, signed with a locally made
/// chain as Apple signs it, answered by a real server on the demo config (its rules: Basic for
/// monthly readers who said they do not use it enough; half off for readers of 90 days or
/// more, once; else the default message; a tenth held out).
@Suite("Apple's cancel page (Retention Messaging)")
struct RetentionMessagingTests {
    typealias Schemas = Components.Schemas
    static let path = "/v1/app-store/retention-message"
    static let appAppleId: Int64 = 1_234_567_890
    /// Demo subscribers: Diego (95 days, premium monthly), Nora (12 days), Liam (in the holdout).
    static let diego = "2000000810000003", nora = "2000000810000011", liam = "2000000810000007"

    static func request(
        _ otid: String, locale: String = "en-US", id: String = UUID().uuidString.lowercased(), appAppleId: Int64 = appAppleId,
        environment: String = "Sandbox", signedAt: Date = TestServer.start, product: String = "com.savedesk.reader.premium.monthly"
    ) -> AppStoreRetentionRequest {
        AppStoreRetentionRequest(
            originalTransactionId: otid, appAppleId: appAppleId, productId: product, userLocale: locale, requestIdentifier: id,
            environment: environment, signedDate: Int64(signedAt.timeIntervalSince1970 * 1000)
        )
    }

    func ca(_ server: TestServer) throws -> LocalStoreKitCA { try LocalStoreKitCA.loadOrCreate(in: server.directory) }

    /// The answer does not wait for its record: the rows, once the recorder has written them
    /// (polled, with a bound).
    func recorded(_ server: TestServer, where condition: String = "1 = 1", expecting count: Int) async throws -> Int {
        var found = -1
        for _ in 0..<400 {
            found = try await server.count("retention_requests", where: condition)
            if found == count { return found }
            try await Task.sleep(for: .milliseconds(25))
        }
        return found
    }

    /// The demo config with a deadline no busy test machine reaches: these tests check the
    /// decision; past the deadline the default message answers (`theDeadlineLeavesASlowTaskRunning`
    /// and `aDecisionThatFailsAnswersTheDefaultMessage`).
    static func server(deadline milliseconds: Int = 600_000, logger: Logger? = nil) async throws -> TestServer {
        var config = try TestServer.demoConfig()
        config.appStore?.retentionMessaging?.deadlineMilliseconds = milliseconds
        guard let logger else { return try await TestServer.start(config: config) }
        return try await TestServer.start(config: config, logger: logger)
    }

    /// Posts a signed payload as Apple does (no key).
    func post(_ server: TestServer, _ signedPayload: String) async throws -> (status: Int, body: String) {
        let body = String(decoding: try JSONEncoder().encode(["signedPayload": signedPayload]), as: UTF8.self)
        let answer = try await server.raw(.POST, Self.path, body: body, key: nil)
        return (answer.status, answer.body)
    }

    func answer(_ server: TestServer, _ request: AppStoreRetentionRequest) async throws -> (status: Int, body: String) {
        try await post(server, try await ca(server).sign(request))
    }

    func decode(_ body: String) throws -> Schemas.RealtimeResponseBody {
        try JSONDecoder().decode(Schemas.RealtimeResponseBody.self, from: Data(body.utf8))
    }

    /// Exactly one of the three answer kinds.
    func kinds(_ body: Schemas.RealtimeResponseBody) -> [String] {
        [body.message.map { _ in "message" }, body.alternateProduct.map { _ in "alternateProduct" },
         body.promotionalOffer.map { _ in "promotionalOffer" }].compactMap { $0 }
    }

    @Test func eachRuleAnswersWithExactlyOneKind() async throws {
        // What the server logged, in any failure's message: a decision that failed answers the
        // default message too, and only the log says which it was.
        let log = CapturedLog()
        var logger = log.logger
        logger.logLevel = .warning
        let server = try await Self.server(logger: logger)
        defer { Task { await server.stop() } }
        // Diego, 95 days: the promotional offer.
        let first = try await answer(server, Self.request(Self.diego))
        #expect(first.status == 200, "\(first.body)")
        let offer = try decode(first.body)
        #expect(kinds(offer) == ["promotionalOffer"])
        #expect(offer.promotionalOffer?.messageIdentifier == "0d4c2a9e-7a51-4b8e-8f43-5c2d8e6a9b11")
        // Again, another request: the offer was shown once; no cancel flow said "don't use it": the default message.
        let second = try decode(try await answer(server, Self.request(Self.diego)).body)
        #expect(kinds(second) == ["message"] && second.message?.messageIdentifier == "6b1f6e4a-0c55-4f39-9d6c-1f0a3c2b7e01")
        // Nora, 12 days, said in a cancel flow she does not use it enough: Basic, of the same group.
        _ = try await server.app.submitCancelFlowResponse(body: .json(.init(
            userId: "cus_nora", productId: "premium_monthly", outcome: .dismissed, offerShown: false, offerAccepted: false, pauseShown: false,
            pauseAccepted: false, lastStepSeen: 1, answers: [.init(questionId: 1, selectedOptionId: 13)]
        ))).ok
        let basic = try decode(try await answer(server, Self.request(Self.nora)).body)
        #expect(kinds(basic) == ["alternateProduct"], "logged: \(log.lines)")
        #expect(basic.alternateProduct?.productId == "com.savedesk.reader.basic.monthly")
        // A French customer gets the French identifier; a German one the fallback locale's.
        let french = try decode(try await answer(server, Self.request(Self.diego, locale: "fr-CA")).body)
        #expect(french.message?.messageIdentifier == "6b1f6e4a-0c55-4f39-9d6c-1f0a3c2b7e02")
        let german = try decode(try await answer(server, Self.request(Self.diego, locale: "de-DE")).body)
        #expect(german.message?.messageIdentifier == "6b1f6e4a-0c55-4f39-9d6c-1f0a3c2b7e01")
        // Liam is in the holdout: no answer at all (Apple shows its default), but recorded.
        let held = try await answer(server, Self.request(Self.liam))
        #expect(held.status == 204 && held.body.isEmpty)
        #expect(try await recorded(server, expecting: 6) == 6)
        #expect(try await server.count("retention_requests", where: "choice = 'holdout' AND original_transaction_id = '\(Self.liam)'") == 1)
        // A subscriber the server has never seen: no facts, the default message.
        let stranger = try decode(try await answer(server, Self.request("2000000999999999")).body)
        #expect(kinds(stranger) == ["message"])
    }

    @Test func forgedWrongAndStaleRequestsGetNoMessage() async throws {
        let server = try await Self.server()
        defer { Task { await server.stop() } }
        let ca = try ca(server)
        func refusal(_ answer: (status: Int, body: String)) throws -> String? {
            guard answer.status == 422 else { return "status \(answer.status): \(answer.body)" }
            return try envelope(answer.body).code
        }
        #expect(try refusal(try await answer(server, Self.request(Self.diego, appAppleId: 999))) == "jws_wrong_app")
        #expect(try refusal(try await answer(server, Self.request(Self.diego, environment: "Production"))) == "jws_wrong_environment")
        // Signed six minutes ago, or six minutes ahead: the window is five.
        #expect(try refusal(try await answer(server, Self.request(Self.diego, signedAt: TestServer.start - 360))) == "stale_request")
        #expect(try refusal(try await answer(server, Self.request(Self.diego, signedAt: TestServer.start + 360))) == "stale_request")
        // Tampered: another subscriber's id in a payload signed for Diego.
        let parts = try await ca.sign(Self.request(Self.diego)).split(separator: ".").map(String.init)
        let forged = try JSONEncoder().encode(Self.request(Self.nora)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        #expect(try refusal(try await post(server, [parts[0], forged, parts[2]].joined(separator: "."))) == "jws_bad_signature")
        // Another CA's chain, and a chain of the server's own trust that has expired.
        #expect(try refusal(try await post(server, try await LocalStoreKitCA.make(name: "Stranger").sign(Self.request(Self.diego))))
                == "jws_untrusted_root")
        let expired = try LocalStoreKitCA.make(name: "Expired", validUntil: TestServer.start - 86_400)
        let rootFile = server.directory.appendingPathComponent("expired-root.pem")
        try expired.root.serializeAsPEM().pemString.write(to: rootFile, atomically: true, encoding: .utf8)
        var config = server.config
        config.appStore?.trustedRoots = [rootFile.path]
        let trusting = try await TestServer.start(config: config)  // (the deadline is irrelevant: it refuses before)
        defer { Task { await trusting.stop() } }
        #expect(try refusal(try await post(trusting, try await expired.sign(Self.request(Self.diego)))) == "jws_untrusted_root")
        // Junk is a 4xx too, never a 5xx.
        for junk in ["", "x", "a.b.c"] {
            let answer = try await post(server, junk)
            #expect((400..<500).contains(answer.status), "\(junk): \(answer.status)")
        }
        #expect(try await server.count("retention_requests") == 0)
    }

    @Test func aRepeatGetsTheSameAnswerOnce() async throws {
        let server = try await Self.server()
        defer { Task { await server.stop() } }
        let request = Self.request(Self.diego)
        let signed = try await ca(server).sign(request)
        let first = try await post(server, signed)
        let again = try await post(server, signed)
        #expect(first.status == 200 && again.status == 200)
        #expect(first.body == again.body, "the same signature, not a new one")
        // Apple's request id reused for someone else is refused.
        var other = Self.request(Self.nora)
        other.requestIdentifier = request.requestIdentifier
        let reused = try await answer(server, other)
        #expect(reused.status == 422)
        #expect(try envelope(reused.body).code == "request_identifier_reused")
        #expect(try await recorded(server, expecting: 1) == 1)
        // Recorded on Diego's timeline as what Apple's page showed.
        let timeline = try await server.desk.getCustomerTimeline(path: .init(customerId: "cus_diego")).ok.body.json.events
        #expect(timeline.filter { $0.action == "app_store.retention_message" }.count == 1)
        let raw = try await server.raw(.GET, "/v1/desk/customers/cus_diego/timeline", key: TestServer.operatorKey)
        #expect(raw.body.contains("Apple's cancel page showed \u{201C}Stay for 50% off your next 3 months.\u{201D} with the promotional offer"))
    }

    static let python = ProcessInfo.processInfo.environment["SAVEDESK_TEST_PYTHON"]
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/check-retention-message.py")

    struct Verdict: Decodable {
        struct Request: Decodable { var original_transaction_id: String; var app_apple_id: Int64; var user_locale: String; var environment: String }
        struct Claims: Decodable {
            var iss: String; var aud: String; var bid: String; var nonce: String; var productId: String; var offerIdentifier: String
            var transactionId: String; var iat: Int64
        }
        struct Header: Decodable { var kid: String; var alg: String }
        var request: Request?
        var request_error: String?
        var response_kinds: [String]
        var claims: Claims?
        var header: Header?
        var signature_error: String?
    }

    /// Apple's library decodes the request and the answer; PyJWT verifies the V2 signature with
    /// the In-App Purchase key's public half and reads Apple's claims.
    @Test(.enabled(if: python != nil, "make test installs Apple's library and sets SAVEDESK_TEST_PYTHON"))
    func applesLibraryAndPyJWTAgree() async throws {
        let server = try await Self.server()
        defer { Task { await server.stop() } }
        let ca = try ca(server)
        let request = Self.request(Self.diego)
        let signed = try await ca.sign(request)
        let answer = try await post(server, signed)
        #expect(answer.status == 200, "\(answer.body)")
        let key = try P256.Signing.PrivateKey(pemRepresentation: String(
            contentsOf: server.directory.appendingPathComponent(PromotionalOfferSigner.localKeyFile), encoding: .utf8
        ))
        let files = (root: server.directory.appendingPathComponent("root.der"), request: server.directory.appendingPathComponent("request.jws"),
                     response: server.directory.appendingPathComponent("response.json"), key: server.directory.appendingPathComponent("public.pem"),
                     output: server.directory.appendingPathComponent("verdict.json"))
        try Data(try ca.root.serializeAsPEM().derBytes).write(to: files.root)
        try signed.write(to: files.request, atomically: true, encoding: .utf8)
        try answer.body.write(to: files.response, atomically: true, encoding: .utf8)
        try key.publicKey.pemRepresentation.write(to: files.key, atomically: true, encoding: .utf8)
        _ = FileManager.default.createFile(atPath: files.output.path, contents: nil)
        let process = try ChildProcess.spawn(
            try #require(Self.python),
            [Self.script.path, files.root.path, String(Self.appAppleId), files.request.path, files.response.path, files.key.path],
            stdout: files.output.path
        )
        #expect(await process.wait(timeout: .seconds(60)) == 0)
        let verdict = try JSONDecoder().decode(Verdict.self, from: Data(contentsOf: files.output))
        #expect(verdict.request_error == nil && verdict.signature_error == nil, "\(verdict)")
        #expect(verdict.request?.original_transaction_id == Self.diego && verdict.request?.app_apple_id == Self.appAppleId)
        #expect(verdict.response_kinds == ["promotionalOffer"])
        let claims = try #require(verdict.claims)
        #expect(claims.aud == "promotional-offer" && claims.bid == "com.savedesk.reader" && claims.iss == "57246542-96fe-1a63-e053-0824d011072a")
        #expect(claims.productId == "com.savedesk.reader.premium.monthly" && claims.offerIdentifier == "com.savedesk.reader.stay50")
        #expect(claims.transactionId == Self.diego && !claims.nonce.isEmpty)
        #expect(verdict.header?.kid == "DEMOKEY001" && verdict.header?.alg == "ES256")
    }

    @Test func theDemoDevicePlaysTheCancelPageAndAnalyticsCountIt() async throws {
        let server = try await Self.server()
        defer { Task { await server.stop() } }
        let page = try await server.desk.simulateCancelPage(body: .json(.init(originalTransactionId: Self.diego))).ok.body.json
        let shown = try #require(page.shown)
        #expect(shown.kind == .promotionalOffer && shown.messageText == "Stay for 50% off your next 3 months.")
        #expect(shown.sentence.contains("with the promotional offer com.savedesk.reader.stay50"))
        _ = try await server.desk.simulateCancelPage(body: .json(.init(originalTransactionId: Self.liam))).ok
        // An app's key may not play it.
        expectFailure(try await server.app.simulateCancelPage(body: .json(.init(originalTransactionId: Self.diego))),
                      status: 403, code: "secret_key_required")
        // Diego renews on: saved. Liam, held out, turns renewal off: not saved.
        _ = try await server.desk.simulateAppStoreEvent(body: .json(.init(originalTransactionId: Self.liam, event: .autoRenewOff))).ok
        let analytics = try await server.desk.getRetentionMessageAnalytics(query: .init()).ok.body.json
        #expect(analytics.requests == 2)
        #expect(analytics.holdout.shown == 1 && analytics.holdout.saved == 0 && analytics.holdout.saveRate == 0)
        #expect(analytics.answered.shown == 1 && analytics.answered.saved == 1)
        let row = try #require(analytics.messages.first)
        #expect(row.kind == "promotional_offer" && row.messageId == "half_off_three_months" && row.figures.saveRate == 1)
    }

    @Test func aRedeemedOfferIsASaveEvenWithRenewalOff() async throws {
        let server = try await Self.server()
        defer { Task { await server.stop() } }
        _ = try await server.desk.simulateCancelPage(body: .json(.init(originalTransactionId: Self.diego))).ok
        _ = try await server.desk.simulateAppStoreEvent(body: .json(.init(originalTransactionId: Self.diego, event: .autoRenewOff))).ok
        #expect(try await server.desk.getRetentionMessageAnalytics(query: .init()).ok.body.json.answered.saved == 0)
        // The App Store reports a renewal that redeemed the offer.
        try await server.withStore { store in
            try await store.transaction { data in
                var transaction = AppStoreJWSTests.transaction()
                transaction.originalTransactionId = Self.diego
                transaction.offerIdentifier = "com.savedesk.reader.stay50"
                transaction.offerType = 2
                try await AppStoreService.noteRedemption(transaction, data, at: TestServer.start.unixSeconds + 60)
            }
        }
        let analytics = try await server.desk.getRetentionMessageAnalytics(query: .init()).ok.body.json
        #expect(analytics.answered.saved == 1 && analytics.answered.redeemed == 1)
    }

    /// Past verification nothing fails the request: a decision that cannot finish (here: an
    /// offer to sign and no key to sign it with) answers the default message, recorded as such.
    @Test func aDecisionThatFailsAnswersTheDefaultMessage() async throws {
        let chain = try LocalStoreKitCA.make(name: "Apple stand-in")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-test-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let rootFile = directory.appendingPathComponent("root.pem")
        try chain.root.serializeAsPEM().pemString.write(to: rootFile, atomically: true, encoding: .utf8)
        var config = try TestServer.demoConfig()
        config.appStore?.localCA = false  // so no local key either: the offer cannot be signed
        config.appStore?.trustedRoots = [rootFile.path]
        config.appStore?.retentionMessaging?.deadlineMilliseconds = 600_000
        let server = try await TestServer.start(directory: directory, config: config)
        defer { Task { await server.stop() } }
        let answer = try await post(server, try await chain.sign(Self.request(Self.diego)))
        #expect(answer.status == 200, "\(answer.body)")
        #expect(try decode(answer.body).message?.messageIdentifier == "6b1f6e4a-0c55-4f39-9d6c-1f0a3c2b7e01")
        #expect(try await recorded(server, where: "choice = 'fallback' AND message_key = 'stay_for_stories'", expecting: 1) == 1)
    }

    @Test func theDeadlineLeavesASlowTaskRunning() async throws {
        let slow = Task { () async throws -> Int in
            try await Task.sleep(for: .seconds(30))
            return 1
        }
        let timedOut = await Deadline.value(of: slow, within: .milliseconds(5))
        #expect(timedOut == nil)
        #expect(!slow.isCancelled)
        slow.cancel()
        let quick = Task { () async throws -> Int in 2 }
        let result = await Deadline.value(of: quick, within: .seconds(30))
        #expect(try result?.get() == 2)
    }
}
