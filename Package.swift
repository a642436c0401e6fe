// swift-tools-version: 6.1
// SaveDesk: the target graph follows docs/architecture.md. Each target imports only the targets
// listed as its dependencies here; Tests/ArchitectureTests checks that the sources agree.
import PackageDescription

/// The console's start laid out together by lld (`make release` sets it): a linker script that puts
/// the code it runs when it starts, shows the home screen and moves the selection first, made by
/// scripts/console-order.sh from a profiled run. A release link without it lays the code out as
/// the objects come.
let consoleLayout = Context.environment["SAVEDESK_CONSOLE_LAYOUT"]
/// Where the console's link writes lld's map of it (which object's section went where), when set:
/// scripts/console-order.sh reads it to name the sections a profiled run touched (`make release`
/// and `make test` set it).
let consoleMap = Context.environment["SAVEDESK_CONSOLE_MAP"]

let package = Package(
    name: "SaveDesk",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "savedesk", targets: ["savedesk"]),
        .executable(name: "savedesk-server", targets: ["savedesk-server"]),
        .library(name: "RetentionDomain", targets: ["RetentionDomain"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-openapi-generator.git", from: "1.14.3"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", from: "1.13.4"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/swift-openapi-hummingbird.git", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", from: "1.5.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        // Pure rules and models: no I/O, no clock reads.
        .target(
            name: "RetentionDomain"
        ),
        // The HTTP contract (openapi.yaml → generated types, client and server protocol).
        .target(
            name: "SaveDeskAPI",
            dependencies: ["RetentionDomain", .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            // The spec is also a resource: the server reads its audiences and limits at start.
            resources: [.copy("openapi.yaml")],
            plugins: [.plugin(name: "OpenAPIGenerator", package: "swift-openapi-generator")]
        ),
        // Hummingbird app, store, billing ledger.
        .target(
            name: "SaveDeskServer",
            dependencies: [
                "SaveDeskAPI", "RetentionDomain",
                // glibc's mallopt: how the process keeps the memory it frees (HeapTuning).
                "CMalloc",
                "CSQLiteConfig",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "OpenAPIHummingbird", package: "swift-openapi-hummingbird"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // The pool's own error type (a database that cannot be reached trips its breaker).
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                // The SQLite writer's own thread (NIOThreadPool).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // Stripe's API, when it keeps the web subscriptions.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            resources: [.copy("Demo/Files")]
        ),
        // HTTP facade, outbox, StoreKit sync queue.
        .target(
            name: "SaveDeskClient",
            dependencies: [
                "SaveDeskAPI", "RetentionDomain",
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        // @MainActor @Observable flow models.
        .target(name: "SaveDeskViewModels", dependencies: ["SaveDeskClient", "RetentionDomain"]),
        // Pure terminal rendering: cells, buffers, widgets, diff, themes. No curses.
        .target(name: "TerminalKit", dependencies: [.product(name: "TOMLKit", package: "TOMLKit")]),
        // The theme files of themes/, bundled so they are found from any working directory.
        .target(
            name: "SaveDeskThemes", path: "themes",
            exclude: ["README.md"],
            resources: [.copy("default.toml"), .copy("high-contrast.toml"), .copy("light.toml"), .copy("mono.toml")]
        ),
        // glibc's <malloc.h>, for the server's heap settings.
        .systemLibrary(name: "CMalloc"),
        // SQLite's process-wide settings (sqlite3_config, variadic in C).
        .systemLibrary(name: "CSQLiteConfig"),
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
            dependencies: ["SaveDeskViewModels", "TerminalKit", "TerminalKitNCurses", "SaveDeskThemes"]
        ),
        // What both command-line tools share (the usage-error exit code).
        .target(
            name: "SaveDeskCommandLine",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The console and the headless client commands: no server code (savedesk-server has it).
        .executableTarget(
            name: "savedesk",
            dependencies: [
                "SaveDeskTUI", "SaveDeskViewModels", "SaveDeskClient", "RetentionDomain", "SaveDeskCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            // One static executable: the Swift runtime, Foundation, curses, libstdc++ and libc linked
            // in, nothing loaded. The dynamic linker's symbol binding of ~20 Swift libraries was most
            // of the console's start (perf: 7 of 18 ms to the first frame in ld.so, as much again
            // in the kernel's page faults for it); with the runtime linked in (-static-stdlib) libc,
            // libstdc++ and libm still cost 2.7 MB of mapped pages and the loader's relocations.
            // Static, the linker keeps only what is used and can lay it out with the rest.
            // Names resolve as before: static glibc reads /etc/hosts and asks DNS itself (strace).
            linkerSettings: [.unsafeFlags([
                "-static-executable", "-use-ld=lld",
                // What Foundation's static archives need (the dynamic modules the targets were
                // compiled against name only Foundation); lld finds them in any order.
                "-Xlinker", "-lCoreFoundation", "-Xlinker", "-l_FoundationCollections", "-Xlinker", "-l_FoundationICU",
                "-Xlinker", "-l_FoundationCShims",
            ], .when(platforms: [.linux]))]
            + (consoleMap.map { [.unsafeFlags(["-Xlinker", "-Map=\($0)"], .when(platforms: [.linux]))] } ?? [])
            + (consoleLayout.map { [.unsafeFlags(
                ["-Xlinker", "-T", "-Xlinker", $0],
                .when(platforms: [.linux], configuration: .release)
            )] } ?? [])
        ),
        // The backend: serve, config validate, and the demo's server (savedesk demo starts it).
        .executableTarget(
            name: "savedesk-server",
            dependencies: [
                "SaveDeskServer", "SaveDeskCommandLine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `make bench`: backend throughput and latency next to a bare Hummingbird route.
        .executableTarget(
            name: "savedesk-bench",
            dependencies: [
                "SaveDeskServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "SQLKit", package: "sql-kit"),
                "CBenchPTY",
            ],
            path: "Benchmarks/SaveDeskBench"
        ),
        .target(name: "CBenchPTY", path: "Benchmarks/CBenchPTY"),
        // Tests that run a binary start it with posix_spawn (see ChildProcess).
        // …and every test server keeps its data in TestDatabase (SQLite, or PostgreSQL when the run says).
        .target(
            name: "TestSupport",
            dependencies: [
                "SaveDeskServer", .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
                // The Stripe double (StripeDouble.swift), shaped by Stripe's published fixtures.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            path: "Tests/TestSupport",
            resources: [.copy("Fixtures")]
        ),
        .testTarget(name: "RetentionDomainTests", dependencies: ["RetentionDomain"], resources: [.copy("Fixtures")]),
        .testTarget(name: "ArchitectureTests"),
        .testTarget(name: "TerminalKitTests", dependencies: ["TerminalKit", "SaveDeskThemes"]),
        // Screens rendered into buffers (snapshots), and the built binary driven in tmux.
        .testTarget(
            name: "SaveDeskTUITests",
            dependencies: [
                "SaveDeskTUI", "SaveDeskViewModels", "SaveDeskClient", "TerminalKit", "SaveDeskServer", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            resources: [.copy("Snapshots")]
        ),
        .testTarget(
            name: "SaveDeskClientTests",
            dependencies: [
                "SaveDeskClient", "SaveDeskServer", "RetentionDomain", "TestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "SaveDeskViewModelsTests",
            dependencies: [
                "SaveDeskViewModels", "SaveDeskClient", "SaveDeskServer", "RetentionDomain", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
            ]
        ),
        // Every SDK call's answer decoded with the SDK's own shapes (wire-protocol-sdk.md).
        .testTarget(
            name: "SDKContractTests",
            dependencies: [
                "SaveDeskServer", "TestSupport", .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The `savedesk` binary run as a process against an in-process server.
        .testTarget(
            name: "SaveDeskCommandTests",
            dependencies: [
                "SaveDeskServer", "SaveDeskClient", "RetentionDomain", "SaveDeskCommandLine", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Golden")]
        ),
        .testTarget(
            name: "SaveDeskServerTests",
            dependencies: [
                "SaveDeskServer", "SaveDeskAPI", "RetentionDomain", "TestSupport",
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            resources: [.copy("Configs")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
