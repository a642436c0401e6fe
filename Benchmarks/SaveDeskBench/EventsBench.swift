import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// The desk's event stream under 200 subscribers: how long an event takes from its commit to the
/// last subscriber (the writer's answer stands for the commit, which comes just before it), and
/// what following costs the writes (the durable respond with 200 subscribers and with none).
enum EventsBench {
    /// When each subscriber received each request's event, by request id.
    final class Arrivals: Sendable {
        private let state = Mutex<[String: (count: Int, last: ContinuousClock.Instant)]>([:])
        private let subscribed = Mutex(0)

        func received(_ requestId: Substring, at instant: ContinuousClock.Instant) {
            state.withLock { all in
                let key = String(requestId)
                let seen = all[key]
                all[key] = ((seen?.count ?? 0) + 1, max(seen?.last ?? instant, instant))
            }
        }

        func opened() { subscribed.withLock { $0 += 1 } }
        var open: Int { subscribed.withLock { $0 } }

        func arrival(of requestId: String) -> (count: Int, last: ContinuousClock.Instant)? { state.withLock { $0[requestId] } }
    }

    /// Opens `count` streams (spread over `baseURLs`) that record each event's arrival.
    static func subscribe(_ count: Int, baseURLs: [String], key: String, client: HTTPClient, arrivals: Arrivals) -> [Task<Void, Never>] {
        (0..<count).map { index in
            Task {
                var request = HTTPClientRequest(url: baseURLs[index % baseURLs.count] + "/v1/desk/events")
                request.headers.add(name: "X-ZeroSettle-Key", value: key)
                request.headers.add(name: "Accept", value: "text/event-stream")
                guard let response = try? await client.execute(request, timeout: .hours(1)), response.status == .ok else { return }
                arrivals.opened()
                // Only the request ids are read, straight from the bytes (the subscribers share the
                // server's two cores: their parsing is kept cheap).
                let marker = Array("\"request_id\":\"".utf8)
                var pending: [UInt8] = []
                do {
                    for try await buffer in response.body {
                        let now = ContinuousClock.now
                        pending += buffer.readableBytesView
                        var index = 0
                        var consumed = 0
                        while index + marker.count <= pending.count {
                            guard pending[index] == marker[0], pending[index..<(index + marker.count)].elementsEqual(marker) else {
                                index += 1
                                continue
                            }
                            let start = index + marker.count
                            guard let close = pending[start...].firstIndex(of: UInt8(ascii: "\"")) else { break }
                            arrivals.received(Substring(decoding: pending[start..<close], as: UTF8.self), at: now)
                            index = close + 1
                            consumed = index
                        }
                        // Keep what may hold a marker cut in two.
                        let keep = max(consumed, pending.count - marker.count - 64)
                        if keep > 0 { pending.removeFirst(min(keep, pending.count)) }
                    }
                } catch {}
            }
        }
    }

    /// One durable change, its request id and when its answer arrived.
    static func write(baseURL: String, n: Int, key: String, client: HTTPClient, body: String) async -> (String, ContinuousClock.Instant)? {
        var request = HTTPClientRequest(url: baseURL + "/v1/iap/cancel-flow/respond")
        request.method = .POST
        request.headers.add(name: "X-ZeroSettle-Key", value: key)
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Idempotency-Key", value: "events-bench-\(n)-\(UUID().uuidString)")
        request.body = .bytes(ByteBuffer(string: body))
        guard let response = try? await client.execute(request, timeout: .seconds(10)), response.status == .ok,
            let id = response.headers.first(name: "X-Request-Id") else { return nil }
        _ = try? await response.body.collect(upTo: 1 << 20)
        return (id, ContinuousClock.now)
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    /// Prints the rows for one setup: writes go to `writeURLs`, subscribers to `subscribeURLs`.
    static func report(
        label: String, writeURLs: [String], subscribeURLs: [String], appKey: String, operatorKey: String, writes: Scenario,
        subscribers: Int, runs: Int, client: HTTPClient
    ) async {
        print("\nevent stream, \(label): \(subscribers) subscribers (in this process, on the same cores)")
        func throughput() async -> [Double] {
            _ = await run(writes, baseURLs: writeURLs, client: client)  // warm-up
            var figures: [Double] = []
            for _ in 0..<runs { figures.append(await run(writes, baseURLs: writeURLs, client: client).throughput) }
            return figures.sorted()
        }
        let alone = await throughput()

        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: subscribers + 8)
        let streams = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let arrivals = Arrivals()
        let tasks = subscribe(subscribers, baseURLs: subscribeURLs, key: operatorKey, client: streams, arrivals: arrivals)
        let opening = ContinuousClock.now
        while arrivals.open < subscribers, ContinuousClock.now - opening < .seconds(30) { try? await Task.sleep(for: .milliseconds(20)) }

        // Fan-out: one writer, one event at a time, each waited for at every subscriber.
        var latencies: [Double] = []
        var missing = 0
        let body = writes.body?(0) ?? "{}"
        for n in 0..<(runs * 100) {
            guard let (requestId, answered) = await write(baseURL: writeURLs[n % writeURLs.count], n: n, key: appKey, client: client, body: body) else {
                missing += 1
                continue
            }
            let waited = ContinuousClock.now
            while (arrivals.arrival(of: requestId)?.count ?? 0) < arrivals.open, ContinuousClock.now - waited < .seconds(5) {
                try? await Task.sleep(for: .microseconds(200))
            }
            guard let arrival = arrivals.arrival(of: requestId), arrival.count >= arrivals.open else {
                missing += 1
                continue
            }
            latencies.append(max(0, milliseconds(arrival.last - answered)))
        }
        latencies.sort()
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? .nan : latencies[min(latencies.count - 1, Int((Double(latencies.count) * p).rounded(.up)) - 1)]
        }
        print("  fan-out, commit → the last of \(arrivals.open) subscribers".padding(toLength: 46, withPad: " ", startingAt: 0)
            + String(format: "  p50 %6.2f ms   p99 %6.2f ms   (%d events, one writer; %d not seen by all)", percentile(0.5), percentile(0.99),
                     latencies.count, missing))

        let followed = await throughput()
        let ratio = followed[followed.count / 2] / alone[alone.count / 2]
        print("  \(writes.name), no subscribers".padding(toLength: 46, withPad: " ", startingAt: 0)
            + String(format: "  %6.0f req/s median (%.0f–%.0f)", alone[alone.count / 2], alone.first!, alone.last!))
        print("  \(writes.name), \(arrivals.open) subscribers".padding(toLength: 46, withPad: " ", startingAt: 0)
            + String(format: "  %6.0f req/s median (%.0f–%.0f): %.2f× (goal ≥ 0.90×): %@", followed[followed.count / 2], followed.first!,
                     followed.last!, ratio, ratio >= 0.9 ? "met" : "missed"))
        for task in tasks { task.cancel() }
        try? await streams.shutdown()
    }
}
