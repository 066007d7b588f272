import HaulCore
/// SHA-256 shortcuts for the resume record (its own checksum and its resource key).
///
/// A thin layer over ``Digest``; streams use `Digest(.sha256)` directly.
package enum SHA256 {
    /// The length of a digest in bytes.
    package static let byteCount = ChecksumAlgorithm.sha256.byteCount

    /// The digest of `bytes` as 64 lowercase hexadecimal digits.
    ///
    /// - Parameter bytes: the message.
    /// - Returns: the lowercase hex digest.
    package static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        Hex.encode(Digest.hash(.sha256, bytes))
    }

    /// The digest of `bytes` as 64 lowercase hexadecimal digits.
    ///
    /// - Parameter bytes: the message.
    /// - Returns: the lowercase hex digest.
    package static func hex(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { hex($0) }
    }
}
