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

/// Where the daemon keeps its state and its generated secret.
enum DaemonPaths {
    /// `$XDG_STATE_HOME/haul` (default `~/.local/state/haul`).
    static func stateFolder(_ environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/haul" }
        let home = environment["HOME"] ?? "/"
        return home + "/.local/state/haul"
    }

    /// The default state file: `$XDG_STATE_HOME/haul/daemon.db`.
    static func defaultStateFile(_ environment: [String: String]) -> String {
        stateFolder(environment) + "/daemon.db"
    }

    /// The secret file beside a state file: its name with `.secret` for its extension.
    static func secretFile(besides stateFile: String) -> String {
        let url = URL(fileURLWithPath: stateFile)
        let base = url.deletingPathExtension().lastPathComponent
        return url.deletingLastPathComponent().appendingPathComponent(base + ".secret").path
    }

    /// Reads a secret file: its text without the line end.
    static func readSecret(_ path: String) throws(UsageError) -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw UsageError("cannot read the secret file \(path)")
        }
        let secret = String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        guard !secret.isEmpty else { throw UsageError("the secret file \(path) is empty") }
        return secret
    }

    /// The secret in `path`, made first when missing: 32 random bytes as 64 hex digits, in a
    /// new file of mode 0600 (its folder made 0700).
    ///
    /// - Returns: the secret and whether it was made now.
    static func secret(generatingAt path: String) throws(UsageError) -> (String, created: Bool) {
        if FileManager.default.fileExists(atPath: path) { return (try readSecret(path), false) }
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef")
        let secret = String((0..<32).flatMap { _ -> [Character] in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
        })
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw UsageError("cannot create the secret file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array((secret + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count, fsync(fd) == 0 else {
            throw UsageError("cannot write the secret file \(path)")
        }
        return (secret, true)
    }
}
