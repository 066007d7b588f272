import HaulCore
import HaulHTTP
import HaulCrypto
/// What a later run needs to continue a download: the file `NAME.resume` beside `NAME.part`.
///
/// It says which resource the partial file holds (``resourceKey``, ``etag``, ``lastModified``,
/// ``totalLength``) and which of its bytes are durably on disk (``completed``). It is written
/// only after the bytes it claims were fsynced, so a record never claims bytes that are not
/// there. The file is small, line-based UTF-8 text, closed by a SHA-256 of everything above
/// it (see ``encoded()`` and ``decode(_:)``); ``load(for:in:)``, ``save(for:in:fieldsChecked:)`` and
/// ``remove(for:in:)`` handle the file itself.
package struct ResumeRecord: Sendable, Equatable {
    /// The version written in the first line; a record of any other version is not read.
    static let formatVersion = 2
    /// The suffix of record files: `NAME.resume`.
    static let suffix = ".resume"
    /// The suffix of the file a record is written to before it is renamed: `NAME.rtmp`. As
    /// short as `.resume`, so it fits wherever `NAME.resume` fits (names are at most 248 bytes).
    static let temporarySuffix = ".rtmp"

    /// The original URL with its secrets redacted, for people reading the file; never matched.
    var redactedURL: String
    /// The final URL (after redirects), redacted, for people reading the file; never matched.
    var redactedFinalURL: String
    /// Which resource this is: ``resourceKey(for:)`` of the original URL (scheme, host, port
    /// and path; no userinfo, no query), so a re-signed URL still matches.
    var resourceKey: String
    /// The server's strong ETag, with its quotes; never a weak one (see ``strongETag(_:)``).
    var etag: String?
    /// The server's `Last-Modified` value.
    var lastModified: String?
    /// The length of the whole file.
    var totalLength: Int64
    /// The bytes of the partial file that are durably on disk, within `0..<totalLength`.
    var completed: ByteRangeSet
    /// The checksum the finished file must have, such as `sha256:<hex>`, when one was given.
    var expectedChecksum: String?
    /// The digest of the whole file the server announced (`Repr-Digest`...), as `ALGO=hex`,
    /// so a resumed download still checks it when the later response does not repeat it.
    var serverDigest: String? = nil
    /// The SHA-256 of the completed bytes, cut at ``BlockHash/blockSize`` boundaries, checked
    /// again on resume so bytes changed on disk meanwhile are downloaded again.
    var blockHashes: [BlockHash] = []
    /// The bytes of the pieces that passed their piece checksum (``PieceChecksums``), within
    /// ``completed``: a resume trusts them without reading them again.
    var verifiedPieces = ByteRangeSet()
}

extension ResumeRecord {
    /// Creates the record for a download of `url`, with the validators of its response.
    ///
    /// - Parameters:
    ///   - url: the URL the user gave (its key is kept; its text is kept redacted).
    ///   - finalURL: the URL that answered, after redirects (kept redacted).
    ///   - etagHeader: the response's `ETag` header; kept only when it is a strong ETag.
    ///   - lastModified: the response's `Last-Modified` header.
    ///   - totalLength: the length of the whole file.
    ///   - completed: the bytes already durably on disk.
    ///   - expectedChecksum: the checksum the finished file must have.
    ///   - shownURL: `url.description`, when the caller has it already.
    ///   - shownFinalURL: `finalURL.description`, when the caller has it already.
    ///   - resourceKey: ``resourceKey(for:)`` of `url`, when the caller has it already.
    init(
        url: HTTPURL, finalURL: HTTPURL, etagHeader: String?, lastModified: String?,
        totalLength: Int64, completed: ByteRangeSet = ByteRangeSet(), expectedChecksum: String? = nil,
        shownURL: String? = nil, shownFinalURL: String? = nil, resourceKey: String? = nil
    ) {
        self.init(
            redactedURL: shownURL ?? url.description, redactedFinalURL: shownFinalURL ?? finalURL.description,
            resourceKey: resourceKey ?? Self.resourceKey(for: url), etag: Self.strongETag(etagHeader),
            lastModified: lastModified, totalLength: totalLength, completed: completed,
            expectedChecksum: expectedChecksum
        )
    }

