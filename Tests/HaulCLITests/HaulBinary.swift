import Foundation
import HaulTestSupport
import Testing

/// Finds and runs the built `haul` executable, for process-level tests.
///
/// The binary is looked up, in order: `$HAUL_BINARY`; beside the running test bundle or any
/// folder above it (SwiftPM puts `haul` in the same build folder as the test bundle, on Linux
/// and macOS); `.build/debug/haul` under the package that holds this source file.
enum HaulBinary {
    /// The executable's location, or `nil` when it was not built.
    static let url: URL? = locate()

    /// What a finished `haul` process left behind.
    struct Outcome: Sendable {
        /// The exit status (or `128 + signal` when a signal ended it).
        var status: Int32
        /// Everything written to standard output, as UTF-8.
        var standardOutput: String
        /// Everything written to standard error, as UTF-8.
        var standardError: String
    }

    /// Runs `haul` with `arguments` to its end (terminated after `timeout`), in a temporary
    /// working directory, without holding a thread while it runs.
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Duration = .seconds(60)) async throws -> Outcome {
        let binary = try #require(url, "the haul executable was not found; run `swift build` first or set HAUL_BINARY")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var base = ProcessInfo.processInfo.environment
        base["XDG_CONFIG_HOME"] = folder.path   // never the user's daemon.conf
        let outcome = try await runChildProcess(binary, arguments, environment: base.merging(environment) { $1 },
                                                workingDirectory: folder, timeout: timeout)
        return Outcome(status: outcome.status, standardOutput: String(decoding: outcome.standardOutput, as: UTF8.self),
                       standardError: outcome.errorText)
    }

    /// A `haul` process, not started yet: standard input empty, standard output and error going to
    /// the files `stdout` and `stderr` of `folder` (created), so a large output never blocks it.
    static func prepare(_ arguments: [String], outputIn folder: URL, workingDirectory: URL,
                        environment: [String: String]) throws -> Process {
        let binary = try #require(url, "the haul executable was not found; run `swift build` first or set HAUL_BINARY")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let outURL = folder.appendingPathComponent("stdout"), errURL = folder.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        process.currentDirectoryURL = workingDirectory
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        return process
    }

    private static func locate() -> URL? {
        let manager = FileManager.default
        func executable(_ url: URL) -> URL? {
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  manager.isExecutableFile(atPath: url.path) else { return nil }
            return url
        }
        if let explicit = ProcessInfo.processInfo.environment["HAUL_BINARY"], !explicit.isEmpty {
            return executable(URL(fileURLWithPath: explicit))
        }
        // Beside the test bundle: walk up from the running executable and the loaded bundles.
        let starts = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments.first ?? "")]
            + Bundle.allBundles.map(\.bundleURL)
        for start in starts.compactMap({ $0?.resolvingSymlinksInPath() }) {
            var folder = start.deletingLastPathComponent()
            for _ in 0..<6 where folder.path != "/" {
                if let found = executable(folder.appendingPathComponent("haul")) { return found }
                folder = folder.deletingLastPathComponent()
            }
        }
        // The package that holds this file: <package>/Tests/HaulCLITests/HaulBinary.swift.
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while folder.path != "/" {
            if manager.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
                return executable(folder.appendingPathComponent(".build/debug/haul"))
            }
            folder = folder.deletingLastPathComponent()
        }
        return nil
    }
}
