// swift-tools-version: 6.2
import PackageDescription

// The commit `haul --version` names: HAUL_COMMIT from the environment of `swift build`
// (Scripts/build-release.sh sets it from git), handed to CHaulSys as a C string literal. A value
// that is not 1 to 64 letters, digits, '.', '+' or '-' is ignored, as is its absence: the build
// then says "commit unknown".
let buildCommitSettings: [CSetting] = Context.environment["HAUL_COMMIT"].map { commit in
    let allowed = commit.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."z").contains($0) || ("A"..."Z").contains($0)
                                                     || ".+-".unicodeScalars.contains($0) }
    return allowed && (1...64).contains(commit.unicodeScalars.count) ? [.define("HAUL_COMMIT", to: "\"\(commit)\"")] : []
} ?? []

let package = Package(
    name: "Haul",
    platforms: [.macOS(.v15), .iOS(.v18)],
    products: [
        .library(name: "Haul", targets: ["Haul"]),
        // The SwiftUI-facing view model, apart so that the engine and the service carry no UI type.
        .library(name: "HaulModel", targets: ["HaulModel"]),
        // The URLSession transport, apart so that programs without it do not load Foundation's networking.
        .library(name: "HaulURLSession", targets: ["HaulURLSession"]),
        .library(name: "HaulSigning", targets: ["HaulSigning"]),
        .library(name: "HaulServer", targets: ["HaulServer"]),
        .library(name: "HaulCLI", targets: ["HaulCLI"]),
        .library(name: "HaulService", targets: ["HaulService"]),
        .library(name: "HaulDaemon", targets: ["HaulDaemon"]),
        .executable(name: "haul", targets: ["haul"]),
        // `haul --engine=urlsession` runs this one (the same command, with the URLSession transport).
        .executable(name: "haul-urlsession", targets: ["HaulURLSessionCommand"]),
        .executable(name: "haul-soak", targets: ["HaulSoak"]),
        .executable(name: "haul-test-origin", targets: ["HaulTestOrigin"]),
    ],
    targets: [
        // C shims: OpenSSL macros and Linux system calls Swift cannot reach directly.
        .target(
            name: "CHaulTLS",
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),
        .target(name: "CHaulSys", cSettings: buildCommitSettings),
        // The system SQLite (libsqlite3-dev on Debian and Ubuntu), for the download service's state file.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", providers: [.apt(["libsqlite3-dev"])]),

        // The layers of the library, lowest first: each imports only those above it here.
        .target(name: "HaulCore", dependencies: ["CHaulSys"]),
        // JSON values, their parser and writer: the daemon's JSON-RPC and the CLI's --json events.
        .target(name: "HaulJSON"),
        .target(name: "HaulHTTP", dependencies: ["HaulCore", "CHaulTLS", "CHaulSys"]),
        // Hashes and HMAC through the system OpenSSL: checksums, resume records, URL signing, the daemon's handshakes.
        .target(name: "HaulCrypto", dependencies: ["HaulCore", "CHaulTLS"]),
        .target(name: "Haul", dependencies: ["HaulCore", "HaulCrypto", "HaulHTTP", "CHaulSys"]),
        // Metalink 4 (RFC 5854) documents read and checked: one file from many sources. Pure: no I/O.
        .target(name: "HaulMetalink", dependencies: ["HaulCore", "HaulCrypto"]),
        .target(name: "HaulURLSession", dependencies: ["Haul", "HaulHTTP", "HaulCore"]),
        // The S3 and OSS URL signers: Haul's URLSigner protocol implemented, apart from the engine.
        .target(name: "HaulSigning", dependencies: ["Haul", "HaulCore", "HaulCrypto", "HaulHTTP"]),
        // The persistent download service (SQLite), and the daemon that serves it over JSON-RPC.
        .target(name: "HaulService", dependencies: ["Haul", "HaulCore", "CSQLite"]),
        // The view model (an @Observable DownloadModel) over a Downloader or a service's download.
        .target(name: "HaulModel", dependencies: ["Haul", "HaulService"]),
        .target(name: "HaulDaemon", dependencies: ["HaulService", "Haul", "HaulCore", "HaulCrypto", "HaulJSON", "HaulMetalink"]),
        // The web dashboard, a page provider the CLI hands to the daemon's server: the files under
        // Assets/, embedded in the code at build time.
        .target(name: "HaulDashboard", dependencies: ["HaulDaemon", "HaulCore", "HaulCrypto"], resources: [.embedInCode("Assets")]),
        .target(name: "HaulServer", dependencies: ["CHaulTLS", "CHaulSys"]),
        .target(name: "HaulCLI", dependencies: ["Haul", "HaulCore", "HaulJSON", "HaulSigning", "HaulService", "HaulDaemon", "HaulDashboard",
                                                "HaulMetalink"]),
        // `haul demo` downloads from the test server, linked here only.
        .executableTarget(name: "haul", dependencies: ["HaulCLI", "HaulServer"]),
        .executableTarget(name: "HaulURLSessionCommand", dependencies: ["HaulCLI", "HaulURLSession"],
                          path: "Sources/haul-urlsession"),
        // Scripts/soak.sh: many downloads against a server with random faults; checks bytes and leaks.
        .executableTarget(name: "HaulSoak", dependencies: ["Haul", "HaulServer"]),
        // Scripts/interop-aria2p.py and bench.py's daemon part: the loopback test server as a program.
        .executableTarget(name: "HaulTestOrigin", dependencies: ["HaulServer"]),

        .target(name: "HaulTestSupport", dependencies: ["Haul", "HaulCore", "HaulServer"], path: "Tests/HaulTestSupport"),
        .testTarget(name: "HaulCoreTests", dependencies: ["HaulCore", "HaulTestSupport"]),
        .testTarget(name: "HaulMetalinkTests", dependencies: ["HaulMetalink", "HaulCrypto"]),
        .testTarget(name: "HaulHTTPTests", dependencies: ["HaulHTTP", "HaulCore", "HaulServer", "HaulTestSupport", "CHaulTLS"]),
        .testTarget(name: "HaulTests", dependencies: ["Haul", "HaulCrypto", "HaulSigning", "HaulHTTP", "HaulCore", "HaulURLSession", "HaulServer", "HaulTestSupport"]),
        .testTarget(name: "HaulServerTests", dependencies: ["HaulServer", "HaulTestSupport"]),
        .testTarget(name: "HaulDashboardTests", dependencies: ["HaulDashboard", "HaulDaemon", "CHaulTLS", "HaulTestSupport"]),
        .testTarget(name: "HaulServiceTests", dependencies: ["HaulService", "Haul", "HaulCore", "HaulServer", "HaulTestSupport"]),
        .testTarget(name: "HaulModelTests", dependencies: ["HaulModel", "HaulService", "Haul", "HaulCore", "HaulServer", "HaulTestSupport"]),
        .testTarget(name: "HaulDaemonTests", dependencies: ["HaulDaemon", "HaulDashboard", "HaulService", "Haul", "HaulCore", "HaulCrypto", "HaulJSON", "HaulServer",
                                                        "HaulTestSupport"]),
        .testTarget(name: "HaulCLITests", dependencies: ["HaulCLI", "Haul", "HaulHTTP", "HaulCore", "HaulURLSession", "HaulServer", "HaulTestSupport",
                                                     "HaulDaemon", "HaulJSON", "HaulSigning"]),

        // Examples (Scripts/run-examples.sh runs them): each serves itself from HaulServer on loopback.
        .target(name: "ExampleSupport", dependencies: ["HaulServer"], path: "Examples/Support"),
        .executableTarget(name: "progress-stream", dependencies: ["Haul", "HaulServer", "ExampleSupport"],
                          path: "Examples/progress-stream"),
        .executableTarget(name: "single-shot", dependencies: ["Haul", "HaulServer", "ExampleSupport"],
                          path: "Examples/single-shot"),
        .executableTarget(name: "download-manager", dependencies: ["Haul", "HaulServer", "ExampleSupport"],
                          path: "Examples/download-manager"),
    ],
    swiftLanguageModes: [.v6]
)

// The fuzz targets (a library, so the tests replay their corpora) and, with HAUL_FUZZ=1, the
// libFuzzer program that runs them (Scripts/fuzz.sh builds it with -sanitize=fuzzer,address).
package.targets.append(.target(name: "HaulFuzzTargets", dependencies: ["Haul", "HaulHTTP", "HaulCore", "HaulJSON", "HaulService", "HaulDaemon",
                                                                         "HaulMetalink"]))
package.targets.append(.testTarget(name: "HaulFuzzTests", dependencies: ["HaulFuzzTargets"]))
if Context.environment["HAUL_FUZZ"] == "1" {
    package.products.append(.executable(name: "haul-fuzz", targets: ["HaulFuzz"]))
    package.targets.append(.executableTarget(name: "HaulFuzz", dependencies: ["HaulFuzzTargets"], path: "Fuzz/Entry"))
}

// One settings loop over every Swift target, as swift-log does.
for target in package.targets where !["CHaulTLS", "CHaulSys", "CSQLite"].contains(target.name) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
