import CHaulTLS

/// A streaming hash computation through OpenSSL's EVP interface.
///
/// Feed bytes with ``update(_:)-(UnsafeRawBufferPointer)`` and read the digest with
/// ``finalize()``, which also starts the computation over on the empty message. One instance
/// is used by one thread at a time (it is not `Sendable`); create one per stream.
package final class Digest {
    /// The hash function computed.
    package let algorithm: ChecksumAlgorithm
    private let context: OpaquePointer

    /// Starts the digest of an empty message.
    ///
    /// - Parameter algorithm: the hash function.
    package init(_ algorithm: ChecksumAlgorithm) {
        guard let context = haul_digest_new(algorithm.shimIdentifier) else {
            fatalError("OpenSSL could not create a \(algorithm) digest context")
        }
        self.algorithm = algorithm
        self.context = context
    }

    private init(_ algorithm: ChecksumAlgorithm, context: OpaquePointer) {
        self.algorithm = algorithm
        self.context = context
    }

    deinit { haul_digest_free(context) }

    /// An independent computation in the same state: the copy can be finalized (to read the
    /// digest of the bytes so far) while this one goes on.
    ///
    /// - Returns: a new digest that has seen the same bytes.
    package func copy() -> Digest {
        guard let context = EVP_MD_CTX_new() else { fatalError("OpenSSL could not create a digest context") }
        guard EVP_MD_CTX_copy_ex(context, self.context) == 1 else { fatalError("EVP_MD_CTX_copy_ex failed") }
        return Digest(algorithm, context: context)
    }

    /// Adds `bytes` to the message.
    ///
    /// - Parameter bytes: the next bytes of the message (may be empty).
    package func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        let ok = haul_digest_update(context, base, bytes.count)
        precondition(ok == 1, "EVP_DigestUpdate failed")
    }

    /// Adds `bytes` to the message.
    ///
    /// - Parameter bytes: the next bytes of the message.
    package func update(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// The digest of every byte given so far; the computation starts over afterwards.
    ///
    /// - Returns: the raw digest, ``ChecksumAlgorithm/byteCount`` bytes.
    package func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { buffer, count in
            let length = haul_digest_final(context, buffer.baseAddress)
            precondition(Int(length) == algorithm.byteCount, "EVP_DigestFinal_ex failed")
            count = Int(length)
        }
    }

    /// The digest of `bytes` in one call.
    ///
    /// - Parameters:
    ///   - algorithm: the hash function.
    ///   - bytes: the whole message.
    /// - Returns: the raw digest.
    package static func hash(_ algorithm: ChecksumAlgorithm, _ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Int(EVP_MAX_MD_SIZE)) { buffer, count in
            let length = haul_digest_once(algorithm.shimIdentifier, bytes.baseAddress, bytes.count, buffer.baseAddress)
            precondition(Int(length) == algorithm.byteCount, "OpenSSL could not compute a \(algorithm) digest")
            count = Int(length)
        }
    }

    /// The digest of `bytes` in one call.
    ///
    /// - Parameters:
    ///   - algorithm: the hash function.
    ///   - bytes: the whole message.
    /// - Returns: the raw digest.
    package static func hash(_ algorithm: ChecksumAlgorithm, _ bytes: some Collection<UInt8>) -> [UInt8] {
        let done = bytes.withContiguousStorageIfAvailable { hash(algorithm, UnsafeRawBufferPointer($0)) }
        return done ?? Array(bytes).withUnsafeBytes { hash(algorithm, $0) }
    }
}
