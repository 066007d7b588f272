import HaulCore
import Synchronization
import HaulHTTP
import HaulCrypto

/// The digests a finished download must match before it gets its final name: the user's
/// checksum (``DownloadRequest/checksum``) and the server's own digest (``ServerDigest``), each
/// when present. SHA-256 is always computed as well, for ``DownloadResult/sha256``.
struct Verification: Sendable {
    /// The user's checksum.
    var checksum: Checksum?
    /// The digest the server announced for the whole file, and where it came from (for messages).
    var serverDigest: Checksum?
    /// The response field ``serverDigest`` came from.
    var serverField: String

    /// A verification, or `nil` when there is nothing to verify.
    ///
    /// - Parameters:
    ///   - checksum: the user's checksum.
    ///   - serverDigest: the server's digest of the whole file.
    ///   - serverField: the response field the server's digest came from.
    init?(checksum: Checksum?, serverDigest: Checksum?, serverField: String = "digest") {
        guard checksum != nil || serverDigest != nil else { return nil }
        self.checksum = checksum
        self.serverDigest = serverDigest
        self.serverField = serverField
    }

    /// What a download must be checked against: the request's checksum, and the server's digest
    /// from `head` (or, when this response has none, the one a resumed download's record kept).
    init?(request: DownloadRequest, head: ResponseHead, record: ResumeRecord?) {
        if let digest = ServerDigest(head: head) {
            self.init(checksum: request.checksum, serverDigest: digest.checksum, serverField: digest.field.rawValue)
        } else {
            let kept = record?.serverDigest.flatMap { text in try? Checksum(parsing: text) }
            self.init(checksum: request.checksum, serverDigest: kept, serverField: "digest")
        }
    }

    /// Hashes the finished partial file (what `hasher` did not hash while it arrived) and checks it.
    ///
    /// - Parameters:
    ///   - partial: the complete partial file.
    ///   - length: its length.
    ///   - hasher: the hashing done during the transfer, if any.
    ///   - threads: where a hasher made here follows the file.
    /// - Returns: the file's SHA-256, lowercase hex.
    /// - Throws: `checksumMismatch`, or `fileSystem` when the file cannot be read.
    func verify(_ partial: PartialFile, length: Int64, hasher: StreamHasher?, threads: ThreadPool) throws(DownloadError) -> String {
        let digests = try (hasher ?? StreamHasher(algorithms: algorithms, descriptor: partial.descriptor, threads: threads))
            .finish(length: length)
        return try check(digests)
    }

    /// The algorithms to compute: each digest's, and SHA-256; each once.
    var algorithms: [ChecksumAlgorithm] {
        var result: [ChecksumAlgorithm] = [.sha256]
        for algorithm in [checksum?.algorithm, serverDigest?.algorithm].compactMap({ $0 }) where !result.contains(algorithm) {
            result.append(algorithm)
        }
        return result
    }

    /// Compares computed digests with the expected ones.
    ///
    /// - Parameter digests: at least every algorithm of ``algorithms``.
    /// - Returns: the SHA-256 of the file, lowercase hex.
    /// - Throws: `checksumMismatch` naming which digest differs (the server's is checked first:
    ///   a mismatch there means the bytes are not what the server meant to send).
    func check(_ digests: [ChecksumAlgorithm: [UInt8]]) throws(DownloadError) -> String {
        if let serverDigest, let computed = digests[serverDigest.algorithm], !serverDigest.matches(computed) {
            throw DownloadError(.checksumMismatch, "the file does not match the server's \(serverField) "
                                + "(\(serverDigest.algorithm) \(serverDigest.hex), computed \(Hex.encode(computed)))")
        }
        if let checksum, let computed = digests[checksum.algorithm], !checksum.matches(computed) {
            throw DownloadError(.checksumMismatch, "checksum mismatch: expected \(checksum.algorithm) \(checksum.hex), "
                                + "computed \(Hex.encode(computed))")
        }
        return Hex.encode(digests[.sha256] ?? [])
    }
}
