import CBenchPTY
import Foundation

/// The terminal UI measured as a person sees it: `savedesk tui` in a pseudo-terminal of a given
/// size, keys written to it, the frames it draws read back; and, side by side in the same run, the
/// same screen in Textual (Benchmarks/textual/customers.py), Bubble Tea (Benchmarks/bubbletea) and
/// tui-rs (Benchmarks/tui-rs): the same first page of customers from the same server, a search
/// line, the list, the page footer.
/// - first frame: from spawning the process to its first drawn output;
/// - first frame with data: to the first customer's name in the list ("Thompson", Ava's: a word
///   the terminal writes whole, where a footer that only changes its count is redrawn in part);
/// - keypress → flushed frame: from writing a key to the last byte of the frame it causes (the
///   frame is over when nothing more arrives for 15 ms; that wait is not counted);
/// - CPU per move: the time the process's threads ran during the moves (the kernel's schedstat,
///   in nanoseconds), divided by the moves: what a key costs the app, without the terminal's and
///   the scheduler's part of the latency;
/// - bytes written per selection move (↓/↑ in the customer list);
/// - peak RSS (VmHWM) of the process.
enum TUIBench {
    struct Result {
        var firstFrameMs: Double
        var firstDataMs: Double
        var latenciesMs: [Double]
        var bytes: [Int]
        var peakRSSKiB: Int
        var failures: Int
        /// CPU time of the process per selection move, in microseconds.
        var cpuPerMoveUs: Double
    }

    /// One of the apps: how to start it.
    struct Subject {
        var name: String
        var argv: [String]
    }

