import CBenchPTY
import Foundation

/// The terminal UI measured as a person sees it: `savedesk tui` in a pseudo-terminal of a given
/// size, keys written to it, the frames it draws read back.
/// - first frame: from spawning the process to its first drawn output;
/// - keypress → flushed frame: from writing a key to the last byte of the frame it causes (the
///   frame is over when nothing more arrives for 15 ms; that wait is not counted);
/// - bytes written per selection move (↓/↑ in the customer list);
/// - peak RSS (VmHWM) of the process.
enum TUIBench {
    struct Result {
        var firstFrameMs: Double
        var latenciesMs: [Double]
        var bytes: [Int]
        var peakRSSKiB: Int
        var failures: Int
    }

    static func run(binary: String, server: String, key: String, width: Int, height: Int, moves: Int) throws -> Result {
        var path = [CChar](repeating: 0, count: 256)
        let master = savedesk_bench_openpty(Int32(height), Int32(width), &path, Int32(path.count))
        guard master >= 0 else { throw CocoaError(.fileNoSuchFile) }
        let slave = String(cString: path)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-tui-bench-\(UUID())").path
        let start = DispatchTime.now()
        let pid = try spawn([binary, "tui", "--server", server, "--key", key], tty: slave, wait: false,
                            environment: ["TERM=xterm-256color", "XDG_STATE_HOME=\(state)", "HOME=\(state)", "SWIFT_BACKTRACE=interactive=no"])
        defer { kill(pid, SIGKILL); var status: Int32 = 0; waitpid(pid, &status, 0); close(master) }
        var screen = Data()
        // First frame: the first output that draws the header.
        var first: DispatchTime?
        while first == nil, elapsed(since: start) < 10_000 {
            if let chunk = read(master, timeoutMs: 50) {
                screen.append(chunk)
                if String(decoding: screen, as: UTF8.self).contains("SaveDesk") { first = DispatchTime.now() }
            }
        }
        // Wait for the customers, then quiet.
        while !String(decoding: screen, as: UTF8.self).contains("15 customers"), elapsed(since: start) < 20_000 {
            if let chunk = read(master, timeoutMs: 50) { screen.append(chunk) }
        }
        drain(master, quietMs: 300)
        // From the search field into the list.
        write(master, "\u{1B}OB")
        drain(master, quietMs: 200)
        var latencies: [Double] = [], bytes: [Int] = [], failures = 0
        for move in 0..<moves {
            // Ten down, ten up; as a terminal in keypad-transmit mode sends them.
            let key = (move / 10).isMultiple(of: 2) ? "\u{1B}OB" : "\u{1B}OA"
            let sent = DispatchTime.now()
            write(master, key)
            var received = 0
            var last = sent
            while let chunk = read(master, timeoutMs: received == 0 ? 1_000 : 15) {
                received += chunk.count
                last = DispatchTime.now()
            }
            if received == 0 { failures += 1; continue }
            latencies.append(Double(last.uptimeNanoseconds - sent.uptimeNanoseconds) / 1e6)
            bytes.append(received)
        }
        let rss = peakRSS(pid)
        write(master, "q")
        drain(master, quietMs: 300)
        return Result(firstFrameMs: first.map { Double($0.uptimeNanoseconds - start.uptimeNanoseconds) / 1e6 } ?? .nan,
                      latenciesMs: latencies.sorted(), bytes: bytes.sorted(), peakRSSKiB: rss, failures: failures)
    }

    static func elapsed(since start: DispatchTime) -> Double { Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e6 }

    static func spawn(_ argv: [String], tty: String, wait: Bool, environment: [String] = []) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, tty, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, savedesk_bench_spawn_setsid())
        let arguments = argv.map { strdup($0) } + [nil]
        let env = (environment + ["PATH=/usr/bin:/bin"]).map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) }; env.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], &actions, &attributes, arguments, env) == 0 else { throw CocoaError(.executableLoad) }
        if wait {
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        return pid
    }

    static func read(_ fd: Int32, timeoutMs: Int32) -> Data? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeoutMs) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = Glibc.read(fd, &buffer, buffer.count)
        return count > 0 ? Data(buffer[0..<count]) : nil
    }

    static func drain(_ fd: Int32, quietMs: Int32) { while read(fd, timeoutMs: quietMs) != nil {} }

    static func write(_ fd: Int32, _ text: String) {
        _ = text.withCString { Glibc.write(fd, $0, strlen($0)) }
    }

    static func peakRSS(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    static func report(binary: String, server: String, key: String) {
        print("\nterminal UI (savedesk tui in a pseudo-terminal; goals: first frame ≤ 50 ms, key → frame ≤ 1 ms median / ≤ 3 ms p99, ≤ 64 bytes per move, ≤ 20 MB)")
        for (width, height) in [(80, 24), (200, 60)] {
            do {
                var firsts: [Double] = []
                var all: Result?
                for _ in 0..<3 {
                    let result = try run(binary: binary, server: server, key: key, width: width, height: height, moves: 200)
                    firsts.append(result.firstFrameMs)
                    if all == nil { all = result }
                }
                guard let result = all, !result.latenciesMs.isEmpty else { print("\(width)×\(height): no frames measured"); continue }
                firsts.sort()
                func p(_ q: Double) -> Double { result.latenciesMs[min(result.latenciesMs.count - 1, Int(Double(result.latenciesMs.count) * q))] }
                print(String(format: "%3d×%-3d first frame %6.1f ms median (%.1f–%.1f) · key → frame %.2f ms median, %.2f ms p99 · %d bytes per move (median; %d–%d) · peak RSS %.1f MB · %d lost",
                             width, height, firsts[firsts.count / 2], firsts.first!, firsts.last!, p(0.5), p(0.99),
                             result.bytes[result.bytes.count / 2], result.bytes.first!, result.bytes.last!,
                             Double(result.peakRSSKiB) / 1024, result.failures))
            } catch {
                print("\(width)×\(height): \(error)")
            }
        }
    }
}
