import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small tmpfs mounted for one test, to make a folder read-only or a disk full for real.
///
/// Mounting needs Linux and root (`CAP_SYS_ADMIN`); ``isAvailable`` says whether it works
/// here, so tests can be skipped with a reason elsewhere (`.enabled(if:)`).
public enum ScratchMount {
    /// Whether a tmpfs can be mounted (and unmounted) here: tried once, on a throwaway folder.
    public static let isAvailable: Bool = {
        guard let probe = try? makeTemporaryDirectory() else { return false }
        defer { try? FileManager.default.removeItem(at: probe) }
        guard mount(at: probe, size: "64k", readOnly: false) == nil else { return false }
        unmount(probe)
        return true
    }()

    /// Why mounting is not tried or failed here, for the skip message.
    public static let unavailableReason = "needs Linux, root and tmpfs mounts (mount -t tmpfs) to fill a disk or make a folder read-only"

    /// Mounts a tmpfs of `size` (`mount -o size=`, e.g. `2m`) on the existing folder `directory`.
    ///
    /// - Returns: `nil` when mounted, else the reason it was not.
    public static func mount(at directory: URL, size: String, readOnly: Bool) -> String? {
        #if os(Linux)
        let flags = UInt(readOnly ? MS_RDONLY : 0)
        let result = Glibc.mount("tmpfs", directory.path, "tmpfs", flags, "size=\(size),mode=0755")
        return result == 0 ? nil : "mount tmpfs on \(directory.path): \(String(cString: strerror(errno)))"
        #else
        return "mounting a tmpfs works on Linux only"
        #endif
    }

    /// Changes the size of the tmpfs mounted at `directory` (to free space for a resume).
    ///
    /// - Returns: `nil` when done, else the reason it was not.
    public static func resize(_ directory: URL, size: String) -> String? {
        #if os(Linux)
        let result = Glibc.mount("tmpfs", directory.path, "tmpfs", UInt(MS_REMOUNT), "size=\(size)")
        return result == 0 ? nil : "remount \(directory.path): \(String(cString: strerror(errno)))"
        #else
        return "mounting a tmpfs works on Linux only"
        #endif
    }

    /// Unmounts `directory` (lazily, so a file still open elsewhere cannot keep it mounted).
    public static func unmount(_ directory: URL) {
        #if os(Linux)
        _ = umount2(directory.path, Int32(MNT_DETACH))
        #endif
    }

    /// Runs `body` with a fresh tmpfs of `size` mounted on a new temporary folder, unmounted
    /// and removed afterwards however `body` ends.
    ///
    /// - Throws: `ScratchMountError` when it cannot be mounted, or what `body` throws.
    public static func with<T>(size: String, readOnly: Bool = false, _ body: (URL) async throws -> T) async throws -> T {
        let directory = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        if let reason = mount(at: directory, size: size, readOnly: readOnly) { throw ScratchMountError(reason: reason) }
        defer { unmount(directory) }
        return try await body(directory)
    }

    /// Fills the file system holding `directory` by writing the file `name` there until the
    /// disk is full.
    ///
    /// - Returns: the bytes written.
    @discardableResult
    public static func fill(_ directory: URL, name: String = "filler") -> Int {
        let fd = open(directory.appendingPathComponent(name).path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        let block = [UInt8](repeating: 0x5A, count: 4096)
        var total = 0
        while true {
            let written = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written <= 0 { break }
            total += written
        }
        return total
    }
}

/// A tmpfs could not be mounted.
public struct ScratchMountError: Error, CustomStringConvertible {
    /// What failed.
    public var reason: String
    public var description: String { reason }
}
