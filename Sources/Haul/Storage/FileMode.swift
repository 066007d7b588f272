#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The permissions a finished file gets: 0666 less the process's umask, as for any file a
/// program creates. Partial files are created 0600 and changed to this with `fchmod` once
/// complete, so the umask is never set (setting it to read it would race with every other
/// thread of the program that creates a file).
enum FileMode {
    /// What the umask leaves of 0666, read without changing it (`Umask:` of
    /// `/proc/self/status` on Linux); 0644 where it cannot be read.
    static func forFinishedFiles() -> mode_t {
        mode_t(0o666) & ~(currentUmask() ?? 0o022)
    }

    /// The umask, from `/proc/self/status` (Linux 4.7 and later); `nil` elsewhere.
    static func currentUmask() -> mode_t? {
        #if os(Linux)
        let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &bytes, bytes.count)
        guard count > 0 else { return nil }
        return parseUmask(in: bytes[0..<count])
        #else
        return nil
        #endif
    }

    /// The octal value of the `Umask:` line of a `/proc/PID/status` text.
    static func parseUmask(in status: ArraySlice<UInt8>) -> mode_t? {
        for line in status.split(separator: UInt8(ascii: "\n")) where line.starts(with: "Umask:".utf8) {
            let digits = line.dropFirst(6).drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            guard !digits.isEmpty, digits.count <= 4, digits.allSatisfy({ (48...55).contains($0) }) else { return nil }
            return digits.reduce(mode_t(0)) { $0 * 8 + mode_t($1 - 48) }
        }
        return nil
    }
}
