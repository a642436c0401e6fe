import AsyncHTTPClient
import Foundation
import Logging
import NIOCore

/// The cancel-flow funnel over a large table: generated responses (and their answers) written
/// into the server's database by `Store.loadGeneratedResponses`, then the real analytics
/// endpoint timed over HTTP.
enum FunnelBench {
    static let customers = [
        "cus_ava", "cus_ben", "cus_chloe", "cus_diego", "cus_emma", "cus_farah", "cus_george", "cus_hana", "cus_ivan",
        "cus_liam", "cus_maya", "cus_olivia", "cus_priya", "cus_quinn", "cus_sam",
    ]

    /// Milliseconds for one GET of the analytics endpoint.
    static func time(_ url: String, key: String, client: HTTPClient) async throws -> Double {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "X-ZeroSettle-Key", value: key)
        let start = ContinuousClock.now
        let response = try await client.execute(request, timeout: .seconds(60))
        _ = try await response.body.collect(upTo: 1 << 22)
        guard response.status == .ok else { throw CancellationError() }
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    }
}
