import CHaulSys
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
/// `--on-conflict=rename`, wrote `NAME.1.ext` beside it. The mark says which resource the file
/// holds (the resume record's ``ResumeRecord/resourceKey(for:)``: scheme, host, port and path,
/// so a re-signed URL still matches), the server's validators and length, and the file's
/// modification time when it was marked: a file changed since (its time moves) no longer
/// matches. A file system without extended attributes keeps no mark; its files are then
/// downloaded again as before.
struct FinishedFileMark: Equatable, Sendable {
    /// The attribute's name.
    static let attributeName = "user.haul.source"

    /// What a download's response says about the file it would write.
    struct Identity: Equatable, Sendable {
        /// ``ResumeRecord/resourceKey(for:)`` of the original URL.
        var resourceKey: String
        /// The file's full length.
        var length: Int64
        /// The strong ETag (with its quotes), if any.
        var etag: String?
        /// `Last-Modified`, if any.
        var lastModified: String?

        /// An identity, or `nil` when there is no validator to recognise the file by (its length
        /// alone does not tell whether the server's file changed).
        init?(resourceKey: String, length: Int64, etag: String?, lastModified: String?) {
            guard etag != nil || lastModified != nil, length >= 0 else { return nil }
            self.resourceKey = resourceKey
            self.length = length
            self.etag = etag
            self.lastModified = lastModified
        }

        /// Whether a file marked `mark` holds this resource, unchanged on the server: same
        /// resource and length, and the validator `If-Range` would use (the strong ETag, else
        /// `Last-Modified`) the same.
        func isSame(as mark: Identity) -> Bool {
            guard resourceKey == mark.resourceKey, length == mark.length else { return false }
            if let etag = mark.etag { return etag == self.etag }
            return mark.lastModified != nil && mark.lastModified == lastModified
        }
    }

    var identity: Identity
    /// The file's modification time when it was marked.
    var modified: timespec

    static func == (a: Self, b: Self) -> Bool {
        a.identity == b.identity && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
    }

    // MARK: Encoding

    /// The attribute's bytes: lines of `field value`, the first naming the format.
    var encoded: [UInt8] {
        var text = "haul-finished 1\nresource \(identity.resourceKey)\nlength \(identity.length)\n"
        text += "modified \(modified.tv_sec).\(modified.tv_nsec)\n"
        if let etag = identity.etag { text += "etag \(etag)\n" }
        if let lastModified = identity.lastModified { text += "last-modified \(lastModified)\n" }
        return Array(text.utf8)
    }

    /// Reads a mark; `nil` for anything that is not a complete mark of this format.
    init?(decoding bytes: some Collection<UInt8>) {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == "haul-finished 1", lines.last == "" else { return nil }
        var fields: [Substring: Substring] = [:]
        for line in lines.dropFirst().dropLast() {
            guard let space = line.firstIndex(of: " ") else { return nil }
            let key = line[..<space]
            guard fields[key] == nil else { return nil }
            fields[key] = line[line.index(after: space)...]
        }
        guard fields.count == lines.count - 2,
              let resource = fields["resource"], resource.utf8.count == 64, resource.allSatisfy(\.isHexDigit),
              let length = fields["length"].flatMap({ Int64($0) }),
              let modifiedText = fields["modified"], let dot = modifiedText.firstIndex(of: "."),
              let seconds = Int(modifiedText[..<dot]), let nanoseconds = Int(modifiedText[modifiedText.index(after: dot)...]),
              (0..<1_000_000_000).contains(nanoseconds),
              Set(fields.keys).isSubset(of: ["resource", "length", "modified", "etag", "last-modified"]),
              let identity = Identity(resourceKey: String(resource), length: length, etag: fields["etag"].map(String.init),
                                      lastModified: fields["last-modified"].map(String.init))
        else { return nil }
        self.identity = identity
        modified = timespec(tv_sec: seconds, tv_nsec: nanoseconds)
    }

    init(identity: Identity, modified: timespec) {
        self.identity = identity
        self.modified = modified
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
        let fd = openat(folder.descriptor, name, O_RDONLY | O_NONBLOCK | haul_o_nofollow() | haul_o_cloexec())
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = buffer.withUnsafeMutableBytes { haul_get_attribute(fd, attributeName, $0.baseAddress, $0.count) }
        guard count > 0, let mark = FinishedFileMark(decoding: buffer.prefix(count)) else { return false }
        let time = modificationTime(info)
        guard identity.isSame(as: mark.identity),
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
