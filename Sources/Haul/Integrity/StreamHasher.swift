import CHaulSys
import Synchronization
import HaulCore

/// Hashes a download on a thread of its own, following the bytes as they are written, and the
/// rest from the file once it is complete.
///
/// ``offer(_:at:)`` notes every written slice (no hashing on the writer's thread). A follower
/// thread in the idle scheduling class reads the written bytes back (from the page cache, just
/// written) and hashes the file in order from byte 0, as far as the written bytes reach without
/// a gap, woken per 4 MiB. It only uses CPU that neither the download nor anything else wants
/// (hashing on the writer's thread, or at normal priority, slows the download itself). With
/// several connections the hashed prefix grows as the first ranges fill. ``finish(length:)`` stops the
/// follower (it looks between reads of 256 KiB) and hashes what is left on its caller's thread.
///
/// Writers never wait for the follower: they keep the written ranges under a lock of their own
/// and publish how far they reach from byte 0 in an atomic; they take the follower's lock only to
/// wake it, at most once per 4 MiB. (A thread of the idle class that a writer had to wait for
/// could hold the writer up for as long as anything else wants the CPU.)
///
/// `@unchecked Sendable`: the writers' state is under `written`, the follower's control state
/// under `monitor`; the digests, the buffer and `hashed` belong to the follower while it runs
/// and to ``finish(length:)`` after it ended.
final class StreamHasher: @unchecked Sendable {
    private let algorithms: [ChecksumAlgorithm]
    private let digests: [Digest]
    private let descriptor: Int32
    private let threads: ThreadPool

    // The writers' side.
    private let written = Mutex(ByteRangeSet())
    /// How far the written bytes reach from byte 0 without a gap (stored under `written`).
    private let contiguous = Atomic<Int64>(0)
    /// Set once the follower was started (or ``finish(length:)``/``stop()`` came first).
    private let started = Atomic<Bool>(false)

    // Shared with the follower.
    /// The follower is asleep or about to sleep (set before its last look at `contiguous`).
    private let sleeping = Atomic<Bool>(false)
    /// ``finish(length:)`` or ``stop()`` was called: the follower ends after its current read.
    private let ending = Atomic<Bool>(false)
    /// What the follower has hashed, for the writers' wake-up decision and for tests.
    private let hashedSoFar = Atomic<Int64>(0)
    /// Whether the follower runs in the background scheduling class (for tests).
    private let followerInBackground = Atomic<Bool>(false)
    private let monitor = Monitor()
    private var woken = false            // under monitor
    private var followerEnded = false    // under monitor
    private var failure: DownloadError?  // under monitor

    // The hashing's own state (the follower's, then finish's).
    private var hashed: Int64 = 0
    /// The read buffer (small enough that what it reads is still in the CPU's cache when it is
    /// hashed), allocated once: a buffer mapped per step cost page faults on every step.
    private let buffer: UnsafeMutableRawBufferPointer

    /// The follower sleeps until this many written bytes are waiting: waking it for every write
    /// (a few hundred KiB) more than doubled what hashing cost in CPU.
    private static let batch: Int64 = 4 << 20
    /// ``buffer``'s size, and the most the follower hashes between two looks at ``ending``.
    private static let bufferSize = 256 << 10

