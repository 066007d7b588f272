import HaulCore
import HaulCrypto
/// The digest a download must have: an algorithm and the expected bytes.
///
/// Written `ALGO=HEX` on the command line (`--checksum=sha256=9f86d0…`).
public struct Checksum: Sendable, Hashable, CustomStringConvertible {
    /// The hash function.
    public let algorithm: ChecksumAlgorithm
    /// The expected digest, ``ChecksumAlgorithm/byteCount`` bytes.
    public let expected: [UInt8]

    /// Creates a checksum from raw digest bytes.
    ///
    /// - Parameters:
    ///   - algorithm: the hash function.
    ///   - expected: the digest; its length must be the algorithm's.
    /// - Throws: `invalidArgument` when the length is wrong.
    public init(algorithm: ChecksumAlgorithm, expected: [UInt8]) throws(DownloadError) {
        guard expected.count == algorithm.byteCount else {
            throw DownloadError(.invalidArgument,
                                "a \(algorithm) digest has \(algorithm.byteCount) bytes, not \(expected.count)")
        }
        self.algorithm = algorithm
        self.expected = expected
    }

    /// Creates a checksum from hexadecimal digits.
    ///
    /// - Parameters:
    ///   - algorithm: the hash function.
    ///   - hex: the digest in hex, either case, exactly twice the algorithm's byte count.
    /// - Throws: `invalidArgument` when `hex` is not hex or has the wrong length.
    public init(algorithm: ChecksumAlgorithm, hex: String) throws(DownloadError) {
        guard let bytes = Hex.decode(hex) else {
            throw DownloadError(.invalidArgument, "'\(hex)' is not a hexadecimal \(algorithm) digest")
        }
        guard bytes.count == algorithm.byteCount else {
            throw DownloadError(.invalidArgument,
                                "a \(algorithm) digest has \(algorithm.byteCount * 2) hex digits, not \(hex.utf8.count)")
        }
        self.algorithm = algorithm
        self.expected = bytes
    }

    /// Parses `ALGO=HEX`, as given to `--checksum`.
    ///
    /// The algorithm is one of ``ChecksumAlgorithm`` (any case, `sha-256` spelling accepted);
    /// the hex digits may be in either case.
    ///
    /// - Parameter text: for example `"sha256=E3B0C442…"`.
    /// - Throws: `invalidArgument` naming what is wrong (no `=`, unknown algorithm, bad digest).
    public init(parsing text: String) throws(DownloadError) {
        guard let equals = text.firstIndex(of: "=") else {
            throw DownloadError(.invalidArgument, "checksum '\(text)' is not ALGO=HEX (for example sha256=…)")
        }
        let name = String(text[..<equals])
        guard let algorithm = ChecksumAlgorithm(name: name) else {
            let known = ChecksumAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")
            throw DownloadError(.invalidArgument, "unknown checksum algorithm '\(name)' (known: \(known))")
        }
        try self.init(algorithm: algorithm, hex: String(text[text.index(after: equals)...]))
    }

    /// The expected digest as lowercase hex.
    public var hex: String { Hex.encode(expected) }

    /// `ALGO=hex`, the form ``init(parsing:)`` reads.
    public var description: String { "\(algorithm)=\(hex)" }

    /// Whether `digest` is the expected one.
    ///
    /// - Parameter digest: a digest computed with ``algorithm``.
    public func matches(_ digest: [UInt8]) -> Bool {
        digest == expected
    }
}
