// swift-tools-version:6.2
import PackageDescription

/// Every target is built in Swift 6 mode with strict concurrency; the upcoming
/// features below are the ones Hummingbird and SwiftNIO already build with.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "davgate",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "davgate", targets: ["davgate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // Layer 0: safe XML on libxml2.
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .target(name: "DAVXML", dependencies: ["CLibXML2"], swiftSettings: swiftSettings),

        // Durable files: atomic replacement, private reads, stamps, locks; Foundation and libc only.
        .target(name: "DurableFiles", swiftSettings: swiftSettings),

        // Layer 1: pure WebDAV (RFC 4918) values, parsers and renderers; no I/O.
        .target(name: "DAVProtocol", dependencies: ["DAVXML"], swiftSettings: swiftSettings),

        // Layer 1': the File Provider analog; knows nothing about HTTP.
        // sqlite3_config, variadic in C, for the index's one setting Swift cannot make.
        .target(name: "CSQLiteTuning", linkerSettings: [.linkedLibrary("sqlite3")]),
        .target(
            name: "ProviderCore",
            dependencies: [
                "DurableFiles", "CSQLiteTuning",
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's own API, for the item lookups read straight from a statement's columns (ItemColumns.swift).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                // The shared index of several instances (Index/Postgres), when `[index] url` names a server.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // SHA-256 of a staged upload's user and path names its files (Uploads/UploadStaging.swift).
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                // NIOThreadPool, where blocking file system calls run (Support/Blocking.swift).
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                // The uploader is a service of the server's group (see Uploader.swift).
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // openat2(2) with RESOLVE_BENEATH and renameat2(2), which Swift cannot
        // call through the variadic syscall(2): the directory store's only C.
        .target(name: "CResolveBeneath"),
        .target(
            name: "Upstreams",
            dependencies: [
                "ProviderCore", "DAVXML", "DAVProtocol", "CResolveBeneath",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                // SHA-256 and HMAC for S3's Signature Version 4 (S3/S3Signer.swift).
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Users",
            dependencies: [
                "DurableFiles",
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // The encrypted credentials file (the keychain of davgate); swift-crypto only.
        .target(
            name: "Vault",
            dependencies: [
                "DurableFiles",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),

        // Layer 2: HTTP. Translates requests into provider calls.
        .target(
            name: "DAVServer",
            dependencies: [
                "DAVProtocol", "ProviderCore", "Users",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "_NIOFileSystem", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        // Layer 3: configuration, first-start set-up and the command line.
        // glibc's mallinfo2 and /proc/self/statm, for the heap's slack
        // (ServiceRuntime/HeapSlack.swift); malloc.h is not in the Glibc module.
        .target(name: "CHeapStatistics"),
        // The binary's own dynamic loader tables, given back after start
        // (ServiceRuntime/LoaderTables.swift); link.h and elf.h are C.
        .target(name: "CLoaderTables"),
        // Swift concurrency's global enqueue hook, set by a link-time
        // reference (ServiceRuntime/ConcurrencyOnEventLoops.swift).
        .target(name: "CGlobalExecutorHook"),
        .target(
            name: "ServiceRuntime",
            dependencies: [
                "CHeapStatistics", "CLoaderTables", "CGlobalExecutorHook",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),

        .target(
            name: "GatewaySetup",
            dependencies: [
                "Users", "DurableFiles", "ProviderCore",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "davgate",
            dependencies: [
                "DAVServer", "Upstreams", "ProviderCore", "GatewaySetup", "Users", "Vault", "DurableFiles", "ServiceRuntime",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),

        // Unit tests, one suite per module.
        .testTarget(name: "DurableFilesTests", dependencies: ["DurableFiles"], swiftSettings: swiftSettings),
        .testTarget(name: "ServiceRuntimeTests", dependencies: ["ServiceRuntime", "DavgateTestSupport", .product(name: "NIOPosix", package: "swift-nio"),
                                                            .product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
                    swiftSettings: swiftSettings),
        .testTarget(name: "DAVXMLTests", dependencies: ["DAVXML"], swiftSettings: swiftSettings),
        .testTarget(name: "DAVProtocolTests", dependencies: ["DAVProtocol"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ProviderCoreTests",
            dependencies: [
                "ProviderCore", "Upstreams", "DavgateTestSupport", "CSQLiteTuning",
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "UpstreamsTests",
            dependencies: [
                "Upstreams", "ProviderCore", "DAVXML", "DavgateTestSupport", "CPageCacheState",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "DAVServerTests", dependencies: ["DAVServer", "DavgateTestSupport", .product(name: "NIOPosix", package: "swift-nio")],
                    swiftSettings: swiftSettings),
        .testTarget(name: "UsersTests", dependencies: ["Users"], swiftSettings: swiftSettings),
        .testTarget(name: "VaultTests", dependencies: ["Vault", "DavgateTestSupport"], swiftSettings: swiftSettings),
        .testTarget(name: "GatewaySetupTests", dependencies: ["GatewaySetup", "ProviderCore"], swiftSettings: swiftSettings),

        // Starts the real davgate binary for the test targets that need one,
        // the real servers (Apache, moto, rclone serve s3) stores are tested
        // against, and PostgreSQL 15 and HAProxy for the scale-out work
        // (docs/scale-out.md); Python/ holds the Python helpers they run.
        .target(name: "DavgateTestSupport", path: "Tests/Support", exclude: ["Python"], swiftSettings: swiftSettings),
        // cachestat(2) for the tests that check a file reached the disk
        // (whether its pages are still dirty); Debian 12's headers lack it.
        .target(name: "CPageCacheState", path: "Tests/CPageCacheState"),

        // End to end: the real davgate binary over real TLS, driven by real clients.
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "DavgateTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
