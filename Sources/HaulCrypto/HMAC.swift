import CHaulTLS

/// HMAC (RFC 2104) through OpenSSL, for request signatures.
package enum HMAC {
    /// The authentication code of `message` under `key`.
    ///
    /// - Parameters:
    ///   - algorithm: the hash function (`.sha256` for AWS Signature Version 4 and OSS V4,
    ///     `.sha1` for OSS V1).
    ///   - key: the secret key (any length; OpenSSL hashes keys longer than a block).
    ///   - message: the text to authenticate.
    /// - Returns: the raw code, ``ChecksumAlgorithm/byteCount`` bytes.
    package static func code(_ algorithm: ChecksumAlgorithm, key: [UInt8], message: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { buffer, count in
            let length = key.withUnsafeBytes { key in
                message.withUnsafeBytes { message in
                    haul_hmac(algorithm.shimIdentifier, key.baseAddress, key.count,
                              message.baseAddress, message.count, buffer.baseAddress)
                }
            }
            precondition(Int(length) == algorithm.byteCount, "HMAC failed")
            count = Int(length)
        }
    }

    /// The authentication code of the UTF-8 bytes of `message` under `key`.
    ///
    /// - Parameters:
    ///   - algorithm: the hash function.
    ///   - key: the secret key.
    ///   - message: the text to authenticate, as UTF-8.
    /// - Returns: the raw code.
    package static func code(_ algorithm: ChecksumAlgorithm, key: [UInt8], message: String) -> [UInt8] {
        code(algorithm, key: key, message: Array(message.utf8))
    }
}
