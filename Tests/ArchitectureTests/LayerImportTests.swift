import Foundation
import Testing

/// The layers of docs/architecture.md: each target may import only the project modules listed here.
/// A new `import` across layers fails this test before it lands.
@Suite("Layering")
struct LayerImportTests {
    static let allowed: [String: Set<String>] = [
        "RetentionDomain": [],
        "SaveDeskAPI": ["RetentionDomain"],
        "SaveDeskServer": ["SaveDeskAPI", "RetentionDomain", "CMalloc", "CSQLiteConfig"],
        "CMalloc": [],
        "CSQLiteConfig": [],
        "SaveDeskClient": ["SaveDeskAPI", "RetentionDomain"],
        "SaveDeskViewModels": ["SaveDeskClient", "RetentionDomain"],
        "TerminalKit": [],
        "CNCursesW": [],
        "CTerminalShim": ["CNCursesW"],
        "TerminalKitNCurses": ["TerminalKit", "CNCursesW", "CTerminalShim"],
        "SaveDeskThemes": [],
        "SaveDeskTUI": ["SaveDeskViewModels", "TerminalKit", "TerminalKitNCurses", "SaveDeskThemes"],
        // The console never links the server: savedesk-server carries it.
        "SaveDeskCommandLine": [],
        "savedesk": ["SaveDeskTUI", "SaveDeskViewModels", "SaveDeskClient", "RetentionDomain", "SaveDeskCommandLine"],
        "savedesk-server": ["SaveDeskServer", "SaveDeskCommandLine"],
    ]
    /// Modules that may only be imported where curses is allowed.
    static let cursesModules: Set<String> = ["CNCursesW", "CTerminalShim"]

    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Where a target's sources are (Package.swift gives SaveDeskThemes the themes/ folder).
    static func folder(of target: String) -> String { target == "SaveDeskThemes" ? "themes" : "Sources/\(target)" }

    static func swiftFiles(in target: String) -> [URL] {
        let directory = root.appendingPathComponent(folder(of: target))
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    static func imports(of file: URL) throws -> Set<String> {
        let text = try String(contentsOf: file, encoding: .utf8)
        let pattern = try Regex(#"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public\s+|internal\s+|package\s+)?import\s+(?:(?:struct|class|enum|func|protocol|typealias|var|let)\s+)?([A-Za-z_][A-Za-z0-9_]*)"#)
        return Set(text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
            (try? pattern.firstMatch(in: String(line)))?.output[1].substring.map(String.init)
        })
    }

    @Test func everyDesignedTargetExists() {
        for target in Self.allowed.keys {
            var isDirectory: ObjCBool = false
            let path = Self.root.appendingPathComponent(Self.folder(of: target)).path
            #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue,
                    "\(Self.folder(of: target)) is missing")
        }
    }

    @Test(arguments: Array(allowed.keys).sorted())
    func importsFollowTheLayers(target: String) throws {
        let projectModules = Set(Self.allowed.keys)
        for file in Self.swiftFiles(in: target) {
            let used = try Self.imports(of: file).intersection(projectModules)
            let forbidden = used.subtracting(Self.allowed[target]!)
            #expect(forbidden.isEmpty, "\(file.lastPathComponent) in \(target) imports \(forbidden.sorted())")
        }
    }

    /// Inside the server, SQL lives in the repositories (`Repositories/`) and below them: the store,
    /// its engines and the schema (`Store/`). A service that reaches for SQLKit (or a raw
    /// connection) fails here.
    static let sqlFiles: Set<String> = [
        "Store/Store.swift", "Store/StoreEngine.swift", "Store/SQLiteEngine.swift", "Store/PostgresEngine.swift",
        "Store/ReaderPool.swift", "Store/SQLiteThreadConnection.swift", "Store/SQLiteStatementText.swift", "Store/PostgresPreparedDatabase.swift",
        "Store/Schema.swift",
    ]

    /// A server source's path below `Sources/SaveDeskServer/`.
    static func serverPath(_ file: URL) -> String {
        let root = Self.root.appendingPathComponent("Sources/SaveDeskServer").standardizedFileURL.path + "/"
        return String(file.standardizedFileURL.path.dropFirst(root.count))
    }

