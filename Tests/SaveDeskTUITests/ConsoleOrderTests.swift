import Foundation
import TestSupport
import Testing

/// `make release` lays the console's start out together from a profiled run: scripts/console-order.sh
/// runs the built console on the demo's server under Valgrind's callgrind in tmux (start, the home
/// screen's customers, selection moves, q) and lists the functions that ran, for lld. A changed home
/// screen, key or server start that the script no longer drives fails here, not in a release build.
@Suite("the console's start order (make release)")
struct ConsoleOrderTests {
    @Test("lists the functions a start, the home screen and its selection moves run")
    func listsTheStart() async throws {
        let binaries = TmuxEndToEndTests.binary.deletingLastPathComponent()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-order-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let order = directory.appendingPathComponent("console.order"), log = directory.appendingPathComponent("script.log")
        let script = try ChildProcess.spawn(
            root.appendingPathComponent("scripts/console-order.sh").path,
            [binaries.appendingPathComponent("savedesk").path, binaries.appendingPathComponent("savedesk-server").path, order.path],
            stdout: log.path, stderr: log.path
        )
        let status = await script.wait(timeout: .seconds(300))
        let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        try #require(status == 0, "console-order.sh: \(said)")
        let symbols = try String(contentsOf: order, encoding: .utf8).split(separator: "\n")
        // The console's own functions, by their symbols: its start, the home screen drawn, a key
        // taken on it; nothing of libc or curses (other files), no address without a name.
        #expect(symbols.count > 1_000)
        #expect(symbols.contains { $0.hasPrefix("$s11SaveDeskTUI10HomeScreenC6render4into4area7context") })
        #expect(symbols.contains { $0.hasPrefix("$s11SaveDeskTUI10HomeScreenC7perform") })
        #expect(symbols.contains { $0.hasPrefix("$s11TerminalKit8ListView") })
        #expect(!symbols.contains { $0.hasPrefix("0x") || $0 == "malloc" || $0.hasPrefix("wgetch") })
        #expect(Set(symbols).count == symbols.count)
    }
}
