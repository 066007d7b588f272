import CHaulSys
import HaulCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a finished download writes on its file (the extended attribute `user.haul.source`), so
/// that rerunning the same command recognises the file as done instead of downloading it again
/// under the next free name.
///
/// After success only the final file remains (no partial, no resume record), so without a mark
/// a rerun of a list interrupted halfway saw every finished file as someone else's and, with
/// `--on-conflict=rename`, wrote `NAME.1.ext` beside it. The mark holds a digest of which
/// resource the file holds (the resume record's ``ResumeRecord/resourceKey(for:)``: scheme,
/// host, port and path, so a re-signed URL still matches), its length and the validator
/// `If-Range` would use, and the file's modification time when it was marked: a file changed
/// since (its time moves) no longer matches. A file system without extended attributes keeps no
/// mark; its files are then downloaded again as before. So do file systems that set the time when
/// the data reaches the server (NFS, SMB, some FUSE ones): the mark's time is read before the sync.
///
/// The mark is 45 bytes, binary: small enough for ext4 to keep it inside the inode (with the
/// attribute's name, up to about 56 bytes fit in a 256-byte inode, when no other attribute, such
/// as an SELinux label, takes that room). A readable mark of ~200 bytes took an xattr block of
/// its own per file: 4% of the CPU samples of 1,000 small downloads, and a block more for every
/// sync to write.
struct FinishedFileMark: Equatable, Sendable {
    /// The attribute's name.
    static let attributeName = "user.haul.source"
    /// The format's version, the mark's first byte.
    static let version: UInt8 = 1
    /// The mark's length: the version, the identity's digest, the time's seconds and nanoseconds.
    static let byteCount = 1 + 32 + 8 + 4

    /// What a download's response says about the file it would write.
    struct Identity: Equatable, Sendable {
        /// SHA-256 of the resource key, the length and the validator.
        let digest: [UInt8]
        /// The file's full length.
        let length: Int64

        /// An identity, or `nil` when there is no validator to recognise the file by (its length
        /// alone does not tell whether the server's file changed).
        ///
        /// The validator is the one `If-Range` would send: the strong ETag when there is one,
        /// else `Last-Modified`. A file marked with only a `Last-Modified` is thus not recognised
        /// once the server adds an ETag (it is downloaded again: the safe side).
        ///
        /// - Parameters:
        ///   - resourceKey: ``ResumeRecord/resourceKey(for:)`` of the original URL.
        ///   - etag: the strong ETag (with its quotes), if any.
        init?(resourceKey: String, length: Int64, etag: String?, lastModified: String?) {
            guard length >= 0, let validator = etag ?? lastModified else { return nil }
            // SHA-256 of "KEYLENGTH\netag ETAG" (or "KEYLENGTH\nlast-modified DATE"; the key is
            // 64 hex digits, so where the length starts is known).
            let kind = etag != nil ? "\netag " : "\nlast-modified "
            let lengthText = String(length)
            var message: [UInt8] = []
            message.reserveCapacity(resourceKey.utf8.count + lengthText.utf8.count + kind.utf8.count + validator.utf8.count)
            message.appendUTF8(resourceKey)
            message.appendUTF8(lengthText)
            message.appendUTF8(kind)
            message.appendUTF8(validator)
            digest = Digest.hash(.sha256, message)
            self.length = length
        }
    }

    /// The identity's digest (the length is in it, and checked against the file's size).
    var digest: [UInt8]
    /// The file's modification time when it was marked.
    var modified: timespec

    init(identity: Identity, modified: timespec) {
        digest = identity.digest
        self.modified = modified
    }

    static func == (a: Self, b: Self) -> Bool {
        a.digest == b.digest && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
    }

    // MARK: Encoding

    /// The attribute's bytes: the version, the digest, then the time's seconds (8 bytes) and
    /// nanoseconds (4 bytes), little-endian.
    var encoded: [UInt8] {
        var bytes = [Self.version] + digest
        withUnsafeBytes(of: Int64(modified.tv_sec).littleEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: modified.tv_nsec).littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Reads a mark; `nil` for anything that is not a mark of this format.
    init?(decoding bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        guard bytes.count == Self.byteCount, bytes[0] == Self.version else { return nil }
        var seconds: Int64 = 0
        var nanoseconds: UInt32 = 0
        for (offset, byte) in bytes[33..<41].enumerated() { seconds |= Int64(byte) << (8 * offset) }
        for (offset, byte) in bytes[41..<45].enumerated() { nanoseconds |= UInt32(byte) << (8 * offset) }
        guard nanoseconds < 1_000_000_000 else { return nil }
        digest = Array(bytes[1..<33])
        modified = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
    }

    // MARK: On disk

    /// Marks the open, fully written file `descriptor` as holding `identity`. Best effort: a file
    /// system without extended attributes (or a failure) leaves the file unmarked.
    static func write(_ identity: Identity, to descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0, Int64(info.st_size) == identity.length else { return }
        let bytes = FinishedFileMark(identity: identity, modified: modificationTime(info)).encoded
        _ = bytes.withUnsafeBytes { haul_set_attribute(descriptor, attributeName, $0.baseAddress, $0.count) }
    }

    /// Whether `name` in `folder` is a regular file (not through a symlink) whose mark says it
    /// holds `identity`, and whose length and modification time are still the marked ones.
    ///
    /// - Parameter check: a further check of the open file (a checksum), called only on a match.
    static func isFinished(_ name: String, in folder: DestinationFolder, as identity: Identity,
                           check: (Int32) -> Bool = { _ in true }) -> Bool {
        guard folder.entry(name) == .regularFile else { return false }   // never open a device or a FIFO
        let fd = openat(folder.descriptor, name, O_RDONLY | O_NONBLOCK | haul_o_nofollow() | haul_o_cloexec())
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { haul_get_attribute(fd, attributeName, $0.baseAddress, $0.count) }
        guard count > 0, let mark = FinishedFileMark(decoding: buffer.prefix(count)) else { return false }
        let time = modificationTime(info)
        guard mark.digest == identity.digest,
              Int64(info.st_size) == identity.length,
              mark.modified.tv_sec == time.tv_sec, mark.modified.tv_nsec == time.tv_nsec
        else { return false }
        return check(fd)
    }

    private static func modificationTime(_ info: stat) -> timespec {
        #if canImport(Darwin)
        info.st_mtimespec
        #else
        info.st_mtim
        #endif
    }
}
