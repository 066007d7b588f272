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

/// `haul daemon`'s config file (`--conf-path`, default `$XDG_CONFIG_HOME/haul/daemon.conf`):
/// aria2's format, one `key=value` a line, `#` comments and blank lines ignored; the keys are
/// the daemon's long option names (`dir=/srv/downloads`, `json=true`).
///
/// The file is read once, when the daemon starts; ``DaemonArguments`` merges it under the
/// command line.
struct DaemonConfigFile: Sendable, Equatable {
    /// One `key=value` line.
    struct Entry: Sendable, Equatable {
        /// Its line number, from 1.
        var line: Int
        var key: String
        var value: String
    }

    /// The file's path as read.
    var path: String
    var entries: [Entry]
    /// Whether group and others have no permission on it (a file holding `secret=` must be).
    var isPrivate: Bool
    /// Whether only its owner may change it, the daemon's user or root (a file naming a program
    /// to run must be).
    var isGuarded = true

    /// The longest file read: a config file is a few hundred bytes.
    static let maximumBytes = 1 << 20

    /// `$XDG_CONFIG_HOME/haul/daemon.conf` (default `~/.config/haul/daemon.conf`).
    static func defaultPath(_ environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") { return config + "/haul/daemon.conf" }
        return (environment["HOME"] ?? "/") + "/.config/haul/daemon.conf"
    }

    /// Reads the file `--conf-path` names, or the default one when it exists.
    ///
    /// - Parameters:
    ///   - given: `--conf-path`'s value; `nil` for the default file, which may be missing.
    ///   - environment: where the default file's folder comes from.
    /// - Returns: the file, or `nil` when the default file does not exist.
    /// - Throws: ``UsageError`` when the file given cannot be read, or a line is malformed.
    static func load(_ given: String?, environment: [String: String]) throws(UsageError) -> DaemonConfigFile? {
        let path = given ?? defaultPath(environment)
        // Non-blocking: a FIFO put there opens at once (and is refused below), not when a writer comes.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        if fd < 0 {
            if given == nil && errno == ENOENT { return nil }
            throw UsageError("cannot read the config file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size <= maximumBytes,
              let bytes = DaemonPaths.readAll(fd, atMost: maximumBytes) else {
            throw UsageError("cannot read the config file \(path): not a regular file of at most 1 MiB")
        }
        return DaemonConfigFile(path: path, entries: try parse(bytes, path: path), isPrivate: info.st_mode & 0o077 == 0,
                                isGuarded: info.st_mode & 0o022 == 0 && (info.st_uid == geteuid() || info.st_uid == 0))
    }

    /// The `key=value` lines of a file's bytes.
    ///
    /// - Throws: ``UsageError`` naming `path` and the line for a line without `=`, a key that is
    ///   not an option name, or text that is not UTF-8 or holds a control character.
    static func parse(_ bytes: [UInt8], path: String) throws(UsageError) -> [Entry] {
        var entries: [Entry] = []
        for (index, raw) in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let line = trimmed(raw.last == UInt8(ascii: "\r") ? raw.dropLast() : raw)
            guard let first = line.first, first != UInt8(ascii: "#") else { continue }
            let place = "\(path):\(index + 1)"
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else {
                throw UsageError("\(place): expected key=value")
            }
            let key = trimmed(line[..<equals]), value = trimmed(line[(equals + 1)...])
            guard !key.isEmpty, key.allSatisfy(isKeyByte) else {
                throw UsageError("\(place): '\(shown(key))' is not an option name")
            }
            guard let text = String(validating: value, as: UTF8.self), !text.unicodeScalars.contains(where: isControl) else {
                throw UsageError("\(place): the value is not UTF-8 text without control characters")
            }
            entries.append(Entry(line: index + 1, key: String(decoding: key, as: UTF8.self), value: text))
        }
        return entries
    }

    /// Bytes of a line as an error shows them: printable ASCII as it is, the rest as `\xHH`, at most 40.
    private static func shown(_ bytes: ArraySlice<UInt8>) -> String {
        let hex = Array("0123456789abcdef".unicodeScalars)
        var text = ""
        for byte in bytes.prefix(40) {
            if (0x20..<0x7F).contains(byte) && byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                text += "\\x" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 15)])
            }
        }
        return bytes.count > 40 ? text + "..." : text
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        let blank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard let start = bytes.firstIndex(where: { !blank($0) }), let end = bytes.lastIndex(where: { !blank($0) }) else { return [] }
        return bytes[start...end]
    }

    private static func isKeyByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "-")
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}"
    }
}
