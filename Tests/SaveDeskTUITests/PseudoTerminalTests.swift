import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The built `savedesk demo` in a pseudo-terminal of our own, the bytes it writes counted (tmux
/// redraws what it receives, so its screen cannot say how much the app sent).
@Suite("savedesk demo in a pseudo-terminal", .serialized)
struct PseudoTerminalTests {
    /// One pseudo-terminal at 80×24 with `savedesk demo` on it; reads are polled and bounded.
    final class PTY {
        let master: Int32
        let child: ChildProcess
        let directory: URL
        private(set) var output: [UInt8] = []

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-pty-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            // posix_openpt and friends (stdlib.h behind _XOPEN_SOURCE: not in Swift's Glibc module).
            typealias Open = @convention(c) (Int32) -> Int32
            typealias Step = @convention(c) (Int32) -> Int32
            typealias Name = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
            func symbol<T>(_ name: String, as type: T.Type) -> T? { dlsym(nil, name).map { unsafeBitCast($0, to: type) } }
            guard let open = symbol("posix_openpt", as: Open.self), let grant = symbol("grantpt", as: Step.self),
                  let unlock = symbol("unlockpt", as: Step.self), let ptsname = symbol("ptsname", as: Name.self)
            else { throw CocoaError(.featureUnsupported) }
            master = open(O_RDWR | O_NOCTTY)
            guard master >= 0, grant(master) == 0, unlock(master) == 0, let name = ptsname(master) else {
                throw CocoaError(.fileNoSuchFile)
            }
            var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
            _ = ioctl(master, UInt(TIOCSWINSZ), &size)
            child = try ChildProcess.spawn(
                TmuxEndToEndTests.binary.path, ["demo", "--data-dir", directory.path],
                environment: ["TERM": "xterm-256color", "LANG": "C.UTF-8", "HOME": directory.path, "XDG_STATE_HOME": directory.path,
                              "SWIFT_BACKTRACE": "interactive=no", "PATH": "/usr/bin:/bin"],
                terminal: String(cString: name))
        }

        deinit {
            child.signal(SIGTERM)
            close(master)
        }

        func send(_ text: String) { _ = text.withCString { write(master, $0, strlen($0)) } }

        /// Reads what arrives within `milliseconds`; false when nothing did.
        @discardableResult
        func read(within milliseconds: Int32) -> Bool {
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, milliseconds) > 0 else { return false }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = Glibc.read(master, &chunk, chunk.count)
            guard count > 0 else { return false }
            output += chunk[0..<count]
            return true
        }

        /// Reads until the output since `start` contains `text` (bounded).
        func waitFor(_ text: String, since start: Int = 0, timeout: Duration = .seconds(20)) throws {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if String(decoding: output[min(start, output.count)...], as: UTF8.self).contains(text) { return }
                read(within: 50)
            }
            Issue.record("never saw \"\(text)\" in \(String(decoding: output.suffix(2_000), as: UTF8.self).debugDescription)")
            throw CancellationError()
        }

        /// Reads until nothing more arrives for `milliseconds` (bounded).
        func drain(quiet milliseconds: Int32 = 300) {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline, read(within: milliseconds) {}
        }
    }

    /// Moving the selection in the customer list writes the two marker cells and the cursor moves
    /// between them, about a dozen bytes; `make bench` reports the figure (goal ≤ 24).
    @Test func aSelectionMoveWritesAFewBytes() async throws {
        let terminal = try PTY()
        // Curses skips cells that are already right, so the screen's text is not in one piece:
        // wait for a customer id, then for quiet.
        try terminal.waitFor("cus_")
        terminal.drain()
        terminal.send("\u{1B}OB")  // from the search field into the list
        try terminal.waitFor("\u{25B8}")
        terminal.drain()
        let start = terminal.output.count
        let moves = 20
        for move in 0..<moves {
            let mark = terminal.output.count
            terminal.send((move / 5).isMultiple(of: 2) ? "\u{1B}OB" : "\u{1B}OA")
            try terminal.waitFor("\u{25B8}", since: mark)
        }
        terminal.drain()
        let perMove = Double(terminal.output.count - start) / Double(moves)
        #expect(perMove <= 24, "\(perMove) bytes per move: \(String(decoding: terminal.output[start...], as: UTF8.self).debugDescription)")
        terminal.send("q")
        #expect(await terminal.child.wait(timeout: .seconds(20)) == 0)
    }

    /// The console as a process, on an `http://` server: no NIO event loop at all (its calls go
    /// through PlainHTTPTransport, a thread per call; before, NIO's loop and AsyncHTTPClient were
    /// about 3 MB of its resident memory), and on Linux no Swift runtime or Foundation loaded as
    /// shared libraries (they are linked in: see Package.swift). Quitting exits 0 (the main thread
    /// runs Foundation's run loop, not dispatch_main).
    @Test func theConsoleRunsNoNetworkThreadAndLoadsNoSwiftLibraries() async throws {
        let terminal = try PTY()
        try terminal.waitFor("cus_")
        let pid = terminal.child.pid
        let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").compactMap { task in
            try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)
        }
        #expect(!threads.contains { $0.hasPrefix("NIO-") }, "\(threads)")
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        for library in ["libswiftCore.so", "libFoundation.so", "libFoundationEssentials.so", "lib_FoundationICU.so"] {
            #expect(!maps.contains(library), "\(library) is mapped")
        }
        terminal.send("\u{1B}OB")  // out of the search field, where q would be typed
        try terminal.waitFor("\u{25B8}")
        terminal.send("q")
        #expect(await terminal.child.wait(timeout: .seconds(20)) == 0)
    }
}
