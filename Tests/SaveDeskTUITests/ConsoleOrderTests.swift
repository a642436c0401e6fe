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
    /// `make release` first removes the objects of its folder that were compiled without
    /// -function-sections (scripts/release-objects.py): a module compiled again with the flag keeps
    /// a file's old object while the code it generates hashes the same, so an object a plain
    /// `swift build -c release` wrote stayed, its code one .text the layout can only place whole.
    @Test("removes the release objects compiled without function sections and keeps the others")
    func removesObjectsWithoutFunctionSections() async throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("savedesk-objects-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = directory.appendingPathComponent("log")
        let source = directory.appendingPathComponent("Shapes.swift")
        // A module as the build compiles one: several threads, whole module, optimized; each module's
        // objects in its folder as SwiftPM names them (Shapes.swift.o).
        for (module, flags) in [("Plain", [String]()), ("Sectioned", ["-Xfrontend", "-function-sections"])] {
            let folder = directory.appendingPathComponent("\(module).build")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try """
                public struct Shape: Equatable { var sides: [Int]; var name: String }
                @inline(never) func perimeter(_ shape: Shape) -> Int { shape.sides.reduce(0, +) }
                public func describe(_ shape: Shape) -> String { "\\(shape.name): \\(perimeter(shape))" }
                """.write(to: source, atomically: true, encoding: .utf8)
            let compile = try ChildProcess.spawn(
                "swiftc",
                ["-c", "-O", "-wmo", "-num-threads", "2", "-parse-as-library", "-module-name", module, source.path,
                 "-o", folder.appendingPathComponent("Shapes.swift.o").path] + flags,
                stdout: log.path, stderr: log.path
            )
            let status = await compile.wait(timeout: .seconds(120))
            try #require(status == 0, "swiftc: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
        }
        let script = try ChildProcess.spawn(
            "python3", [root.appendingPathComponent("scripts/release-objects.py").path, directory.path],
            stdout: log.path, stderr: log.path
        )
        let status = await script.wait(timeout: .seconds(60))
        let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        try #require(status == 0, "release-objects.py: \(said)")
        #expect(said.contains("removed 1 of 2 objects compiled without -function-sections (in 1 module: Plain)"))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("Plain.build/Shapes.swift.o").path))
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("Sectioned.build/Shapes.swift.o").path))
    }
}
