import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
import Testing

@testable import SaveDeskServer

/// The cancel-flow config is encoded once: later calls get the first answer's bytes.
@Suite("Constant responses")
struct ConstantResponsesTests {
    @Test func theFirstOkAnswerIsKeptAndOtherOperationsPassThrough() async throws {
        let cache = ConstantResponses(operations: ["getCancelFlowConfig"])
        let calls = Mutex(0)
        let status = Mutex(HTTPResponse.Status.serviceUnavailable)
        let next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?) = { _, _, _ in
            let n = calls.withLock { $0 += 1; return $0 }
            return (HTTPResponse(status: status.withLock { $0 }), HTTPBody("answer \(n)"))
        }
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/v1/iap/cancel-flow")
        func call(_ operation: String) async throws -> String {
            let (_, body) = try await cache.intercept(request, body: nil, metadata: .init(), operationID: operation, next: next)
            return try await String(collecting: try #require(body), upTo: 1024)
        }
        #expect(try await call("getCancelFlowConfig") == "answer 1", "an error is not kept")
        status.withLock { $0 = .ok }
        #expect(try await call("getCancelFlowConfig") == "answer 2")
        #expect(try await call("getCancelFlowConfig") == "answer 2")
        #expect(try await call("getCancelFlowConfig") == "answer 2")
        #expect(try await call("getProducts") == "answer 3")
        #expect(calls.withLock { $0 } == 3)
    }
}
