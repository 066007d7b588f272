#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulServer

/// What the examples share: the built-in loopback server, a scratch folder and a byte-for-byte
/// check of what they downloaded. Nothing here is needed to use Haul; it keeps the examples
/// about Haul and lets them run with no internet.
public enum Example {
    /// Starts the built-in HTTP server on 127.0.0.1 (a random port), as `haul demo` does.
    ///
    /// - Returns: the running server; call `stop()` when done.
    public static func startServer() -> HaulServer {
        do {
            return try HaulServer()
        } catch {
            fail("cannot start the built-in server: \(error)")
        }
    }

    /// Makes a fresh folder under the temporary directory for the example to write into.
    ///
    /// - Parameter name: the example's name, part of the folder's name.
    /// - Returns: the folder; remove it with ``removeFolder(_:)``.
    public static func makeFolder(_ name: String) -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("haul-\(name)-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            fail("cannot create \(folder.path): \(error)")
        }
        return folder
    }

    /// Removes a folder made by ``makeFolder(_:)`` and everything in it.
    public static func removeFolder(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Checks that `file` holds exactly the bytes the server generates for `resource`.
    ///
    /// - Parameters:
    ///   - file: the downloaded file.
    ///   - resource: what the server served (its size and content seed).
    /// - Returns: `nil` when every byte matches, else what differs.
    public static func mismatch(_ file: URL, _ resource: HaulServer.Resource) -> String? {
        guard let data = FileManager.default.contents(atPath: file.path) else { return "cannot read \(file.path)" }
        guard Int64(data.count) == resource.size else {
            return "\(file.lastPathComponent) has \(data.count) bytes, expected \(resource.size)"
        }
        let chunk: Int64 = 1 << 20
        var offset: Int64 = 0
        while offset < resource.size {
            let end = min(offset + chunk, resource.size)
            if !data[Int(offset)..<Int(end)].elementsEqual(resource.bytes(offset..<end)) {
                return "\(file.lastPathComponent) differs from the server's bytes in \(offset)..<\(end)"
            }
            offset = end
        }
        return nil
    }

    /// Verifies a file like ``mismatch(_:_:)`` and ends the program with status 1 when it differs.
    public static func verify(_ file: URL, _ resource: HaulServer.Resource) {
        if let problem = mismatch(file, resource) { fail(problem) }
        say("verified \(file.lastPathComponent): all \(resource.size) bytes match the server's")
    }

    /// Prints a line to standard output.
    public static func say(_ line: String) {
        print(line)
    }

    /// Prints `example: failed: <message>` to standard error and exits with status 1.
    public static func fail(_ message: String) -> Never {
        let line = Array("example: failed: \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        exit(1)
    }

    /// Checks a condition the example relies on; fails the example when it does not hold.
    public static func check(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }
}
