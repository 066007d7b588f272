import Synchronization

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
    /// - Returns: the file's SHA-256, lowercase hex.
    /// - Throws: `checksumMismatch`, or `fileSystem` when the file cannot be read.
    func verify(_ partial: PartialFile, length: Int64, hasher: StreamHasher?) throws(DownloadError) -> String {
        let digests = try (hasher ?? StreamHasher(algorithms: algorithms, descriptor: partial.descriptor)).finish(length: length)
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

/// Hashes a download on a thread of its own, following the bytes as they are written, and the
/// rest from the file once it is complete.
///
/// ``offer(_:at:)`` notes every written slice (no hashing on the writer's thread). A hashing
/// thread reads back (from the page cache, just written) and hashes the file in order, as far
/// as the written bytes reach from byte 0. With one connection that is every byte, shortly after
/// it arrived, on the other core: the checksum adds next to nothing to the download (hashing in
/// the writer's thread added 57% to a 2 GiB download). With several connections the hashed prefix
/// grows as the first ranges fill. ``finish(length:)`` hashes what is left and returns the digests.
///
/// `@unchecked Sendable`: the state is under `monitor`; the digests are used only by the hashing
/// thread, and by ``finish(length:)`` after it ended.
final class StreamHasher: @unchecked Sendable {
    private let algorithms: [ChecksumAlgorithm]
    private let digests: [Digest]
    private let descriptor: Int32
    private let monitor = Monitor()
    private var written = ByteRangeSet()
    private var hashed: Int64 = 0
    /// Set by ``finish(length:)``: hash up to here, written or not (the file is complete).
    private var target: Int64?
    private var stopped = false
    private var threadStarted = false
    private var threadEnded = false
    private var failure: DownloadError?

    /// The most one step hashes before it looks at the state again.
    private static let step: Int64 = 16 << 20

    /// Nothing hashed yet; `descriptor` is the partial file, open until ``finish(length:)`` or ``stop()``.
    init(algorithms: [ChecksumAlgorithm], descriptor: Int32) {
        self.algorithms = algorithms
        self.digests = algorithms.map(Digest.init)
        self.descriptor = descriptor
    }

    /// Notes `bytes`, just written at `offset` (the hashing thread reads them back in order).
    func offer(_ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        guard !bytes.isEmpty else { return }
        let start = monitor.withLock { () -> Bool in
            written.insert(offset..<(offset + Int64(bytes.count)))
            monitor.broadcast()
            guard !threadStarted else { return false }
            threadStarted = true
            return true
        }
        if start { spawnThread(name: "haul-hash") { [self] in hashInOrder() } }
    }

    /// How far the written bytes reach without a gap from what is hashed (lock held).
    private var frontier: Int64 {
        if let target { return target }
        return written.ranges.first { $0.lowerBound <= hashed && hashed < $0.upperBound }?.upperBound ?? hashed
    }

    /// The hashing thread's loop (or, when no thread ever started, ``finish(length:)``'s).
    private func hashInOrder() {
        while true {
            let span = monitor.withLock { () -> Range<Int64>? in
                while true {
                    if stopped || failure != nil { return nil }
                    let limit = frontier
                    if limit > hashed { return hashed..<min(limit, hashed + Self.step) }
                    if target != nil { return nil }   // finished: everything hashed
                    monitor.wait()
                }
            }
            guard let span else { break }
            do throws(DownloadError) {
                try FileHashing.update(digests, descriptor: descriptor, range: span, bufferSize: 1 << 20)
                monitor.withLock {
                    hashed = span.upperBound
                    monitor.broadcast()
                }
            } catch {
                monitor.withLock { failure = error }
                break
            }
        }
        monitor.withLock {
            threadEnded = true
            monitor.broadcast()
        }
    }

    /// Hashes what is left of the file (up to `length`, complete on disk) and returns every digest.
    ///
    /// - Throws: `fileSystem` when the file cannot be read.
    func finish(length: Int64) throws(DownloadError) -> [ChecksumAlgorithm: [UInt8]] {
        let runHere = monitor.withLock { () -> Bool in
            target = length
            monitor.broadcast()
            guard !threadStarted else { return false }
            threadStarted = true
            return true
        }
        if runHere { hashInOrder() }
        let error = monitor.withLock { () -> DownloadError? in
            while !threadEnded { monitor.wait() }
            return failure
        }
        if let error { throw error }
        var result: [ChecksumAlgorithm: [UInt8]] = [:]
        for (algorithm, digest) in zip(algorithms, digests) { result[algorithm] = digest.finalize() }
        return result
    }

    /// Stops the hashing thread and waits for it (the download failed, or is over). Idempotent.
    func stop() {
        monitor.withLock {
            stopped = true
            monitor.broadcast()
            guard threadStarted else { return }
            while !threadEnded { monitor.wait() }
        }
    }
}
