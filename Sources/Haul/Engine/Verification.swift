import CHaulSys
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
/// thread in the idle scheduling class reads back (from the page cache, just written) and hashes
/// the file in order, as far as the written bytes reach from byte 0, in steps of a few MiB. It
/// only uses CPU that neither the download nor anything else wants, so with one connection the
/// checksum costs the download nothing while a core has spare time (hashing in the writer's
/// thread added 57% to a 2 GiB download; a follower at normal priority 13-25%). With several
/// connections the hashed prefix grows as the first ranges fill. ``finish(length:)`` stops the
/// follower and hashes what is left on its caller's thread, at normal priority.
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

    /// The hashing thread is asleep, waiting for ``batch`` more bytes (or the end).
    private var sleeping = false
    /// The hashing thread's read buffer (small enough that what it reads is still in the CPU's
    /// cache when it is hashed), allocated once: a buffer mapped per step cost page faults on
    /// every step.
    private let buffer: UnsafeMutableRawBufferPointer

    /// The most one step hashes before it looks at the state again.
    private static let step: Int64 = 16 << 20
    /// The most the following thread hashes at a time: it runs only on idle CPU, and
    /// ``finish(length:)`` waits for its current step before it takes over.
    private static let followingStep: Int64 = 1 << 20
    /// The hashing thread sleeps until this many written bytes are waiting: waking it for every
    /// write (a few hundred KiB) more than doubled what hashing cost in CPU.
    private static let batch: Int64 = 4 << 20
    /// ``buffer``'s size.
    private static let bufferSize = 256 << 10

    /// Nothing hashed yet; `descriptor` is the partial file, open until ``finish(length:)`` or ``stop()``.
    init(algorithms: [ChecksumAlgorithm], descriptor: Int32) {
        self.algorithms = algorithms
        self.digests = algorithms.map(Digest.init)
        self.descriptor = descriptor
        self.buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 4096)
    }

    deinit {
        buffer.deallocate()
    }

    /// Notes `bytes`, just written at `offset` (the hashing thread reads them back in order).
    func offer(_ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        guard !bytes.isEmpty else { return }
        let start = monitor.withLock { () -> Bool in
            written.insert(offset..<(offset + Int64(bytes.count)))
            if sleeping && frontier - hashed >= Self.batch { monitor.broadcast() }
            guard !threadStarted else { return false }
            threadStarted = true
            return true
        }
        if start {
            // In the idle scheduling class: following the download must never take a core from
            // the receiving thread or the server; what it could not hash by the end, ``finish``
            // hashes on its caller's thread (measured on 2 cores, one connection, 2 GiB: hashing
            // at normal priority added 0.4-0.8 s to a 3 s download).
            ThreadPool.shared.runAlone { [self] in
                haul_thread_background(1)
                hashInOrder(following: true)
            }
        }
    }

    /// How far the written bytes reach without a gap from what is hashed (lock held).
    private var frontier: Int64 {
        if let target { return target }
        return written.ranges.first { $0.lowerBound <= hashed && hashed < $0.upperBound }?.upperBound ?? hashed
    }

    /// The hashing loop: the following thread's (`following`: it ends once ``finish(length:)``
    /// was called), then ``finish(length:)``'s for what is left.
    private func hashInOrder(following: Bool) {
        while true {
            let span = monitor.withLock { () -> Range<Int64>? in
                while true {
                    if stopped || failure != nil || (following && target != nil) { return nil }
                    let limit = frontier
                    if limit - hashed >= Self.batch || (target != nil && limit > hashed) {
                        return hashed..<min(limit, hashed + (following ? Self.followingStep : Self.step))
                    }
                    if target != nil { return nil }   // finished: everything hashed
                    sleeping = true
                    monitor.wait()
                    sleeping = false
                }
            }
            guard let span else { break }
            do throws(DownloadError) {
                try FileHashing.update(digests, descriptor: descriptor, range: span, buffer: buffer)
                monitor.withLock {
                    hashed = span.upperBound
                    monitor.broadcast()
                }
            } catch {
                monitor.withLock { failure = error }
                break
            }
        }
        guard following else { return }
        monitor.withLock {
            threadEnded = true
            monitor.broadcast()
        }
    }

    /// Hashes what is left of the file (up to `length`, complete on disk) and returns every digest.
    ///
    /// - Throws: `fileSystem` when the file cannot be read.
    func finish(length: Int64) throws(DownloadError) -> [ChecksumAlgorithm: [UInt8]] {
        monitor.withLock {
            target = length
            monitor.broadcast()
            if threadStarted {
                while !threadEnded { monitor.wait() }   // it stops within one read of the buffer
            } else {
                threadStarted = true
                threadEnded = true
            }
        }
        hashInOrder(following: false)
        if let error = monitor.withLock({ failure }) { throw error }
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