    /// Nothing hashed yet; `descriptor` is the partial file, open until ``finish(length:)`` or ``stop()``.
    /// - Parameter threads: where the follower thread starts, once bytes are offered.
    init(algorithms: [ChecksumAlgorithm], descriptor: Int32, threads: ThreadPool) {
        self.threads = threads
        self.algorithms = algorithms
        self.digests = algorithms.map(Digest.init)
        self.descriptor = descriptor
        self.buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 4096)
    }

    deinit {
        buffer.deallocate()
    }

    /// Bytes the follower has hashed so far (for tests).
    var followedBytes: Int64 { hashedSoFar.load(ordering: .acquiring) }

    /// Whether the follower runs in the background scheduling class; `false` before it started
    /// (for tests).
    var followsInBackground: Bool { followerInBackground.load(ordering: .acquiring) }

    /// Notes `bytes`, just written at `offset` (the follower reads them back in order).
    func offer(_ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        guard !bytes.isEmpty else { return }
        let reach = written.withLock { set -> Int64 in
            set.insert(offset..<(offset + Int64(bytes.count)))
            let reach = set.ranges.first.map { $0.lowerBound == 0 ? $0.upperBound : 0 } ?? 0
            contiguous.store(reach, ordering: .sequentiallyConsistent)
            return reach
        }
        if sleeping.load(ordering: .sequentiallyConsistent) && reach - hashedSoFar.load(ordering: .relaxed) >= Self.batch {
            monitor.withLock {
                woken = true
                monitor.broadcast()
            }
        }
        if !started.exchange(true, ordering: .acquiringAndReleasing) {
            threads.runAlone(name: "haul-hasher") { [self] in follow() }
        }
    }

    /// The follower thread: hashes written bytes in order until ``ending``.
    private func follow() {
        // An unprivileged thread cannot leave the idle class: this thread is not pooled.
        followerInBackground.store(haul_thread_background(1) == 0, ordering: .releasing)
        haul_advise_sequential(descriptor)
        while !ending.load(ordering: .acquiring) {
            let reach = contiguous.load(ordering: .sequentiallyConsistent)
            if reach - hashed < Self.batch {
                sleeping.store(true, ordering: .sequentiallyConsistent)
                if contiguous.load(ordering: .sequentiallyConsistent) - hashed < Self.batch {
                    monitor.withLock {
                        while !woken && !ending.load(ordering: .acquiring) { monitor.wait() }
                        woken = false
                    }
                }
                sleeping.store(false, ordering: .sequentiallyConsistent)
                continue
            }
            let span = hashed..<min(reach, hashed + Int64(Self.bufferSize))
            do throws(DownloadError) {
                try FileHashing.update(digests, descriptor: descriptor, range: span, buffer: buffer)
            } catch {
                monitor.withLock { failure = error }
                break
            }
            hashed = span.upperBound
            hashedSoFar.store(hashed, ordering: .releasing)
        }
        monitor.withLock {
            followerEnded = true
            monitor.broadcast()
        }
    }

    /// Ends the follower, if one started, and waits for it (one read of ``bufferSize`` at most).
    private func endFollower() {
        ending.store(true, ordering: .sequentiallyConsistent)
        guard started.exchange(true, ordering: .acquiringAndReleasing) else {   // none started, none will
            monitor.withLock { followerEnded = true }
            return
        }
        monitor.withLock {
            monitor.broadcast()
            while !followerEnded { monitor.wait() }
        }
    }

    /// Hashes what is left of the file (up to `length`, complete on disk) and returns every digest.
    ///
    /// - Parameter stop: asked before each read (see ``FileHashing/update(_:descriptor:range:buffer:stop:)``).
    /// - Throws: `fileSystem` when the file cannot be read (here, or by the follower); `cancelled`.
    ///   After a throw the hasher is spent (its digests saw part of the rest): make a new one.
    func finish(length: Int64, stop: () -> Bool = { false }) throws(DownloadError) -> [ChecksumAlgorithm: [UInt8]] {
        endFollower()
        if let error = monitor.withLock({ failure }) { throw error }
        if hashed < length {
            try FileHashing.update(digests, descriptor: descriptor, range: hashed..<length, buffer: buffer, stop: stop)
            hashed = length
        }
        var result: [ChecksumAlgorithm: [UInt8]] = [:]
        for (algorithm, digest) in zip(algorithms, digests) { result[algorithm] = digest.finalize() }
        return result
    }

    /// Stops the follower and waits for it (the download failed, or is over). Idempotent.
    func stop() {
        endFollower()
    }
}
