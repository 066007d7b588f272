import CHaulTLS

/// A hash function Haul can verify a download with.
///
/// Every algorithm is computed by the system OpenSSL. `md5` and `sha1` are offered because
/// mirrors still publish them; they detect corruption but not a deliberate substitution.
public enum ChecksumAlgorithm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// SHA-256 (FIPS 180-4), 32 bytes.
    case sha256
    /// SHA-512 (FIPS 180-4), 64 bytes.
    case sha512
    /// SHA-1 (FIPS 180-4), 20 bytes.
    case sha1
    /// MD5 (RFC 1321), 16 bytes.
    case md5

    /// Parses an algorithm name.
    ///
    /// Case-insensitive; the hyphenated spellings aria2 and HTTP use (`sha-256`, `sha-512`,
    /// `sha-1`) are accepted too.
    ///
    /// - Parameter name: for example `"sha256"`, `"SHA-256"` or `"md5"`.
    public init?(name: String) {
        var lowered = name.lowercased()
        if lowered.hasPrefix("sha-") { lowered.remove(at: lowered.index(lowered.startIndex, offsetBy: 3)) }
        guard let algorithm = ChecksumAlgorithm(rawValue: lowered) else { return nil }
        self = algorithm
    }

    /// The length of a digest in bytes.
    public var byteCount: Int {
        switch self {
        case .sha256: 32
        case .sha512: 64
        case .sha1: 20
        case .md5: 16
        }
    }

    /// The name used on the command line (`sha256`, `sha512`, `sha1`, `md5`).
    public var description: String { rawValue }

    /// The algorithm's identifier in the C shim (`HAUL_DIGEST_*`).
    var shimIdentifier: Int32 {
        switch self {
        case .sha256: Int32(HAUL_DIGEST_SHA256)
        case .sha512: Int32(HAUL_DIGEST_SHA512)
        case .sha1: Int32(HAUL_DIGEST_SHA1)
        case .md5: Int32(HAUL_DIGEST_MD5)
        }
    }
}
