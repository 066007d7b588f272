import CHaulTLS

/// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface.
///
/// ``hex(_:)-(UnsafeRawBufferPointer)`` digests bytes in one call; ``Hasher`` digests a stream
/// piece by piece (a file as it is written).
enum SHA256 {
    /// The length of a digest in bytes.
    static let byteCount = 32

    /// The digest of `bytes` as 64 lowercase hexadecimal digits.
    ///
    /// - Parameter bytes: the message.
    /// - Returns: the lowercase hex digest.
    static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        var hasher = Hasher()
        hasher.update(bytes)
        return hexString(hasher.finalize())
    }

    /// The digest of `bytes` as 64 lowercase hexadecimal digits.
    ///
    /// - Parameter bytes: the message.
    /// - Returns: the lowercase hex digest.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBytes { hex($0) }
    }

    /// Lowercase hexadecimal digits for `bytes`, two per byte.
    ///
    /// - Parameter bytes: any bytes (a digest).
    /// - Returns: the hex text.
    static func hexString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// An incremental SHA-256 computation with value semantics.
    ///
    /// Feed bytes with ``update(_:)`` and read the digest with ``finalize()``, which also resets
    /// the hasher to the empty message. A copy is independent of the original (copy on write:
    /// the OpenSSL context is duplicated when a shared one is about to change).
    struct Hasher: Sendable {
        private var context: Context

        /// Starts the digest of an empty message.
        init() {
            context = Context()
        }

        /// Adds `bytes` to the message.
        ///
        /// - Parameter bytes: the next bytes of the message.
        mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            makeUnique()
            let ok = EVP_DigestUpdate(context.pointer, base, bytes.count)
            precondition(ok == 1, "EVP_DigestUpdate failed")
        }

        /// Adds `bytes` to the message.
        ///
        /// - Parameter bytes: the next bytes of the message.
        mutating func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { update($0) }
        }

        /// The digest of every byte given so far (32 bytes); the hasher starts over afterwards.
        ///
        /// - Returns: the raw digest.
        mutating func finalize() -> [UInt8] {
            makeUnique()
            var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
            var size: UInt32 = 0
            let ok = EVP_DigestFinal_ex(context.pointer, &digest, &size)
            precondition(ok == 1 && Int(size) == SHA256.byteCount, "EVP_DigestFinal_ex failed")
            context.reset()
            return Array(digest.prefix(Int(size)))
        }

        private mutating func makeUnique() {
            if !isKnownUniquelyReferenced(&context) { context = context.copy() }
        }
    }
}

extension SHA256.Hasher {
    /// Owns one OpenSSL digest context.
    ///
    /// `@unchecked Sendable`: the context is only changed through a `Hasher` that holds the one
    /// reference to it (copy on write), and reading a shared context to copy it is thread-safe.
    fileprivate final class Context: @unchecked Sendable {
        let pointer: OpaquePointer

        init() {
            guard let pointer = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
            self.pointer = pointer
            reset()
        }

        private init(copying other: Context) {
            guard let pointer = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new: out of memory") }
            self.pointer = pointer
            precondition(EVP_MD_CTX_copy_ex(pointer, other.pointer) == 1, "EVP_MD_CTX_copy_ex failed")
        }

        /// An independent context in the same state.
        func copy() -> Context { Context(copying: self) }

        /// Back to the empty message.
        func reset() {
            precondition(EVP_DigestInit_ex(pointer, EVP_sha256(), nil) == 1, "EVP_DigestInit_ex failed")
        }

        deinit { EVP_MD_CTX_free(pointer) }
    }
}
