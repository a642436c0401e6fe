import Foundation
import TestSupport
import Testing

/// `make release` lays the console's start out together from a profiled run: scripts/console-order.sh
/// runs the built console on the demo's server under Valgrind's callgrind in tmux (start, the home
/// screen's customers, selection moves, q), looks up each address that ran in lld's map of the
/// console's link and writes a linker script that puts those sections first. A changed home screen,
/// key or server start that the script no longer drives, or a script lld refuses, fails here, not in
/// a release build. The map comes from the console's link when SAVEDESK_CONSOLE_MAP names a path
/// (`make test` sets it for the build and the run).
@Suite("the console's start layout (make release)")
struct ConsoleOrderTests {
    static let map = ProcessInfo.processInfo.environment["SAVEDESK_CONSOLE_MAP"]

    @Test(
        "lays out the code a start, the home screen and its selection moves run, libc's with it",
        .enabled(if: map.map { FileManager.default.fileExists(atPath: $0) } ?? false,
                 "needs the console linked with SAVEDESK_CONSOLE_MAP (make test sets it)")
    )
    func laysOutTheStart() async throws {
        let binaries = TmuxEndToEndTests.binary.deletingLastPathComponent()
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-order-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let layout = directory.appendingPathComponent("console-layout.ld"), log = directory.appendingPathComponent("script.log")
        let script = try ChildProcess.spawn(
            root.appendingPathComponent("scripts/console-order.sh").path,
            [binaries.appendingPathComponent("savedesk").path, binaries.appendingPathComponent("savedesk-server").path,
             try #require(Self.map), layout.path],
            stdout: log.path, stderr: log.path
        )
        let status = await script.wait(timeout: .seconds(300))
        let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        try #require(status == 0, "console-order.sh: \(said)")
        let rules = try String(contentsOf: layout, encoding: .utf8).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("*") }
        // Sections named by their object (one module's file, or an archive's member): the home
        // screen drawn and its keys taken, the list widget, and libc's code, linked in (the
        // console is one static executable). No rule twice.
        #expect(rules.count > 1_000)
        #expect(rules.contains { $0.hasPrefix("*/SaveDeskTUI.build/HomeScreen.swift.o(") })
        #expect(rules.contains { $0.hasPrefix("*/TerminalKit.build/ListView.swift.o(") })
        #expect(rules.contains { $0.hasPrefix("*libc.a:malloc.o(") })
        #expect(rules.contains { $0.hasPrefix("*libswiftCore.a:") })
        #expect(Set(rules).count == rules.count)

        // lld (the Swift toolchain's, on PATH as swift is) takes the script and places by it: the
        // home screen's object, linked alone with it, has its code in the section the script adds
        // ahead of .text.
        let object = binaries.appendingPathComponent("SaveDeskTUI.build/HomeScreen.swift.o").path
        let linked = directory.appendingPathComponent("linked"), sections = directory.appendingPathComponent("sections")
        let link = try ChildProcess.spawn(
            "ld.lld", ["-T", layout.path, "--unresolved-symbols=ignore-all", "-e", "0", "-o", linked.path, object],
            stdout: log.path, stderr: log.path
        )
        let linkStatus = await link.wait(timeout: .seconds(60))
        try #require(linkStatus == 0, "ld.lld: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        let readelf = try ChildProcess.spawn("readelf", ["-SW", linked.path], stdout: sections.path)
        #expect(await readelf.wait(timeout: .seconds(30)) == 0)
        let table = try String(contentsOf: sections, encoding: .utf8)
        #expect(table.contains(".text.start"))
    }
}
