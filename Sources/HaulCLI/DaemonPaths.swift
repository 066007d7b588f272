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
        guard let data = FileManager.default.contents(atPath: path) else {
            throw UsageError("cannot read the secret file \(path)")
        }
        return try secretText(Array(data), path: path)
    }

    /// Reads a secret file the daemon relies on, refused when its group or others have any
    /// permission on it (the check and the read are on one open descriptor).
    ///
    /// - Throws: `exposedSecret` when a permission bit for group or others is set (mode & 077;
    ///   the message names `chmod 600`);
    ///   `usage` when it cannot be read or is empty.
    static func readPrivateSecret(_ path: String) throws(DaemonStartError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .usage(UsageError("cannot read the secret file \(path)")) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .usage(UsageError("cannot read the secret file \(path)")) }
        if info.st_mode & 0o077 != 0 {
            let mode = String(info.st_mode & 0o777, radix: 8)
            throw .exposedSecret("the secret file \(path) can be read or changed by group or others (mode \(mode)): chmod 600 \(path)")
        }
        guard let bytes = readAll(fd, atMost: 1 << 16) else { throw .usage(UsageError("cannot read the secret file \(path)")) }
        do throws(UsageError) { return try secretText(bytes, path: path) } catch { throw .usage(error) }
    }

    /// Every byte of an open file to its end; `nil` when reading fails or the file holds more
    /// than `limit` bytes.
    static func readAll(_ fd: Int32, atMost limit: Int) -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while bytes.count <= limit {
            let count = read(fd, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes += chunk[..<count]
        }
        return nil
    }

    /// A secret file's bytes as its secret: UTF-8 without surrounding whitespace, not empty.
    private static func secretText(_ bytes: [UInt8], path: String) throws(UsageError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw UsageError("cannot read the secret file \(path)") }
        let scalars = Array(text.unicodeScalars)
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else {
            throw UsageError("the secret file \(path) is empty")
        }
        var secret = String.UnicodeScalarView()
        secret.append(contentsOf: scalars[first...last])
        return String(secret)
    }

    /// The secret in `path`, made first when missing: 32 random bytes as 64 hex digits, in a
    /// new file of mode 0600 (its folder made 0700).
    ///
    /// - Returns: the secret and whether it was made now.
    /// - Throws: `exposedSecret` when the file exists and group or others may read it; `usage`
    ///   when it cannot be read, made or written.
    static func secret(generatingAt path: String) throws(DaemonStartError) -> (String, created: Bool) {
        if FileManager.default.fileExists(atPath: path) { return (try readPrivateSecret(path), false) }
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
        guard fd >= 0 else { throw .usage(UsageError("cannot create the secret file \(path): \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        let bytes = Array((secret + "\n").utf8)
        guard write(fd, bytes, bytes.count) == bytes.count, fsync(fd) == 0 else {
            throw .usage(UsageError("cannot write the secret file \(path)"))
        }
        return (secret, true)
    }
}
