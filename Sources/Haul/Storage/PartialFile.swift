import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file a download writes into (`NAME.part`), created exclusively, never through a symlink.
///
/// Bytes go in with `pwrite` straight from the receive buffer. ``commit(as:replace:)`` makes the
/// data durable and gives it its final name atomically.
final class PartialFile {
    let folder: DestinationFolder
    let name: String
    private(set) var descriptor: Int32
    /// Where the written-but-not-yet-flushed run of bytes starts, and how long it is.
    private var unflushedStart: Int64 = 0
    private var unflushedLength: Int64 = 0

    /// Writeback is started every this many bytes, so the final fsync overlaps the transfer
    /// instead of following it (measured: fsync of 2 GiB written without it took 0.8 s).
    static let writebackInterval: Int64 = 16 << 20

    /// The suffix of partial files.
    static let suffix = ".part"

    /// Creates `name` in `folder` with `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600.
    ///
    /// A leftover partial file (a regular file or a symlink, never followed) from an earlier run is
    /// removed first: this engine does not resume yet.
    ///
    /// - Throws: `fileSystem`, `unsafePath` (something other than a file is in the way).
    init(creating name: String, in folder: DestinationFolder) throws(DownloadError) {
        self.folder = folder
        self.name = name
        switch folder.entry(name) {
        case .missing: break
        case .regularFile, .symlink: try folder.remove(name)
        case .directory, .other:
            throw DownloadError(.unsafePath, "'\(folder.path)/\(name)' is in the way and is not a regular file")
        }
        let fd = openat(folder.descriptor, name, O_WRONLY | O_CREAT | O_EXCL | haul_o_nofollow() | haul_o_cloexec(), 0o600)
        guard fd >= 0 else {
            throw DownloadError(errno == ELOOP ? .unsafePath : .fileSystem, "cannot create '\(folder.path)/\(name)': \(errnoText())")
        }
        descriptor = fd
        haul_advise_sequential(fd)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Writes `bytes` at `offset`, retrying short writes.
    ///
    /// - Throws: `diskFull` (ENOSPC, EDQUOT) or `fileSystem`; never retryable.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64) throws(DownloadError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n > 0 { done += n; continue }
            if n < 0 && errno == EINTR { continue }
            let code = errno
            if code == ENOSPC || code == EDQUOT {
                throw DownloadError(.diskFull, "the disk is full while writing '\(folder.path)/\(name)'")
            }
            throw DownloadError(.fileSystem, "cannot write '\(folder.path)/\(name)': \(errnoText(code))")
        }
        if offset != unflushedStart + unflushedLength {   // not contiguous: flush what we had
            startWriteback()
            unflushedStart = offset
        }
        unflushedLength += Int64(bytes.count)
        if unflushedLength >= Self.writebackInterval { startWriteback() }
    }

    private func startWriteback() {
        if unflushedLength > 0 { haul_start_writeback(descriptor, unflushedStart, unflushedLength) }
        unflushedStart += unflushedLength
        unflushedLength = 0
    }

    /// Makes the finished data durable: the usual permissions, fsync, close. Then ``publish(as:replace:)``.
    ///
    /// - Throws: `fileSystem`, `diskFull`.
    func finishWriting() throws(DownloadError) {
        // The partial is private (0600) while it is incomplete; the finished file gets the usual
        // permissions, 0666 less the process umask, like any file a program creates.
        _ = fchmod(descriptor, mode_t(0o666) & ~processUmask)
        if fsync(descriptor) != 0 {
            let code = errno
            throw DownloadError(code == ENOSPC ? .diskFull : .fileSystem, "cannot sync '\(folder.path)/\(name)': \(errnoText(code))")
        }
        close(descriptor)
        descriptor = -1
    }

    /// Gives the finished file its final name atomically, then fsyncs the folder.
    ///
    /// - Parameter replace: whether an existing `finalName` may be replaced.
    /// - Throws: `destinationExists` (when `replace` is false and the name appeared), `fileSystem`.
    func publish(as finalName: String, replace: Bool) throws(DownloadError) {
        try folder.rename(name, to: finalName, replace: replace)
        try folder.sync()
    }

    /// Closes and removes the file (its bytes cannot be trusted).
    func discard() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        try? folder.remove(name)
    }

    /// Closes the file and leaves it on disk (kept for a later resume).
    func closeKeeping() {
        if descriptor >= 0 {
            _ = fsync(descriptor)
            close(descriptor)
            descriptor = -1
        }
    }
}

/// The process umask, read once (umask can only be read by setting it, so it is restored at once).
let processUmask: mode_t = {
    let mask = umask(0o022)
    umask(mask)
    return mask
}()
