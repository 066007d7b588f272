/// The checksum of every piece of a file (a Metalink document's `<pieces>`): the file is cut into
/// pieces of ``length`` bytes (the last one shorter), and each has its own digest.
///
/// With them, a transfer over ranges hashes every piece once it is complete, before it counts: a
/// piece that does not match is fetched again, and with mirrors the servers that sent its bytes
/// are set aside.
public struct PieceChecksums: Sendable, Equatable {
    /// The bytes of every piece but the last.
    public let length: Int64
    /// The hash of each piece.
    public let algorithm: ChecksumAlgorithm
    /// The raw digest of each piece, in file order.
    public let digests: [[UInt8]]

    /// Checks that `length` is positive and that every digest has the algorithm's length.
    ///
    /// - Throws: `invalidArgument` otherwise.
    public init(length: Int64, algorithm: ChecksumAlgorithm, digests: [[UInt8]]) throws(DownloadError) {
        guard length > 0 else { throw DownloadError(.invalidArgument, "a piece length must be positive") }
        guard digests.allSatisfy({ $0.count == algorithm.byteCount }) else {
            throw DownloadError(.invalidArgument, "every piece digest must have \(algorithm.byteCount) bytes for \(algorithm)")
        }
        self.length = length
        self.algorithm = algorithm
        self.digests = digests
    }

    /// The bytes of piece `index` in a file of `total` bytes.
    func range(of index: Int, total: Int64) -> Range<Int64> {
        let start = Int64(index) * length
        return start..<min(total, start + length)
    }

    /// Whether these pieces cut a file of `total` bytes: one digest per piece.
    ///
    /// - Throws: `lengthMismatch` otherwise.
    func check(total: Int64) throws(DownloadError) {
        let (quotient, remainder) = total.quotientAndRemainder(dividingBy: length)
        guard Int64(digests.count) == quotient + (remainder > 0 ? 1 : 0) else {
            throw DownloadError(.lengthMismatch, "the server's file has \(total) bytes, which \(digests.count) pieces of "
                                + "\(length) bytes do not cut")
        }
    }

    /// Checks every piece of a file written whole by one connection (a small file, or a server
    /// without ranges: no piece was checked as it completed), read back from `descriptor`.
    ///
    /// - Throws: `lengthMismatch` when the pieces do not cut `total`, `checksumMismatch` naming
    ///   the first piece whose bytes differ, `fileSystem` when the file cannot be read.
    func checkAll(descriptor: Int32, total: Int64) throws(DownloadError) {
        try check(total: total)
        for index in digests.indices {
            let range = range(of: index, total: total)
            guard try FileHashing.hash(descriptor: descriptor, algorithm: algorithm, range: range) == digests[index] else {
                throw DownloadError(.checksumMismatch, "bytes \(range.lowerBound)-\(range.upperBound - 1) do not match piece \(index + 1)'s checksum")
            }
        }
    }
}