    /// The key of the resource at `url`: the SHA-256 (lowercase hex) of
    /// `scheme://host:port/path`, without userinfo or query.
    ///
    /// A URL signed again (a new query) for the same file has the same key; whether the file
    /// itself is unchanged is then up to the validators (ETag, Last-Modified, length).
    ///
    /// - Parameter url: the URL the user gave.
    /// - Returns: 64 lowercase hexadecimal digits.
    static func resourceKey(for url: HTTPURL) -> String {
        // "SCHEME://HOST:PORT/PATH", built as bytes (by interpolation it cost several times more).
        var text: [UInt8] = []
        text.reserveCapacity(16 + url.host.utf8.count + url.path.utf8.count)
        text.appendUTF8(url.scheme.rawValue)
        text.appendUTF8("://")
        if url.isIPv6Literal { text.append(UInt8(ascii: "[")) }
        text.appendUTF8(url.host)
        if url.isIPv6Literal { text.append(UInt8(ascii: "]")) }
        text.append(UInt8(ascii: ":"))
        text.appendUTF8(String(url.port))
        text.appendUTF8(url.path)
        return SHA256.hex(text)
    }

    /// Which file a download of several servers is: its content's digest when the request gives
    /// one (a checksum, else its piece checksums), else its servers' keys in sorted order; so a
    /// resume finds its record whichever server comes first. One server: ``resourceKey(for:)``.
    static func resourceKey(for urls: [HTTPURL], checksum: Checksum?, pieces: PieceChecksums?) -> String {
        if let checksum { return SHA256.hex(Array("content \(checksum.algorithm)=\(checksum.hex)".utf8)) }
        if let pieces, let first = pieces.digests.first {
            return SHA256.hex(Array("pieces \(pieces.algorithm) \(pieces.length) \(pieces.digests.count) \(Hex.encode(first))".utf8))
        }
        guard urls.count > 1 else { return urls.first.map(resourceKey(for:)) ?? "" }
        return SHA256.hex(Array(("sources " + urls.map { resourceKey(for: $0) }.sorted().joined(separator: " ")).utf8))
    }

    /// The ETag in `header` when it is a strong one, else `nil`.
    ///
    /// A strong ETag is `"` + any characters from `!`, `#`–`~` or bytes above 0x7F + `"`
    /// (RFC 9110, section 8.8.3), with optional surrounding spaces or tabs. A weak ETag
    /// (`W/"x"`) cannot validate a byte range (`If-Range` needs a strong comparison), so it is
    /// never kept; neither is anything malformed.
    ///
    /// - Parameter header: the `ETag` header value, if any.
    /// - Returns: the ETag with its quotes and without surrounding whitespace, or `nil`.
    static func strongETag(_ header: String?) -> String? {
        guard let header else { return nil }
        var bytes = Array(header.utf8)[...]
        while let first = bytes.first, first == 0x20 || first == 0x09 { bytes = bytes.dropFirst() }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes = bytes.dropLast() }
        guard bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 else { return nil }
        let inner = bytes.dropFirst().dropLast()
        guard inner.allSatisfy({ $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The value for `If-Range` when resuming: the strong ETag, else the Last-Modified date.
    var ifRangeValidator: String? { etag ?? lastModified }
}

/// Why bytes are not a valid resume record.
package enum ResumeRecordError: Error, Equatable, CustomStringConvertible {
    /// The record ends early: no checksum line, or cut in the middle of a line.
    case truncated
    /// The record is damaged or was edited: the reason, as a phrase.
    case corrupt(String)
    /// The record was written in another format version.
    case unsupportedVersion(Int)

    /// A phrase for messages: "is truncated", "is damaged (…)", "has format version 2, …".
    package var description: String {
        switch self {
        case .truncated: "is truncated"
        case .corrupt(let reason): "is damaged (\(reason))"
        case .unsupportedVersion(let version):
            "has format version \(version), which this version of Haul does not read"
        }
    }
}
