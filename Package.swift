// swift-tools-version: 6.1
// RoomBridge: a Linux daemon that bridges a room's NFC reader and BLE curtain to a Varlink socket.
//
// Dependency direction (see docs/architecture.md, whose module table ArchitectureTests compares with this file):
//   executables -> RoomBridgeDaemon -> adapters (VarlinkNIO, NFCReader, DBus, BlueZClient, LendingStore,
//   PostgresStore, Webhooks, RoomBridgeMetrics, WebFront) -> pure modules (RoomBridgeCore, NDEF, CurtainProtocol, JSON, Varlink,
//   Lending, Presence, Retry, SeededRandom); C modules only under adapters (and RoomBridgeCLI's doctor, pn532-sim).
// Simulators: pn532-sim -> PN532Simulator; bluez-sim -> BlueZSimulator -> DBusExport (exported objects) -> DBus,
//   and DBusTesting (its private dbus-daemon); none of them is under Tests/.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
]

let package = Package(
    name: "RoomBridge",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "roombridged", targets: ["roombridged"]),
        .executable(name: "roombridgectl", targets: ["roombridgectl"]),
        .executable(name: "pn532-sim", targets: ["pn532-sim"]),
        .executable(name: "bluez-sim", targets: ["bluez-sim"]),
        .executable(name: "roombridge-bench", targets: ["roombridge-bench"]),
        .executable(name: "idle-peer-essentials", targets: ["idle-peer-essentials"]),
        .executable(name: "idle-peer-foundation", targets: ["idle-peer-foundation"]),
        .executable(name: "roombridge-web", targets: ["roombridge-web"]),
        .executable(name: "roombridge", targets: ["roombridge"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.1"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // MARK: C libraries — one thin module each; nothing outside the adapters imports them.
        .target(name: "CShims", path: "Sources/C/CShims"),
        .systemLibrary(name: "CLibNFC", path: "Sources/C/CLibNFC", pkgConfig: "libnfc",
                       providers: [.apt(["libnfc-dev"])]),
        .systemLibrary(name: "CDBus", path: "Sources/C/CDBus", pkgConfig: "dbus-1",
                       providers: [.apt(["libdbus-1-dev"])]),
        .systemLibrary(name: "CBluetooth", path: "Sources/C/CBluetooth", pkgConfig: "bluez",
                       providers: [.apt(["libbluetooth-dev"])]),

        // MARK: Pure modules — codecs and domain logic, no I/O, no C.
        .target(name: "RoomBridgeCore", dependencies: ["CurtainProtocol", "NDEF", "Presence"], swiftSettings: swiftSettings),
        .target(name: "NDEF", dependencies: ["JSON"], swiftSettings: swiftSettings),
        .target(name: "CurtainProtocol", swiftSettings: swiftSettings),
        .target(name: "JSON", swiftSettings: swiftSettings),
        .target(name: "Varlink", dependencies: ["JSON"], swiftSettings: swiftSettings),
        .target(name: "Lending", dependencies: ["JSON", "RoomBridgeCore", "Retry"], swiftSettings: swiftSettings),
        .target(name: "Presence", swiftSettings: swiftSettings),
        // The one exponential backoff: reconnects to bluetoothd, the PostgreSQL probe, the outbox's retries.
        .target(name: "Retry", swiftSettings: swiftSettings),

        // MARK: Adapters — I/O at the edges, depending inward on the pure modules.
        .target(name: "VarlinkNIO", dependencies: [
            "Varlink", "CShims",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        .target(name: "NFCReader", dependencies: [
            "RoomBridgeCore", "NDEF", "CLibNFC", "CShims",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        .target(name: "DBus", dependencies: ["CDBus"], swiftSettings: swiftSettings),
        .target(name: "BlueZClient", dependencies: [
            "RoomBridgeCore", "CurtainProtocol", "DBus", "Presence", "Retry",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        .target(name: "LendingStore", dependencies: [
            "Lending", "CurtainProtocol", "RoomBridgeCore",
            .product(name: "GRDB", package: "GRDB.swift"),
        ], swiftSettings: swiftSettings),
        // PostgreSQL through postgres-nio: the same store interface for several kiosks on one database.
        .target(name: "PostgresStore", dependencies: [
            "Lending", "CurtainProtocol", "JSON", "Retry", "RoomBridgeCore",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        // The outbox's delivery: signed HTTP POSTs through async-http-client.
        .target(name: "Webhooks", dependencies: [
            "Lending", "JSON", "Retry",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], swiftSettings: swiftSettings),
        // The Varlink methods as typed parameters and replies, for the clients (web, CLI, tests).
        .target(name: "RoomBridgeAPI", dependencies: ["Lending", "RoomBridgeCore", "Varlink"], swiftSettings: swiftSettings),
        .target(name: "RoomBridgeInterfaces", dependencies: [
            "RoomBridgeAPI", "RoomBridgeCore", "CurtainProtocol", "Lending", "Varlink",
        ], swiftSettings: swiftSettings),

        // Prometheus metrics on a loopback HTTP port (metrics.listen), through swift-metrics.
        .target(name: "RoomBridgeMetrics", dependencies: [
            "RoomBridgeCore",
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ], swiftSettings: swiftSettings),

        // MARK: Configuration and diagnostics, shared by the daemon and the CLI.
        .target(name: "RoomBridgeConfig", dependencies: [
            "Presence", "Lending", "RoomBridgeCore", .product(name: "TOMLKit", package: "TOMLKit"),
        ], swiftSettings: swiftSettings),
        .target(name: "Diagnostics", dependencies: [
            "RoomBridgeConfig", "RoomBridgeCore", "Varlink", "VarlinkNIO",
        ], swiftSettings: swiftSettings),

        // MARK: Composition and executables.
        .target(name: "RoomBridgeDaemon", dependencies: [
            "RoomBridgeAPI", "RoomBridgeConfig", "RoomBridgeCore", "RoomBridgeInterfaces", "RoomBridgeMetrics", "Varlink", "VarlinkNIO",
            "NFCReader", "NDEF", "BlueZClient", "CurtainProtocol", "Lending", "LendingStore", "PostgresStore", "Presence", "Retry", "Webhooks",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        ], swiftSettings: swiftSettings),
        .executableTarget(name: "roombridged", dependencies: ["RoomBridgeDaemon"], swiftSettings: swiftSettings),
        // roombridgectl's commands, a library so that the multi-call `roombridge` links them too.
        .target(name: "RoomBridgeCLI", dependencies: [
            "Varlink", "VarlinkNIO", "RoomBridgeAPI", "RoomBridgeCore", "CurtainProtocol", "RoomBridgeConfig", "Diagnostics",
            "NFCReader", "BlueZClient", "DBus", "Lending", "LendingStore", "PostgresStore",
            "CBluetooth", // the kernel's Bluetooth, for doctor only (roombridged does not link libbluetooth)
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        .executableTarget(name: "roombridgectl", dependencies: ["RoomBridgeCLI"], swiftSettings: swiftSettings),

        // MARK: The web front end — a Varlink client of roombridged (see docs/web.md).
        .target(name: "WebFront", dependencies: [
            "JSON", "Varlink", "VarlinkNIO", "Lending", "RoomBridgeAPI", "RoomBridgeCore", "CurtainProtocol",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "MultipartKit", package: "multipart-kit"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "CryptoExtras", package: "swift-crypto"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: swiftSettings),
        .executableTarget(name: "roombridge-web", dependencies: ["WebFront"], swiftSettings: swiftSettings),
        // The package's one program: the three above in one executable, installed once and linked
        // under their names (docs/benchmarks.md, "Package size").
        .executableTarget(name: "roombridge", dependencies: ["RoomBridgeDaemon", "RoomBridgeCLI", "WebFront"],
                          swiftSettings: swiftSettings),

        .executableTarget(name: "roombridge-bench", dependencies: [
            "Varlink", "NDEF", "PN532Simulator", "RoomBridgeCore", "SeededRandom", "CurtainProtocol",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Subprocess", package: "swift-subprocess"),
            .product(name: "SystemPackage", package: "swift-system"),
        ], swiftSettings: swiftSettings),

        // roombridge-bench's peers for idle memory: minimal Swift programs that only wait.
        .executableTarget(name: "idle-peer-essentials", swiftSettings: swiftSettings),
        .executableTarget(name: "idle-peer-foundation", swiftSettings: swiftSettings),

        // The Varlink project's conformance test (org.varlink.certification) on our Varlink
        // server and client; a test tool, not shipped.
        .executableTarget(name: "varlink-cert", dependencies: [
            "Varlink", "VarlinkNIO",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: swiftSettings),

        .executableTarget(name: "lending-bench", dependencies: [
            "Lending", "LendingStore", "PostgresStore", "RoomBridgeCore", .product(name: "GRDB", package: "GRDB.swift"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
        ], swiftSettings: swiftSettings),

        // MARK: Simulators at the hardware boundary (shipped with the product).
        // SplitMix64, shared by the simulators' noise, the benchmark's delays and property tests.
        .target(name: "SeededRandom", swiftSettings: swiftSettings),
        .target(name: "PN532Simulator", dependencies: ["CShims", "JSON", "NDEF"], swiftSettings: swiftSettings),
        .executableTarget(name: "pn532-sim", dependencies: [
            "PN532Simulator",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: swiftSettings),
        // Exported D-Bus objects (methods, properties, introspection, ObjectManager) on DBus's connection:
        // the simulator's side of the bus; the daemon only calls.
        .target(name: "DBusExport", dependencies: ["DBus"], swiftSettings: swiftSettings),
        // A private dbus-daemon, spawned through swift-subprocess: bluez-sim's own bus, and the D-Bus suites'.
        .target(name: "DBusTesting", dependencies: [
            .product(name: "Subprocess", package: "swift-subprocess"),
            .product(name: "SystemPackage", package: "swift-system"),
        ], swiftSettings: swiftSettings),
        .target(name: "BlueZSimulator", dependencies: [
            "DBus", "DBusExport", "CurtainProtocol", "Presence", "SeededRandom",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        .executableTarget(name: "bluez-sim", dependencies: [
            "BlueZSimulator", "DBus", "CurtainProtocol", "DBusTesting",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ], swiftSettings: swiftSettings),

        // MARK: Tests mirror modules; TestSupport holds what every suite shares (the `eventually` wait).
        .target(name: "TestSupport", dependencies: ["RoomBridgeCore"], path: "Tests/TestSupport", swiftSettings: swiftSettings),
        // The reference tools (dbus-send, gdbus, busctl, bluetoothctl) run to completion through swift-subprocess.
        .target(name: "DBusTestSupport", dependencies: [
            .product(name: "Subprocess", package: "swift-subprocess"),
        ], path: "Tests/DBusTestSupport", swiftSettings: swiftSettings),
        .testTarget(name: "RoomBridgeCoreTests", dependencies: ["TestSupport", "RoomBridgeCore", "CurtainProtocol"], swiftSettings: swiftSettings),
        .testTarget(name: "NDEFTests", dependencies: ["TestSupport", "NDEF", "SeededRandom"], resources: [.copy("Fixtures")], swiftSettings: swiftSettings),
        .testTarget(name: "PresenceTests", dependencies: ["TestSupport", "Presence"], swiftSettings: swiftSettings),
        .testTarget(name: "CurtainProtocolTests", dependencies: ["TestSupport", "CurtainProtocol"], swiftSettings: swiftSettings),
        .testTarget(name: "JSONTests", dependencies: ["TestSupport", "JSON"], swiftSettings: swiftSettings),
        .testTarget(name: "VarlinkTests", dependencies: ["TestSupport", "JSON", "Varlink", "VarlinkNIO",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        .testTarget(name: "NFCReaderTests", dependencies: ["TestSupport", "NFCReader", "NDEF", "PN532Simulator",
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        .testTarget(name: "DBusTests", dependencies: ["TestSupport", "DBusTestSupport", "DBusTesting", "DBus", "DBusExport",
            .product(name: "Subprocess", package: "swift-subprocess"),
        ], swiftSettings: swiftSettings),
        .testTarget(name: "BlueZClientTests", dependencies: ["TestSupport", "DBusTesting", "BlueZClient", "BlueZSimulator", "DBus", "CurtainProtocol", "RoomBridgeCore", "Presence", "Retry"], swiftSettings: swiftSettings),
        .testTarget(name: "LendingTests", dependencies: [
            "TestSupport", "Lending", "JSON", "LendingStore", "NDEF", "Retry", "RoomBridgeCore", .product(name: "GRDB", package: "GRDB.swift"),
        ], swiftSettings: swiftSettings),
        // The store contract suites run against SQLite and PostgreSQL (ROOMBRIDGE_PG_URL).
        .testTarget(name: "LendingStoreTests", dependencies: ["TestSupport", "Lending", "CurtainProtocol", "JSON",
            "LendingStore", .product(name: "GRDB", package: "GRDB.swift"),
            "PostgresStore", .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
        ], swiftSettings: swiftSettings),
        .testTarget(name: "BlueZSimulatorTests", dependencies: ["TestSupport", "DBusTesting", "BlueZSimulator", "DBus", "CurtainProtocol", "Presence"], swiftSettings: swiftSettings),
        .testTarget(name: "RoomBridgeInterfacesTests", dependencies: ["TestSupport", 
            "RoomBridgeInterfaces", "RoomBridgeAPI", "RoomBridgeCore", "CurtainProtocol", "Varlink", "VarlinkNIO", "Lending", "LendingStore", "NDEF",
        ], swiftSettings: swiftSettings),
        .testTarget(name: "RoomBridgeConfigTests", dependencies: ["TestSupport", "RoomBridgeConfig"], swiftSettings: swiftSettings),
        .testTarget(name: "DiagnosticsTests", dependencies: ["TestSupport", "Diagnostics", "RoomBridgeConfig", "RoomBridgeCore"], swiftSettings: swiftSettings),
        .testTarget(name: "WebFrontTests", dependencies: ["TestSupport", "WebFront", "RoomBridgeCore", "Presence", "JSON"], swiftSettings: swiftSettings),
        .testTarget(name: "WebhooksTests", dependencies: ["TestSupport", "Webhooks", "Lending"], swiftSettings: swiftSettings),
        // docs/architecture.md's module table against this file (read as text).
        .testTarget(name: "ArchitectureTests", swiftSettings: swiftSettings),
        .testTarget(name: "RetryTests", dependencies: ["Retry"], swiftSettings: swiftSettings),
        // The CLI's own pure parts (terminal widths).
        .testTarget(name: "RoomBridgeCLITests", dependencies: ["RoomBridgeCLI"], swiftSettings: swiftSettings),
        .testTarget(name: "RoomBridgeDaemonTests", dependencies: ["TestSupport", "RoomBridgeDaemon", "RoomBridgeInterfaces", "RoomBridgeCore", "CurtainProtocol"], swiftSettings: swiftSettings),
    ]
)
