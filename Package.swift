// swift-tools-version: 6.1
// SaveDesk: the target graph follows ../shared/DESIGN.md. Each target imports only the targets
// listed as its dependencies here; Tests/ArchitectureTests checks that the sources agree.
import PackageDescription

let package = Package(
    name: "SaveDesk",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "savedesk", targets: ["savedesk"]),
        .library(name: "RetentionDomain", targets: ["RetentionDomain"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // Pure rules and models: no I/O, no clock reads.
        .target(
            name: "RetentionDomain",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // The HTTP contract (openapi.yaml → generated types, client and server protocol).
        .target(name: "SaveDeskAPI", dependencies: ["RetentionDomain"]),
        // Hummingbird app, store, billing ledger.
        .target(name: "SaveDeskServer", dependencies: ["SaveDeskAPI", "RetentionDomain"]),
        // HTTP facade, outbox, StoreKit sync queue.
        .target(name: "SaveDeskClient", dependencies: ["SaveDeskAPI", "RetentionDomain"]),
        // @MainActor @Observable flow models.
        .target(name: "SaveDeskViewModels", dependencies: ["SaveDeskClient", "RetentionDomain"]),
        // Pure terminal rendering: cells, buffers, widgets, diff, themes. No curses.
        .target(name: "TerminalKit"),
        // The ncursesw system library and the small C shim for its function-like macros.
        .systemLibrary(
            name: "CNCursesW",
            pkgConfig: "ncursesw",
            providers: [.apt(["libncurses-dev"])]
        ),
        .target(name: "CTerminalShim", dependencies: ["CNCursesW"]),
        // The only code that calls curses.
        .target(name: "TerminalKitNCurses", dependencies: ["TerminalKit", "CNCursesW", "CTerminalShim"]),
        // Screens, key maps, the app loop.
        .target(
            name: "SaveDeskTUI",
            dependencies: ["SaveDeskViewModels", "TerminalKit", "TerminalKitNCurses"]
        ),
        .executableTarget(
            name: "savedesk",
            dependencies: [
                "SaveDeskTUI", "SaveDeskServer", "SaveDeskViewModels", "SaveDeskClient", "RetentionDomain",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(name: "RetentionDomainTests", dependencies: ["RetentionDomain"], resources: [.copy("Fixtures")]),
        .testTarget(name: "ArchitectureTests"),
    ],
    swiftLanguageModes: [.v6]
)