    @Test func onlyRepositoriesAndTheStoreSpeakSQL() throws {
        let files = Self.swiftFiles(in: "SaveDeskServer")
        #expect(files.contains { Self.serverPath($0).hasPrefix("Repositories/") })
        for file in files where !Self.serverPath(file).hasPrefix("Repositories/") && !Self.sqlFiles.contains(Self.serverPath(file)) {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!(try Self.imports(of: file)).contains("SQLKit"), "\(Self.serverPath(file)) imports SQLKit: its SQL belongs in a repository")
            #expect(!text.contains("any SQLDatabase"), "\(Self.serverPath(file)) takes a raw connection: take Repositories")
        }
    }

    /// The server's features, one folder each; its top holds only the entry points.
    static let serverFolders: Set<String> = [
        "", "App", "App/Logging", "App/RateLimits", "Config", "Store", "Repositories", "Validation", "Billing", "CancelFlow",
        "SwitchAndSave", "AppStore", "Desk", "Portal", "Demo", "Operations", "Customers", "Events", "Stripe",
    ]

    @Test func theServerLivesInFeatureFolders() throws {
        let files = Self.swiftFiles(in: "SaveDeskServer").map(Self.serverPath)
        #expect(files.count > 60, "the scan found the server")
        for path in files {
            let folder = path.split(separator: "/").dropLast().joined(separator: "/")
            #expect(Self.serverFolders.contains(folder), "\(path): a folder the layout does not know; add it to the docs and here")
        }
        #expect(files.filter { !$0.contains("/") }.count <= 8, "the server's top: \(files.filter { !$0.contains("/") })")
    }

    /// "Service" means one thing: what the API handlers call. A lifecycle service is a job or the
    /// store's lifecycle; a file holding only an extension of a type is named `Type+What.swift`.
    @Test func namesSayWhatAFileHolds() throws {
        let lifecycle = try Regex(#"(?m)^(?:public )?(?:final )?(?:struct|class|actor) (\w+)[^{]*:\s*(?:[\w, ]*, )?Service\b"#)
        let primary = try Regex(#"(?m)^(?:public |package |private |fileprivate )?(?:final )?(?:struct|class|enum|actor|protocol) \w+"#)
        let extensionOf = try Regex(#"(?m)^(?:public )?extension (\w+)"#)
        for file in Self.swiftFiles(in: "SaveDeskServer") {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: lifecycle) {
                let name = String(match.output[1].substring ?? "")
                #expect(!name.hasSuffix("Service"), "\(file.lastPathComponent): \(name) is a lifecycle service; name it a job or a lifecycle")
            }
            let name = file.deletingPathExtension().lastPathComponent
            if text.firstMatch(of: primary) == nil, let extended = text.firstMatch(of: extensionOf)?.output[1].substring {
                #expect(name.hasPrefix("\(extended)+"), "\(file.lastPathComponent) extends \(extended): name it \(extended)+….swift")
            }
        }
    }

    /// Screens see view models, never the client behind them: not by import, and not through a
    /// view model's or the app model's property (`app.model.client`, `session.calls`). View models
    /// keep their dependencies internal; this catches a screen that reaches one anyway.
    static var clientNames: Regex<AnyRegexOutput> { try! Regex(#"\.(client|calls)([^A-Za-z0-9_]|$)|(^|[^A-Za-z0-9_])(SaveDeskClient|Outbox|StoreKitSyncQueue)([^A-Za-z0-9_]|$)"#) }

    @Test func screensNeverReachTheClient() throws {
        let files = Self.swiftFiles(in: "SaveDeskTUI")
        #expect(!files.isEmpty)
        for file in files {
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
            for (number, line) in lines.enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                #expect((try Self.clientNames.firstMatch(in: String(line))) == nil,
                        "\(file.lastPathComponent):\(number + 1) reaches the client: \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }

    /// Screens return intents; only the app acts on them. No screen names the app, and the app
    /// never asks which screen it holds.
    @Test func screensReturnIntentsAndTheAppNeverDowncasts() throws {
        let screens = Self.swiftFiles(in: "SaveDeskTUI").filter { $0.path.contains("/Screens/") }
        #expect(screens.count >= 7)
        for file in screens {
            let text = try String(contentsOf: file, encoding: .utf8)
            #expect(!text.contains("TUIApp"), "\(file.lastPathComponent) calls the app: return an Intent")
        }
        let app = try String(contentsOf: Self.root.appendingPathComponent("Sources/SaveDeskTUI/TUIApp.swift"), encoding: .utf8)
        #expect(try Regex(#"\bas[?!]\s"#).firstMatch(in: app) == nil, "TUIApp downcasts a screen")
    }

    @Test func theClientScannerSeesAPropertyChain() throws {
        for line in ["let url = app.model.client.serverURL", "await session.calls.products()", "let q: StoreKitSyncQueue"] {
            #expect(try Self.clientNames.firstMatch(in: line) != nil, "\(line)")
        }
        #expect(try Self.clientNames.firstMatch(in: "let clientName = model.operatorName") == nil)
    }

    @Test func theImportScannerSeesEveryForm() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("imports-\(UUID()).swift")
        try """
            import Foundation
            @testable import RetentionDomain
            public import SaveDeskAPI
            @preconcurrency import TerminalKit
            import struct SaveDeskClient.Thing
            // import SaveDeskTUI
            """.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        #expect(try Self.imports(of: file) == ["Foundation", "RetentionDomain", "SaveDeskAPI", "TerminalKit", "SaveDeskClient"])
    }
}
