import CHaulSys
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// The file a download writes into (`NAME.part`), never opened through a symlink, and held under
/// an exclusive `flock` for as long as the download runs.
///
/// The lock is what keeps a second process (or a second download in this process) away from
/// the same file: it is released by the kernel when the process dies, `kill -9` included.
/// Bytes go in with `pwrite` (safe from several threads at once, each at its own offsets).
/// ``markFinished(mode:)``, ``syncFinished()`` and ``publish(as:replace:)`` make the data durable and
/// give it its final name atomically (see ``FileCommit``).
final class PartialFile: @unchecked Sendable {   // the descriptor is fixed until close; pwrite is thread-safe
    let folder: DestinationFolder
    let name: String
    private(set) var descriptor: Int32
    /// The file's device and inode, to recognise it when it is opened again by name for direct
    /// writes (``directDescriptor()``).
    private let device: UInt64, inode: UInt64
    /// One writer at a time. The kernel serialises buffered writes to one file on its inode lock
    /// anyway, but there the waiting writers spin; here they sleep. An adaptive pthread mutex
    /// (`SharedStateLock`), not `Mutex`, whose priority-inheritance futex hands the lock to a
    /// sleeping writer.
    private let writeLock = SharedStateLock(false)   // guards no value
    /// The descriptor for direct writes (``directDescriptor()``): not tried yet, -1 for none.
    private let direct = SharedStateLock<Int32>(directNotTried)
    /// Set once a direct descriptor was opened: from then on writes through the page cache and
    /// direct writes are kept apart (``DirectWriteGate``).
    private let directGate = SharedStateLock<DirectWriteGate?>(nil)

    /// The suffix of partial files.
    static let suffix = ".part"

    private init(folder: DestinationFolder, name: String, descriptor: Int32, device: UInt64, inode: UInt64) {
        self.folder = folder
        self.name = name
        self.descriptor = descriptor
        self.device = device
        self.inode = inode
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        closeDirect()
    }

    private func closeDirect() {
        direct.withLock { state in
            if state >= 0 { close(state) }
            state = -1
        }
    }

    /// Opens and locks an existing partial file; `nil` when there is none.
    ///
    /// - Throws: `locked` (another download holds it), `unsafePath` (a symlink, folder or special
    ///   file is in the way), `fileSystem`.
    static func openExisting(_ name: String, in folder: DestinationFolder) throws(DownloadError) -> PartialFile? {
        for _ in 0..<5 {
            switch folder.entry(name) {
            case .missing: return nil
            case .regularFile: break
            case .symlink:
                try folder.remove(name)   // never followed: whatever it points to is not ours
                return nil
            case .directory, .other:
                throw DownloadError(.unsafePath, "'\(folder.path)/\(name)' is in the way and is not a regular file")
            }
            let fd = openat(folder.descriptor, name, O_RDWR | haul_o_nofollow() | haul_o_cloexec())
            if fd < 0 {
                if errno == ENOENT { continue }
                throw DownloadError(errno == ELOOP ? .unsafePath : .fileSystem, "cannot open '\(folder.path)/\(name)': \(errnoText())")
            }
            if let file = try lock(fd, name, in: folder) { return file }
        }
        throw DownloadError(.locked, "'\(folder.path)/\(name)' keeps changing under another download")
    }

    /// Opens (creating it, mode 0600) and locks the partial file, emptied: a fresh start.
    ///
    /// A symlink in its place is removed, never followed.
    ///
    /// - Throws: `locked`, `unsafePath`, `fileSystem`.
    static func createEmpty(_ name: String, in folder: DestinationFolder) throws(DownloadError) -> PartialFile {
        // Try the common case first (nothing there): one openat, no lookups before it.
        for _ in 0..<5 {
            let fd = openat(folder.descriptor, name, O_RDWR | O_CREAT | O_EXCL | haul_o_nofollow() | haul_o_cloexec(), 0o600)
            let code = errno
            if fd >= 0 {
                if let file = try lock(fd, name, in: folder) { return file }
                continue
            }
            guard code == EEXIST else {
                throw DownloadError(code == ELOOP ? .unsafePath : .fileSystem, "cannot create '\(folder.path)/\(name)': \(errnoText(code))")
            }
            // Something is there: a leftover (emptied and reused), a symlink (removed by
            // openExisting, never followed), or another download's file (locked).
            if let existing = try openExisting(name, in: folder) {
                try existing.truncate(to: 0)
                return existing
            }
        }
        throw DownloadError(.locked, "'\(folder.path)/\(name)' keeps changing under another download")
    }

