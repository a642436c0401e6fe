import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What four hostile clients cost everyone else: the p99 of an app's `GET /v1/iap/products` (one
/// client on 127.0.0.1, paced under the per-address limit) with nobody else, and while four
/// senders on 127.0.0.2–5 send, as fast as they can, the worst body they can with the public key:
/// 6 MiB of empty lists to `POST /v1/iap/storekit-transactions`. The server runs with its default
/// rate limits. Goal: the loaded p99 within 2× of the unloaded one.
enum HostileBench {
    static let worstBody: Data = {
        var text = #"{"user_id":"cus_ava","client_request_id":"x","client_sdk_version":"1","transactions":["#
        let room = 6 * 1024 * 1024 - text.utf8.count - 2
        text += Array(repeating: "[]", count: room / 3).joined(separator: ",") + "]}"
        return Data(text.utf8)
    }()

    final class StopFlag: Sendable {
        private let value = Atomic(false)
        var isSet: Bool { value.load(ordering: .relaxed) }
        func set() { value.store(true, ordering: .relaxed) }
    }

    /// How the hostile requests ended.
    final class Outcomes: Sendable {
        let statuses = Mutex<[Int: Int]>([:])
        func add(_ status: Int) { statuses.withLock { $0[status, default: 0] += 1 } }
    }

    /// Latencies (ms) of `GET path` at `rate` requests a second for `seconds`.
    static func paced(_ url: String, key: String, rate: Double, seconds: Double, client: HTTPClient) async -> [Double] {
        var latencies: [Double] = []
        let start = ContinuousClock.now
        var next = start
        while ContinuousClock.now - start < .milliseconds(Int(seconds * 1000)) {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "X-ZeroSettle-Key", value: key)
            let began = ContinuousClock.now
            if let response = try? await client.execute(request, timeout: .seconds(10)) {
                _ = try? await response.body.collect(upTo: 1 << 20)
            }
            let elapsed = ContinuousClock.now - began
            latencies.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
            next += .milliseconds(Int(1000 / rate))
            if next > ContinuousClock.now { try? await Task.sleep(until: next, clock: .continuous) }
        }
        return latencies.sorted()
    }

    /// One sender on `address` (host order, 127.0.0.x), in a loop until `stop`.
    static func sender(port: Int, address: UInt32, key: String, stop: StopFlag, outcomes: Outcomes) {
        let head = Data(("POST /v1/iap/storekit-transactions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-ZeroSettle-Key: \(key)\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(worstBody.count)\r\nConnection: close\r\n\r\n").utf8)
        while !stop.isSet {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return }
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = in_addr_t(address).bigEndian
            var remote = sockaddr_in()
            remote.sin_family = sa_family_t(AF_INET)
            remote.sin_port = in_port_t(UInt16(port).bigEndian)
            remote.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let size = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ready = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } } == 0
                && withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) } } == 0
            if ready {
                for part in [head, worstBody] {
                    let sent = part.withUnsafeBytes { buffer -> Bool in
                        var offset = 0
                        while offset < buffer.count {
                            let n = send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                            if n <= 0 { return false }
                            offset += n
                        }
                        return true
                    }
                    if !sent { break }
                }
                var reply = [UInt8](repeating: 0, count: 512)
                let n = recv(fd, &reply, reply.count, 0)
                let status = n > 12 ? Int(String(decoding: reply[9..<12], as: UTF8.self)) ?? 0 : 0
                outcomes.add(status)  // 0: cut off before an answer was read
            }
            close(fd)
        }
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }

    static func report(baseURL: String, port: Int, key: String, client: HTTPClient, seconds: Double, runs: Int) async {
        print("\nhostile bodies: GET /v1/iap/products from 127.0.0.1 at 40 req/s, alone and while four senders on 127.0.0.2–5")
        print("send 6 MiB bodies of empty lists to storekit-transactions with the same public key (default rate limits)")
        let url = baseURL + "/v1/iap/products"
        _ = await paced(url, key: key, rate: 40, seconds: 1, client: client)  // warm-up
        var alone: [[Double]] = [], loaded: [[Double]] = []
        let outcomes = Outcomes()
        for _ in 0..<runs {
            alone.append(await paced(url, key: key, rate: 40, seconds: seconds, client: client))
            let stop = StopFlag()
            let senders = (2...5).map { host in
                Thread { sender(port: port, address: 0x7F00_0000 + UInt32(host), key: key, stop: stop, outcomes: outcomes) }
            }
            senders.forEach { $0.start() }
            loaded.append(await paced(url, key: key, rate: 40, seconds: seconds, client: client))
            stop.set()
            while senders.contains(where: { $0.isExecuting }) { try? await Task.sleep(for: .milliseconds(20)) }
        }
        func line(_ name: String, _ samples: [[Double]]) -> (Double, String) {
            let p99s = samples.map { percentile($0, 0.99) }.sorted()
            let p50s = samples.map { percentile($0, 0.5) }.sorted()
            return (p99s[p99s.count / 2], name.padding(toLength: 30, withPad: " ", startingAt: 0)
                + String(format: "p50 %6.2f ms   p99 %6.2f ms median (%.2f–%.2f over %d runs)", p50s[p50s.count / 2],
                         p99s[p99s.count / 2], p99s.first ?? .nan, p99s.last ?? .nan, samples.count))
        }
        let (quiet, quietLine) = line("  alone", alone)
        let (busy, busyLine) = line("  with four hostile senders", loaded)
        print(quietLine)
        print(busyLine)
        let ratio = busy / quiet
        print(String(format: "  loaded p99 / alone p99: %.2f× (goal ≤ 2×): %@", ratio, ratio <= 2 ? "met" : "missed"))
        let statuses = outcomes.statuses.withLock { $0 }
        let total = statuses.values.reduce(0, +)
        print("  hostile bodies sent: \(total): " + statuses.sorted { $0.key < $1.key }.map { "\($0.key == 0 ? "cut off" : String($0.key)) \($0.value)" }
            .joined(separator: ", "))
    }
}
