import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// The record's file, `NAME.resume` beside `NAME.part`, read and written relative to the
/// destination folder's descriptor and never through a symlink.
extension ResumeRecord {
    /// What ``load(for:in:)`` found.
    enum LoadResult: Sendable, Equatable {
        /// There is no record: nothing to resume.
        case missing
        /// A record that passed every check.
        case valid(ResumeRecord)
        /// A record that cannot be trusted (unreadable, truncated, damaged, another version, a
        /// symlink, not a regular file): one readable sentence saying why. The partial file must
        /// not be trusted either.
        case invalid(String)
    }

    /// Records larger than this are not read. A record holds a block hash (about 37 bytes) for
    /// every 4 MiB or less of completed bytes: 4 MiB of record was reached near 440 GiB of
    /// file (less with several connections), and a larger download could write a record no
    /// run could read. 64 MiB covers files of several TiB and still bounds a hostile one.
    static let maximumFileSize = 64 << 20

    /// Reads `NAME.resume` from `folder`.
    ///
    /// Opened with `O_NOFOLLOW` (a symlink is invalid, never followed) and `O_NONBLOCK` (a FIFO
    /// planted there cannot block the download); anything but a regular file is invalid.
    ///
    /// - Parameters:
    ///   - name: the final file name `NAME` (not `NAME.part`).
    ///   - folder: the destination folder.
    /// - Returns: `.missing`, `.valid(record)` or `.invalid(reason)`.
    static func load(for name: String, in folder: DestinationFolder) -> LoadResult {
        let fileName = name + suffix
        let shown = "'\(folder.path)/\(fileName)'"
        let fd = openat(folder.descriptor, fileName, O_RDONLY | O_NONBLOCK | haul_o_nofollow() | haul_o_cloexec())
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return .missing }
            if code == ELOOP { return .invalid("the resume record \(shown) is a symbolic link; it was not followed") }
            return .invalid("the resume record \(shown) cannot be opened: \(errnoText(code))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            return .invalid("the resume record \(shown) cannot be read: \(errnoText())")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            return .invalid("the resume record \(shown) is not a regular file")
        }
        guard info.st_size <= maximumFileSize else {
            return .invalid("the resume record \(shown) is too large to be a resume record")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n > 0 {
                bytes += buffer[..<n]
                guard bytes.count <= maximumFileSize else {
                    return .invalid("the resume record \(shown) is too large to be a resume record")
                }
                continue
            }
            if n == 0 { break }
            if errno == EINTR { continue }
            return .invalid("the resume record \(shown) cannot be read: \(errnoText())")
        }
        switch decode(bytes) {
        case .success(let record): return .valid(record)
        case .failure(let error): return .invalid("the resume record \(shown) \(error)")
        }
    }

    /// Writes the record as `NAME.resume`, atomically replacing any earlier one.
    ///
    /// Writes `NAME.rtmp` (any leftover of that name, file or symlink, is removed first;
    /// created `O_NOFOLLOW`, mode 0600), fsyncs it, then renames it over `NAME.resume` (a
    /// symlink there is replaced, not followed). The folder is not fsynced: after a crash the
    /// folder may still hold the previous record, which claims fewer bytes and stays true.
    /// Call it only after the bytes in ``completed`` were fsynced.
    ///
    /// - Parameters:
    ///   - name: the final file name `NAME` (not `NAME.part`).
    ///   - folder: the destination folder.
    ///   - fieldsChecked: whether a record of this download with the same fields except the
    ///     completed ranges and the block hashes was saved before (the checkpoints of one
    ///     transfer): then only those two are checked, in memory (``progressProblem``), instead
    ///     of reading the whole record back. Reading it back at every checkpoint (a decode, a
    ///     second encode, two SHA-256) took 7% of the CPU of a 500 MiB download over 8 capped
    ///     connections.
    /// - Throws: `diskFull` (ENOSPC, EDQUOT), `fileSystem` otherwise; `internalError` when the
    ///   record is inconsistent (ranges beyond the length, a malformed key), which would make a
    ///   file that no later run could read.
    func save(for name: String, in folder: DestinationFolder, fieldsChecked: Bool = false) throws(DownloadError) {
        let bytes = encoded()
        if fieldsChecked {
            if let problem = progressProblem() {
                throw DownloadError(.internalError, "the resume record for '\(folder.path)/\(name)' is inconsistent: \(problem)")
            }
        } else if case .failure(let error) = Self.decode(bytes) {
            throw DownloadError(.internalError, "the resume record for '\(folder.path)/\(name)' is inconsistent: it \(error)")
        }
        let temporary = name + Self.temporarySuffix
        let final = name + Self.suffix
        func failure(_ action: String, _ code: Int32) -> DownloadError {
            if code == ENOSPC || code == EDQUOT {
                return DownloadError(.diskFull, "the disk is full while writing '\(folder.path)/\(temporary)'")
            }
            return DownloadError(.fileSystem, "cannot \(action) '\(folder.path)/\(temporary)': \(errnoText(code))")
        }

        if unlinkat(folder.descriptor, temporary, 0) != 0 && errno != ENOENT {
            throw failure("remove the leftover", errno)
        }
        let flags = O_WRONLY | O_CREAT | O_TRUNC | haul_o_nofollow() | haul_o_cloexec()
        let fd = openat(folder.descriptor, temporary, flags, 0o600)
        guard fd >= 0 else { throw failure("create", errno) }
        var written = false
        defer { if !written { unlinkat(folder.descriptor, temporary, 0) } }
        do {
            defer { close(fd) }
            var done = 0
            while done < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + done, $0.count - done) }
                if n > 0 { done += n; continue }
                if n < 0 && errno == EINTR { continue }
                throw failure("write", n < 0 ? errno : EIO)
            }
            guard fsync(fd) == 0 else { throw failure("sync", errno) }
        }
        guard renameat(folder.descriptor, temporary, folder.descriptor, final) == 0 else {
            let code = errno
            throw DownloadError(.fileSystem, "cannot rename '\(temporary)' to '\(final)' in '\(folder.path)': \(errnoText(code))")
        }
        written = true
    }

    /// Removes `NAME.resume` and any `NAME.rtmp` (never following a symlink); missing
    /// files and failures are ignored (a stale record is also caught by its validators).
    ///
    /// - Parameters:
    ///   - name: the final file name `NAME` (not `NAME.part`).
    ///   - folder: the destination folder.
    static func remove(for name: String, in folder: DestinationFolder) {
        unlinkat(folder.descriptor, name + suffix, 0)
        unlinkat(folder.descriptor, name + temporarySuffix, 0)
    }
}