    static func run(_ subject: Subject, width: Int, height: Int, moves: Int) throws -> Result {
        var path = [CChar](repeating: 0, count: 256)
        let master = savedesk_bench_openpty(Int32(height), Int32(width), &path, Int32(path.count))
        guard master >= 0 else { throw CocoaError(.fileNoSuchFile) }
        let slave = String(cString: path)
        let state = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-tui-bench-\(UUID())").path
        defer { try? FileManager.default.removeItem(atPath: state) }
        let start = DispatchTime.now()
        let pid = try spawn(subject.argv, tty: slave, wait: false,
                            environment: ["TERM=xterm-256color", "LANG=C.UTF-8", "XDG_STATE_HOME=\(state)", "HOME=\(state)", "SWIFT_BACKTRACE=interactive=no"])
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
        // Wait for the customers (their page footer), then quiet.
        var data: DispatchTime?
        while data == nil, elapsed(since: start) < 20_000 {
            if let chunk = read(master, timeoutMs: 5) { screen.append(chunk) }
            if String(decoding: screen, as: UTF8.self).contains("Thompson") { data = DispatchTime.now() }
        }
        func since(_ time: DispatchTime?) -> Double { time.map { Double($0.uptimeNanoseconds - start.uptimeNanoseconds) / 1e6 } ?? .nan }
        // A start only: the first frames, no moves.
        if moves == 0 {
            return Result(firstFrameMs: since(first), firstDataMs: since(data), latenciesMs: [], bytes: [], peakRSSKiB: 0, failures: 0, cpuPerMoveUs: 0)
        }
        drain(master, quietMs: 300)
        // From the search field into the list.
        write(master, "\u{1B}OB")
        drain(master, quietMs: 200)
        var latencies: [Double] = [], bytes: [Int] = [], failures = 0
        let cpuBefore = cpuNanoseconds(pid)
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
        let cpuPerMoveUs = Double(cpuNanoseconds(pid) - cpuBefore) / 1_000 / Double(max(1, moves))
        let rss = peakRSS(pid)
        write(master, "q")
        drain(master, quietMs: 300)
        return Result(firstFrameMs: since(first), firstDataMs: since(data),
                      latenciesMs: latencies.sorted(), bytes: bytes.sorted(), peakRSSKiB: rss, failures: failures,
                      cpuPerMoveUs: cpuPerMoveUs)
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

    /// The CPU time every thread of `pid` has run so far, in nanoseconds (the first field of each
    /// `/proc/PID/task/TID/schedstat`; threads that ended are not counted).
    static func cpuNanoseconds(_ pid: pid_t) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { sum, task in
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8)) ?? ""
            return sum + (Int(stat.split(separator: " ").first ?? "") ?? 0)
        }
    }

    static func peakRSS(_ pid: pid_t) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    /// SaveDesk at 80×24 and 200×60, and each peer at 80×24, three runs each, side by side with
    /// the goals: Textual (Python), and the compiled peers Bubble Tea (Go) and tui-rs (Rust), which
    /// `make bench-tui` builds offline from Debian's packages.
    static func report(binary: String, peers: [Subject], server: String, key: String) {
        print("\nterminal UI in a pseudo-terminal, side by side with its peers (the same screen and data); 3 runs, median (min–max); the first frames from \(3 + extraStarts) starts")
        let savedesk = Subject(name: "savedesk tui", argv: [binary, "tui", "--server", server, "--key", key])
        var at80: [String: Summary] = [:]
        for (subject, sizes) in [(savedesk, [(80, 24), (200, 60)])] + peers.map({ ($0, [(80, 24)]) }) {
            for (width, height) in sizes {
                guard let summary = measure(subject, width: width, height: height) else { continue }
                print(summary.line)
                if width == 80 { at80[subject.name] = summary }
            }
        }
        guard let ours = at80[savedesk.name] else { return }
        print(String(format: "goals at 80×24: key → frame median %.2f ms (≤ 0.5), p99 %.2f ms (≤ 2) · %d bytes per move (≤ 24)",
                     ours.keyMedian, ours.keyP99, ours.bytesMedian))
        for name in [Peer.textual, Peer.bubbleTea, Peer.tuiRS] {
            guard let theirs = at80[name] else {
                print("\(name): not measured (make bench-tui builds it and passes its path)")
                continue
            }
            print(comparison(ours, theirs, name: name))
        }
    }

    /// The peers' names, as the report prints them.
    enum Peer {
        static let textual = "Textual"
        static let bubbleTea = "Bubble Tea"
        static let tuiRS = "tui-rs"
    }

    /// One peer against SaveDesk at 80×24: each figure, its ratio, and whether the goal is met.
    /// Textual: ≥ 10× faster to data, ≤ 0.6× its memory. Bubble Tea: at or ahead on data, key →
    /// frame and bytes, at or below its memory. tui-rs: at or ahead on the same; its memory is the
    /// floor to approach.
    static func comparison(_ ours: Summary, _ theirs: Summary, name: String) -> String {
        func mark(_ met: Bool) -> String { met ? "met" : "NOT met" }
        let data = theirs.dataMedian / ours.dataMedian
        let memory = ours.rssMB / theirs.rssMB
        if name == Peer.textual {
            return String(format: "vs Textual: first frame with data %.1f× faster (goal ≥ 10×: %@) · peak RSS %.2f× Textual's (goal ≤ 0.6×: %.1f MB vs %.1f MB: %@)",
                          data, mark(data >= 10), memory, ours.rssMB, theirs.rssMB, mark(memory <= 0.6))
        }
        let ahead = ours.dataMedian <= theirs.dataMedian && ours.keyMedian <= theirs.keyMedian && ours.keyP99 <= theirs.keyP99
            && ours.bytesMedian <= theirs.bytesMedian
        let rssGoal = name == Peer.bubbleTea ? "goal ≤ 1×: \(mark(memory <= 1))" : "the floor to approach"
        return String(format: "vs %@: first frame with data %.1f vs %.1f ms (%.2f×) · key → frame median %.2f vs %.2f ms, p99 %.2f vs %.2f ms · bytes per move %d vs %d (goal: at or ahead on all: %@) · peak RSS %.1f vs %.1f MB (%.2f×; %@)",
                      name, ours.dataMedian, theirs.dataMedian, data, ours.keyMedian, theirs.keyMedian, ours.keyP99, theirs.keyP99,
                      ours.bytesMedian, theirs.bytesMedian, mark(ahead), ours.rssMB, theirs.rssMB, memory, rssGoal)
    }

    struct Summary {
        var line: String
        var dataMedian: Double
        var keyMedian: Double
        var keyP99: Double
        var bytesMedian: Int
        var rssMB: Double
    }

    /// Starts measured besides the three runs with moves, for the first frame and the first frame
    /// with data.
    static let extraStarts = 20

    static func measure(_ subject: Subject, width: Int, height: Int) -> Summary? {
        do {
            var results: [Result] = []
            for _ in 0..<3 { results.append(try run(subject, width: width, height: height, moves: 200)) }
            // The first frames, from these runs and `extraStarts` more starts: a start takes a few
            // milliseconds, and three of them moved by a millisecond or two from run to run.
            var starts = results
            for _ in 0..<extraStarts { starts.append(try run(subject, width: width, height: height, moves: 0)) }
            let latencies = results.flatMap(\.latenciesMs).sorted()
            let bytes = results.flatMap(\.bytes).sorted()
            guard !latencies.isEmpty else {
                print("\(subject.name) \(width)×\(height): no frames measured")
                return nil
            }
            func median(_ values: [Double]) -> (Double, Double, Double) {
                let sorted = values.sorted()
                return (sorted[sorted.count / 2], sorted.first!, sorted.last!)
            }
            func p(_ q: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count) * q))] }
            let first = median(starts.map(\.firstFrameMs)), data = median(starts.map(\.firstDataMs))
            let rss = median(results.map { Double($0.peakRSSKiB) / 1024 })
            let cpu = median(results.map(\.cpuPerMoveUs))
            let line = subject.name.padding(toLength: 14, withPad: " ", startingAt: 0) + String(
                format: "%3d×%-3d first frame %6.1f ms (%.1f–%.1f) · with data %6.1f ms (%.1f–%.1f) · key → frame %.2f ms median, %.2f ms p99 · CPU %.0f µs per move (median; %.0f–%.0f) · %d bytes per move (median; %d–%d) · peak RSS %.1f MB (%.1f–%.1f) · %d lost",
                width, height, first.0, first.1, first.2, data.0, data.1, data.2, p(0.5), p(0.99), cpu.0, cpu.1, cpu.2,
                bytes[bytes.count / 2], bytes.first!, bytes.last!, rss.0, rss.1, rss.2, results.map(\.failures).reduce(0, +))
            return Summary(line: line, dataMedian: data.0, keyMedian: p(0.5), keyP99: p(0.99), bytesMedian: bytes[bytes.count / 2], rssMB: rss.0)
        } catch {
            print("\(subject.name) \(width)×\(height): \(error)")
            return nil
        }
    }
}
