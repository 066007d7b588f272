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
import Haul
import HaulMetalink

/// Metalink documents (RFC 5854) given as operands: `haul FILE.meta4` downloads every file the
/// document describes into `-d`, each from its URLs (by priority) and checked against its
/// strongest hash.
enum MetalinkInput {
    /// One file of a document: its servers, its name (a relative path checked by
    /// ``Metalink/parse(_:)``), the checksum it must have and its pieces' checksums.
    struct Planned: Sendable {
        var urls: [String]
        var name: String
        var checksum: Checksum?
        var pieces: PieceChecksums?
    }

    /// Whether `operand` names a local Metalink document: not a URL, and ending in `.meta4` or
    /// `.metalink`.
    static func isDocument(_ operand: String) -> Bool {
        !operand.contains("://") && (operand.hasSuffix(".meta4") || operand.hasSuffix(".metalink"))
    }

    /// Whether a download of `url` brought a Metalink document: the server called it
    /// `application/metalink4+xml`, or its path ends in `.meta4` or `.metalink`.
    static func isDocument(_ done: DownloadResult, from url: URL) -> Bool {
        // The media type: the bytes before any `;`, without spaces or tabs, in any case.
        let type = (done.response.headers["Content-Type"] ?? "").utf8.prefix { $0 != UInt8(ascii: ";") }
            .filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
        return String(decoding: type, as: UTF8.self).lowercased() == "application/metalink4+xml"
            || url.path.hasSuffix(".meta4") || url.path.hasSuffix(".metalink")
    }

    /// The files of the document at `path` (relative to `directory`), with the parser's
    /// warnings.
    ///
    /// - Throws: `fileSystem` when it cannot be read, `invalidArgument` when it is no usable
    ///   Metalink 4 document.
    static func files(at path: String, in directory: URL) throws(DownloadError) -> (files: [Planned], warnings: [String]) {
        let bytes = try read(path, in: directory)
        let document: Metalink
        do throws(MetalinkError) {
            document = try Metalink.parse(bytes)
        } catch {
            throw DownloadError(.invalidArgument, "'\(HumanFormat.printable(path))' is not a usable Metalink document: \(error.message)")
        }
        let files = document.files.map { file in
            Planned(urls: file.urls.map(\.url), name: file.name,
                    checksum: file.hash.flatMap { try? Checksum(algorithm: $0.algorithm, expected: $0.digest) },
                    pieces: file.pieces.flatMap { try? PieceChecksums(length: $0.length, algorithm: $0.algorithm, digests: $0.digests) })
        }
        return (files, document.warnings)
    }

    /// The bytes of the document (a regular file of at most ``Metalink/Limits/documentBytes``).
    private static func read(_ path: String, in directory: URL) throws(DownloadError) -> [UInt8] {
        let shown = HumanFormat.printable(path)
        let descriptor = open(URL(fileURLWithPath: path, relativeTo: directory).path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw DownloadError(.fileSystem, "cannot read '\(shown)': \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw DownloadError(.fileSystem, "cannot read '\(shown)': not a regular file")
        }
        guard status.st_size <= Metalink.Limits.documentBytes else {
            throw DownloadError(.invalidArgument, "'\(shown)' is larger than a Metalink document may be (32 MiB)")
        }
        let (bytes, failure) = readAll(from: descriptor)
        if let failure { throw DownloadError(.fileSystem, "cannot read '\(shown)': \(String(cString: strerror(failure)))") }
        return bytes
    }
}