    /// Takes the exclusive lock on `fd` and checks that `name` still names that file (it may have
    /// been renamed or replaced between open and lock). `nil`: try again.
    private static func lock(_ fd: Int32, _ name: String, in folder: DestinationFolder) throws(DownloadError) -> PartialFile? {
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK {
                throw DownloadError(.locked, "another download is writing '\(folder.path)/\(name)'")
            }
            throw DownloadError(.fileSystem, "cannot lock '\(folder.path)/\(name)': \(errnoText(code))")
        }
        var opened = stat(), named = stat()
        guard fstat(fd, &opened) == 0, fstatat(folder.descriptor, name, &named, AT_SYMLINK_NOFOLLOW) == 0,
              opened.st_dev == named.st_dev, opened.st_ino == named.st_ino else {
            close(fd)
            return nil
        }
        return PartialFile(folder: folder, name: name, descriptor: fd, device: UInt64(truncatingIfNeeded: opened.st_dev),
                           inode: UInt64(opened.st_ino))
    }

    /// The file's current length.
    var length: Int64 {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : 0
    }

    /// Cuts (or extends with zeros) the file to `length`.
    func truncate(to length: Int64) throws(DownloadError) {
        if ftruncate(descriptor, off_t(length)) != 0 {
            throw DownloadError(.fileSystem, "cannot truncate '\(folder.path)/\(name)': \(errnoText())")
        }
    }

    /// Checks that the file system has room for the file to reach `length` bytes, so a full disk
    /// is reported before the transfer rather than in the middle of it.
    ///
    /// This checks free space (`fstatvfs`) instead of reserving it with `fallocate`: on ext4,
    /// buffered writes into a preallocated file's unwritten extents cost several times the CPU
    /// of plain writes. (Direct writes are the other way round: ``reserve(length:)``.) Space taken
    /// by someone else meanwhile still ends the transfer with `diskFull`, the partial file kept.
    ///
    /// - Throws: `diskFull`.
    func ensureSpace(for length: Int64) throws(DownloadError) {
        let needed = length - self.length
        guard needed > 0 else { return }
        var info = statvfs()
        guard fstatvfs(descriptor, &info) == 0 else { return }   // unknown: let the writes tell
        let available = Int64(info.f_bavail) * Int64(info.f_frsize)
        if available < needed {
            throw DownloadError(.diskFull, "not enough disk space for '\(folder.path)/\(name)': \(needed) bytes needed, \(available) free")
        }
    }

    /// Reserves the file's blocks up to `length` (`fallocate`), for direct writes: a full disk
    /// is reported here, before the transfer, and the file keeps its former length. A file
    /// system that cannot reserve (ext2/3-format files, for one) is left as it is.
    ///
    /// - Parameter allocate: reserves blocks for a descriptor up to a length, returning 0 or an
    ///   `errno` (`fallocate`; tests make it fail).
    /// - Throws: `diskFull`.
    func reserve(length: Int64, allocate: (Int32, Int64) -> Int32 = haul_reserve) throws(DownloadError) {
        let before = self.length
        let code = allocate(descriptor, length)
        if code == ENOSPC || code == EDQUOT {
            _ = ftruncate(descriptor, off_t(before))   // what was reserved before the disk filled is given back
            throw DownloadError(.diskFull, "not enough disk space for '\(folder.path)/\(name)': \(length) bytes needed")
        }
    }

    /// Writes `bytes` at `offset`, retrying short writes. Safe to call from several threads.
    ///
    /// - Throws: `diskFull` (ENOSPC, EDQUOT) or `fileSystem`; never retryable.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(DownloadError) {
        var done = 0
        while done < bytes.count {
            let gate = directGate.withLock { $0 }
            let (n, code) = writeLock.withLock { _ in
                DirectWriteGate.cached(gate) { () -> (Int, Int32) in
                    let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
                    return (n, n < 0 ? errno : 0)
                }
            }
            if n > 0 { done += n; continue }
            if n < 0 && code == EINTR { continue }
            if code == ENOSPC || code == EDQUOT {
                throw DownloadError(.diskFull, "the disk is full while writing '\(folder.path)/\(name)'")
            }
            throw DownloadError(.fileSystem, "cannot write '\(folder.path)/\(name)': \(errnoText(code))")
        }
    }

    /// The alignment of a direct write's file offset, length and memory: whole 4 KiB blocks suit
    /// devices of 512- and 4096-byte sectors alike.
    static let directAlignment = 4096

    /// Whether direct writes go to files on a file system of this type (Linux `statfs.f_type`):
    /// ext4 and XFS, whose `O_DIRECT` writes reach the device and whose `syncfs`/`fsync` then
    /// make them durable (see ``BatchCommitter``). Elsewhere the page cache is used.
    static func takesDirectWrites(fileSystemType: UInt) -> Bool {
        fileSystemType == 0xEF53 || fileSystemType == 0x5846_5342
    }

    /// Writes whole 4 KiB blocks from 4 KiB-aligned memory at a 4 KiB-aligned offset with
    /// `O_DIRECT`, as far as the file system takes them.
    ///
    /// - Returns: how many bytes were written (from the start; the caller writes the rest with
    ///   ``write(_:at:)``): all of them, or fewer when direct writes are not available here or
    ///   the device refuses them.
    /// - Throws: `diskFull`.
    func writeDirect(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(DownloadError) -> Int {
        let alignment = Self.directAlignment
        guard let direct = directDescriptor(), let gate = directGate.withLock({ $0 }), bytes.count % alignment == 0,
              offset % Int64(alignment) == 0, Int(bitPattern: bytes.baseAddress) % alignment == 0 else { return 0 }
        var done = 0
        while done < bytes.count {
            let (n, code) = gate.direct { () -> (Int, Int32) in
                let n = pwrite(direct, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
                return (n, n < 0 ? errno : 0)
            }
            if n > 0 && n % alignment == 0 { done += n; continue }
            if n > 0 { return done + n }   // not whole blocks: the rest goes through the page cache
            if code == EINTR { continue }
            if code == ENOSPC || code == EDQUOT {
                throw DownloadError(.diskFull, "the disk is full while writing '\(folder.path)/\(name)'")
            }
            return done   // refused (EINVAL: an alignment the device does not take): the page cache takes the rest
        }
        return done
    }

    /// The descriptor for direct writes (and reads: a checksum's hasher reads the bytes back
    /// past the page cache): this file opened again by name with `O_DIRECT`, once, when the file
    /// system takes direct writes and the name still names this file (checked by identity);
    /// `nil` otherwise.
    func directDescriptor() -> Int32? {
        direct.withLock { state -> Int32? in
            if state == Self.directNotTried {
                state = -1
                if Self.takesDirectWrites(fileSystemType: folder.fileSystemType) {
                    let fd = haul_open_direct(folder.descriptor, name)
                    var info = stat()
                    if fd >= 0, fstat(fd, &info) == 0, UInt64(truncatingIfNeeded: info.st_dev) == device, UInt64(info.st_ino) == inode {
                        state = fd
                        directGate.withLock { $0 = DirectWriteGate() }
                    } else if fd >= 0 {
                        close(fd)
                    }
                }
            }
            return state >= 0 ? state : nil
        }
    }
    private static let directNotTried: Int32 = -2

    /// Makes every byte written so far durable (before a resume record may claim them).
    func syncData() throws(DownloadError) {
        #if os(Linux)
        let synced = fdatasync(descriptor)
        #else
        let synced = fsync(descriptor)   // Darwin's headers declare no fdatasync
        #endif
        if synced != 0 {
            let code = errno
            throw DownloadError(code == ENOSPC ? .diskFull : .fileSystem, "cannot sync '\(folder.path)/\(name)': \(errnoText(code))")
        }
    }

    /// Gives the finished file the usual permissions, `mode` (0666 less the umask, like any file a
    /// program creates; see ``FileMode``); the partial file is private (0600) while it is
    /// incomplete. Then the data is made durable (``syncFinished()``, or one sync for many files)
    /// and ``publish(as:replace:)``.
    func markFinished(mode: mode_t) {
        _ = fchmod(descriptor, mode)
    }

    /// Makes the finished file durable, its data and its metadata (`fsync`).
    ///
    /// - Throws: `fileSystem`, `diskFull`.
    func syncFinished() throws(DownloadError) {
        if fsync(descriptor) != 0 { throw writeError(errno) }
    }

    /// The error for a failed sync (or write-back) of this file with `errno` `code`.
    func writeError(_ code: Int32) -> DownloadError {
        DownloadError(code == ENOSPC || code == EDQUOT ? .diskFull : .fileSystem,
                      "cannot sync '\(folder.path)/\(name)': \(errnoText(code))")
    }

    /// Gives the finished file its final name atomically (still open and locked). The folder's
    /// sync (``DestinationFolder/sync()``) then makes the new name durable.
    ///
    /// - Parameter replace: whether an existing `finalName` may be replaced.
    /// - Throws: `destinationExists` (when `replace` is false and the name appeared), `fileSystem`.
    func publish(as finalName: String, replace: Bool) throws(DownloadError) {
        try folder.rename(name, to: finalName, replace: replace)
    }

    /// Closes (releasing the lock) and removes the file (its bytes cannot be trusted).
    func discard() {
        try? folder.remove(name)   // removed while still locked, so nobody opens it in between
        closeKeeping()
    }

    /// Closes the file (releasing the lock) and leaves it on disk.
    func closeKeeping() {
        closeDirect()
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
    }
}

/// Starts kernel writeback of the bytes a transfer wrote, every ``interval`` bytes of one
/// contiguous run, so the final fsync overlaps the transfer instead of following it (it then
/// finds almost nothing left to write). One per connection.
struct WritebackTracker {
    static let interval: Int64 = 16 << 20
    private var start: Int64 = 0
    private var length: Int64 = 0

    /// Records `count` bytes written at `offset` to `file`.
    mutating func wrote(_ count: Int, at offset: Int64, to file: PartialFile) {
        if offset != start + length {   // a new run: flush the old one
            flush(file)
            start = offset
        }
        length += Int64(count)
        if length >= Self.interval { flush(file) }
    }

    /// Starts writeback of what is pending.
    mutating func flush(_ file: PartialFile) {
        if length > 0 { haul_start_writeback(file.descriptor, start, length) }
        start += length
        length = 0
    }
}
