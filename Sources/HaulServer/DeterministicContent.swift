import CHaulTLS

/// Reproducible pseudo-random bytes: the body `HaulServer` serves for `/bytes/N`.
///
/// A table of 65,521 bytes (a prime length, so no power-of-two block ever lines up with the
/// period) is generated from the seed with xorshift64*; the byte at offset `i` is
/// `table[i % 65521]`. Tests compute the expected bytes of any range without a download.
public struct DeterministicContent: Sendable {
    /// The length of the repeating table (a prime).
    public static let period = 65_521

    /// The seed this content was generated from.
    public let seed: UInt64

    /// One period of the content.
    let table: [UInt8]

    /// Creates the content for `seed`.
    ///
    /// - Parameter seed: any value; equal seeds give equal content.
    public init(seed: UInt64 = 0) {
        self.seed = seed
        var state = seed ^ 0x9E37_79B9_7F4A_7C15
        if state == 0 { state = 0x2545_F491_4F6C_DD1D }
        var table = [UInt8](repeating: 0, count: Self.period)
        for index in 0..<Self.period {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            table[index] = UInt8(truncatingIfNeeded: (state &* 0x2545_F491_4F6C_DD1D) >> 56)
        }
        self.table = table
    }

    /// The byte at `offset`.
    ///
    /// - Parameter offset: a non-negative offset into the (unbounded) content.
    /// - Returns: `table[offset % 65521]`.
    public func byte(at offset: Int64) -> UInt8 {
        table[Int(offset % Int64(Self.period))]
    }

    /// Fills `buffer` with the content starting at `offset`.
    ///
    /// Copies whole runs of the table with `memcpy`, so it is fast enough for benchmarks.
    ///
    /// - Parameters:
    ///   - buffer: the destination; every byte is written.
    ///   - offset: the content offset of `buffer[0]`.
    public func fill(_ buffer: UnsafeMutableRawBufferPointer, from offset: Int64) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        var position = Int(offset % Int64(Self.period))
        var written = 0
        table.withUnsafeBytes { source in
            while written < buffer.count {
                let run = min(Self.period - position, buffer.count - written)
                (base + written).copyMemory(from: source.baseAddress! + position, byteCount: run)
                written += run
                position = 0
            }
        }
    }

    /// The bytes of `range`.
    ///
    /// - Parameter range: content offsets, `lowerBound >= 0`.
    /// - Returns: `range.count` bytes.
    public func bytes(_ range: Range<Int64>) -> [UInt8] {
        let count = Int(range.upperBound - range.lowerBound)
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer), from: range.lowerBound)
            initialized = count
        }
    }

    /// The lowercase hexadecimal SHA-256 of the first `length` bytes.
    ///
    /// - Parameter length: how many bytes from offset 0 to hash.
    /// - Returns: the digest, or `nil` if OpenSSL could not create a digest context.
    public func sha256Hex(length: Int64) -> String? {
        guard let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else { return nil }
        let block = patternBuffer(chunkSize: 1 << 20)
        var offset: Int64 = 0
        let ok = block.withUnsafeBytes { raw -> Bool in
            while offset < length {
                let start = Int(offset % Int64(Self.period))
                let count = Int(min(Int64(1 << 20), length - offset))
                guard EVP_DigestUpdate(context, raw.baseAddress! + start, count) == 1 else { return false }
                offset += Int64(count)
            }
            return true
        }
        guard ok else { return nil }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var size: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &digest, &size) == 1 else { return nil }
        let hex = Array("0123456789abcdef".utf8)
        var text = [UInt8]()
        for value in digest.prefix(Int(size)) {
            text.append(hex[Int(value >> 4)])
            text.append(hex[Int(value & 15)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A buffer of `period + chunkSize` bytes of content from offset 0.
    ///
    /// For any content offset `o`, the `chunkSize` bytes at `o` are the buffer's bytes at
    /// `o % period`, so a sender writes straight from it without copying or allocating.
    func patternBuffer(chunkSize: Int) -> [UInt8] {
        bytes(0..<Int64(Self.period + chunkSize))
    }
}
