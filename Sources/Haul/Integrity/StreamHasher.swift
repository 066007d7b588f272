import CHaulSys
import Synchronization
import HaulCore
import HaulCrypto

/// Hashes a download on a thread of its own, following the bytes as they are written, and the
/// rest from the file once it is complete.
///
/// ``offer(_:at:)`` notes every written slice (no hashing on the writer's thread). A follower
/// thread hashes the file in order from byte 0, as far as the written bytes reach without a
/// gap, woken per 4 MiB. ``finish(length:stop:)`` stops the follower (it looks between steps of
/// 256 KiB) and hashes what is left on its caller's thread.
///
/// Where the follower takes the bytes from depends on where they were written:
///
/// - Through the page cache (one connection, a rate limit, a small file, a server without ranges):
///   it reads them back from the cache, in the idle scheduling class, using only CPU that
///   neither the download nor anything else wants (hashing on the writer's thread, or at normal
///   priority, slows the download itself). Writers never wait for it: they note the written
///   ranges under the hasher's lock (the follower takes it only to sleep, and at its start and
///   end), publish how far they reach from byte 0 in an atomic, and wake it at most once per 4 MiB.
/// - Past the page cache (``readPastCache(_:window:)``), where nothing is left to read back
///   cheaply: writers copy each slice into a window of 64 MiB (the bytes from the hashed point
///   on, at their offset modulo its size) and the follower hashes from there. Reading them from
///   the page cache instead would mean writing them through it, filling a fresh page per 4 KiB,
///   whose first touch is slow on a virtual machine whose host takes freed memory back. Bytes that would
///   not fit wait for room (``awaitRoom(from:to:)``) when they are at most a window ahead of the
///   written run (with an in-order plan, ``SegmentPlanner/ordered``, every connection's are),
///   so the follower, at normal priority here, gets its share of the CPU. Bytes further ahead
///   (the later ranges of a plan split evenly), or a wait that lasted ``patience``, miss the
///   window: they are read back past the cache, at the end several chunks ahead of the hashing
///   (``DirectReadAhead``).
///
/// One lock holds what writers and the follower share (``State``); writers copy into the window
/// with it held, one at a time, and decide there whether to wake the follower. The atomics are
/// what the follower reads or publishes between steps without taking it.
///
/// Unchecked Sendable: the digests, the buffers, the window's memory and `hashed` belong to the
/// follower while it runs and to ``finish(length:stop:)`` after it ended (handed over through
/// `followerEnded`, under the lock); `pastCache` is set before the first offer and never changes.
/// The compiler sees neither hand-over.
final class StreamHasher: @unchecked Sendable {
    private let algorithms: [ChecksumAlgorithm]
    private let digests: [Digest]
    private let descriptor: Int32
    private let threads: ThreadPool

    /// What the writers and the follower share.
    private struct State {
        /// The written ranges.
        var written = ByteRangeSet()
        /// The ranges the window holds (from `hashedSoFar` on).
        var held = ByteRangeSet()
        /// Set once the follower was started (or ``finish(length:stop:)``/``stop()`` came first).
        var started = false
        /// A wake-up for the follower is pending (a batch of written bytes, or a writer waiting
        /// for room); the follower clears it when it next goes to sleep.
        var woken = false
        var followerEnded = false
        var failure: DownloadError?
        /// Whether the follower runs in the background scheduling class (for tests).
        var followsInBackground = false
    }
    private let state = ConditionLock(State())

    /// How far the written bytes reach from byte 0 without a gap. Stored with the lock held;
    /// atomic because the follower reads it before every step without the lock.
    private let contiguous = Atomic<Int64>(0)
    /// ``finish(length:stop:)`` or ``stop()`` was called: the follower ends after its current
    /// step, and no writer copies into the window any more. Atomic: the follower looks at it
    /// between steps without the lock.
    private let ending = Atomic<Bool>(false)
    /// What the follower has hashed, for the writers' wake-up decision and window, and for tests.
    /// Atomic: the follower publishes it after every step without the lock.
    private let hashedSoFar = Atomic<Int64>(0)
    /// The window holds every byte from `hashedSoFar` up to here (nothing when this is not past
    /// `hashedSoFar`); see ``hold(_:at:in:)``. Atomic: writers move it with the lock held, the
    /// follower reads it and moves it back (compare and exchange) without the lock.
    private let heldEnd = Atomic<Int64>(0)
    /// Writers waiting for room in the window (see ``awaitRoom(from:to:)``). Atomic: the follower
    /// looks at it after every step without the lock.
    private let waitingWriters = Atomic<Int>(0)

    // The hashing's own state (the follower's, then finish's).
    private var hashed: Int64 = 0
    /// The read buffer (small enough that what it reads is still in the CPU's cache when it is
    /// hashed), allocated once: a buffer mapped per step cost page faults on every step.
    private let buffer: UnsafeMutableRawBufferPointer
    /// Reads past the page cache, when the download writes past it.
    private var pastCache: PastCache?

    /// A descriptor for direct reads, the window and a buffer for direct reads.
    private struct PastCache {
        let descriptor: Int32
        let window: UnsafeMutableRawBufferPointer
        let readBuffer: UnsafeMutableRawBufferPointer
    }

    /// The follower sleeps until this many written bytes are waiting: waking it for every write
    /// (a few hundred KiB) more than doubled what hashing cost in CPU.
    private static let batch: Int64 = 4 << 20
    /// ``buffer``'s size, and the most the follower hashes between two looks at ``ending``.
    private static let bufferSize = 256 << 10
    /// The window's size (see the type's notes); finish reads past the cache in chunks of
    /// ``chunkSize`` into it, several ahead of the hashing.
    static let windowSize = 64 << 20
    private static let chunkSize = 4 << 20
    /// The pieces of an in-order plan (``SegmentPlanner/ordered``) for a download whose hasher
    /// reads past the cache: with 4 connections their pieces span half the window.
    static let orderedPiece: Int64 = 8 << 20
    /// The longest a writer waits for room in the window.
    private static let patience: Duration = .milliseconds(100)

    /// Nothing hashed yet; `descriptor` is the partial file, open until ``finish(length:stop:)``
    /// or ``stop()``.
    ///
    /// - Parameter threads: where the follower thread and the reader ahead of it start.
    init(algorithms: [ChecksumAlgorithm], descriptor: Int32, threads: ThreadPool) {
        self.threads = threads
        self.algorithms = algorithms
        self.digests = algorithms.map(Digest.init)
        self.descriptor = descriptor
        self.buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.bufferSize, alignment: 4096)
    }

    deinit {
        buffer.deallocate()
        if let pastCache {
            pastCache.window.deallocate()
            pastCache.readBuffer.deallocate()
        }
    }

    /// Takes the bytes from a window of `window` bytes (whole 4 KiB blocks, at least two) and
    /// reads the rest back past the page cache, through `directDescriptor` (the same file open
    /// with `O_DIRECT` for reading, open until ``finish(length:stop:)`` or ``stop()``), for a
    /// download written past it. Call before the first ``offer(_:at:)``, at most once.
    func readPastCache(_ directDescriptor: Int32, window: Int = windowSize) {
        let alignment = Int(DirectReads.alignment)
        precondition(pastCache == nil && !state.withLock({ $0.started }) && window >= 2 * alignment && window % alignment == 0)
        pastCache = PastCache(descriptor: directDescriptor,
                              window: .allocate(byteCount: window, alignment: alignment),
                              readBuffer: .allocate(byteCount: 1 << 20, alignment: alignment))
    }

    /// Bytes the follower has hashed so far (for tests).
    var followedBytes: Int64 { hashedSoFar.load(ordering: .acquiring) }

    /// Whether the follower runs in the background scheduling class; `false` before it started
    /// (for tests).
    var followsInBackground: Bool { state.withLock { $0.followsInBackground } }

    /// Notes `bytes`, just written at `offset` (the follower hashes them in order): one hold of the
    /// lock, which copies them into the window (past the cache), notes the range and wakes the
    /// follower once a batch is waiting.
    func offer(_ bytes: UnsafeRawBufferPointer, at offset: Int64) {
        guard !bytes.isEmpty else { return }
        let end = offset + Int64(bytes.count)
        if let window = pastCache?.window, end > hashedSoFar.load(ordering: .acquiring) + Int64(window.count) {
            awaitRoom(from: offset, to: end)
        }
        let (start, wake) = state.withLock { state -> (Bool, Bool) in
            let start = !state.started
            state.started = true
            hold(bytes, at: offset, in: &state.held)
            state.written.insert(offset..<end)
            let reach = state.written.ranges.first.map { $0.lowerBound == 0 ? $0.upperBound : 0 } ?? 0
            contiguous.store(reach, ordering: .sequentiallyConsistent)
            guard !state.woken, reach - hashedSoFar.load(ordering: .relaxed) >= Self.batch else { return (start, false) }
            state.woken = true
            return (start, true)
        }
        if start { startFollower() }
        if wake { state.broadcast() }
    }

    /// Copies into the window the bytes of `bytes` (at `offset`) that it does not hold yet, as far
    /// as it reaches (``windowSize`` past what is hashed), and publishes how far the bytes it
    /// holds reach without a gap (`heldEnd`). Called with the lock held; `held` is the state's.
    ///
    /// The window holds bytes at their offset modulo its size, each copied once (only writers
    /// copy, one at a time, under the lock), into slots whose earlier bytes were hashed. The
    /// follower reads `hashedSoFar..<heldEnd` from it; when it hashed past `heldEnd` from the file
    /// it moves `heldEnd` to where it is (compare and exchange, as writers publish).
    private func hold(_ bytes: UnsafeRawBufferPointer, at offset: Int64, in held: inout ByteRangeSet) {
        guard let window = pastCache?.window, !ending.load(ordering: .acquiring) else { return }
        let base = hashedSoFar.load(ordering: .acquiring)
        let size = Int64(window.count)
        let wanted = max(offset, base)..<max(max(offset, base), min(offset + Int64(bytes.count), base + size))
        held = ByteRangeSet(held.ranges.compactMap { $0.upperBound > base ? max($0.lowerBound, base)..<$0.upperBound : nil })
        for gap in held.gaps(within: wanted) {
            var position = gap.lowerBound
            while position < gap.upperBound {
                let slot = Int(position % size)
                let count = min(Int(gap.upperBound - position), window.count - slot)
                let source = Int(position - offset)
                UnsafeMutableRawBufferPointer(rebasing: window[slot..<(slot + count)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[source..<(source + count)]))
                position += Int64(count)
            }
        }
        held.insert(wanted)
        while true {
            let from = heldEnd.load(ordering: .acquiring)
            let run = max(from, base)
            guard let reach = held.ranges.first(where: { $0.contains(run) })?.upperBound, reach > from,
                  !heldEnd.compareExchange(expected: from, desired: reach, ordering: .acquiringAndReleasing).exchanged
            else { break }
        }
    }

    /// Waits (``patience`` at most) until the window reaches `end`, for bytes at most a window
    /// ahead of the written run (the next pieces of an in-order plan), while the follower has
    /// written bytes to hash: it gets the CPU time it needs rather than reading the bytes back
    /// from the disk later. Bytes further ahead (the later ranges of a plan split evenly) do not wait.
    private func awaitRoom(from offset: Int64, to end: Int64) {
        let size = Int64(pastCache?.window.count ?? 0)
        guard offset < contiguous.load(ordering: .sequentiallyConsistent) + size else { return }
        let deadline = ContinuousClock.now + Self.patience
        waitingWriters.add(1, ordering: .sequentiallyConsistent)
        defer { waitingWriters.subtract(1, ordering: .sequentiallyConsistent) }
        state.withLockBroadcasting { $0.woken = true }
        state.wait(until: deadline) { state in
            hashedSoFar.load(ordering: .sequentiallyConsistent) + size < end && !ending.load(ordering: .acquiring)
                && contiguous.load(ordering: .sequentiallyConsistent) > hashedSoFar.load(ordering: .sequentiallyConsistent)
                && !state.followerEnded
        }
    }

    /// Starts the follower thread. When the system gives none, there is no follower: writers
    /// never wait for one, and ``finish(length:stop:)`` hashes every byte itself.
    private func startFollower() {
        do throws(ResourceError) {
            try threads.runAlone(name: "haul-hasher") { [self] in follow() }
        } catch {
            state.withLockBroadcasting { $0.followerEnded = true }
        }
    }

    /// The follower thread: hashes written bytes in order until ``ending``.
    private func follow() {
        // Following the page cache it runs in the idle class (see the type's notes); following
        // the window, at normal priority: writers wait for it there. An unprivileged thread
        // cannot leave the idle class: this thread is not pooled.
        if pastCache == nil {
            let background = haul_thread_background(1) == 0
            state.withLock { $0.followsInBackground = background }
            haul_advise_sequential(descriptor)
        }
        while !ending.load(ordering: .acquiring) {
            let reach = contiguous.load(ordering: .sequentiallyConsistent)
            if reach - hashed < Self.batch && (reach == hashed || waitingWriters.load(ordering: .sequentiallyConsistent) == 0) {
                sleepUntilWoken()
                continue
            }
            do throws(DownloadError) {
                try step(upTo: reach)
            } catch {
                state.withLock { $0.failure = error }
                break
            }
        }
        state.withLockBroadcasting { $0.followerEnded = true }
    }

    /// Sleeps while less than a batch of written bytes waits and no writer waits for room, until
    /// a writer wakes it or ``ending``; clears the wake-up it consumed.
    private func sleepUntilWoken() {
        let hashed = self.hashed
        state.withLock(waitingWhile: { state in
            !state.woken && !ending.load(ordering: .acquiring)
                && contiguous.load(ordering: .sequentiallyConsistent) - hashed < Self.batch
                && waitingWriters.load(ordering: .sequentiallyConsistent) == 0
        }) { $0.woken = false }
    }

    /// Hashes one step from `hashed` on, at most up to `reach` (written bytes): from the window
    /// while it holds them, else from the file (past the cache a larger step: reads of 256 KiB
    /// from the disk one at a time come slower than the hashing goes).
    private func step(upTo reach: Int64) throws(DownloadError) {
        let held = heldEnd.load(ordering: .acquiring)
        if let window = pastCache?.window, held > hashed {
            let slot = Int(hashed % Int64(window.count))
            let count = min(Int(min(held, reach) - hashed), window.count - slot, Self.bufferSize)
            let bytes = UnsafeRawBufferPointer(rebasing: window[slot..<(slot + count)])
            for digest in digests { digest.update(bytes) }
            hashed += Int64(count)
        } else {
            try hashFromFile(hashed..<min(reach, hashed + Int64(pastCache?.readBuffer.count ?? Self.bufferSize)))
            // Past the window's run: it starts again here (unless a writer extended it meanwhile).
            _ = heldEnd.compareExchange(expected: held, desired: hashed, ordering: .acquiringAndReleasing)
        }
        hashedSoFar.store(hashed, ordering: .sequentiallyConsistent)
        // Under the lock, then broadcast: a writer between its look at `hashedSoFar` and its sleep is asleep by then.
        if waitingWriters.load(ordering: .sequentiallyConsistent) > 0 { state.withLockBroadcasting { _ in } }
    }

    /// Hashes `range` (or its start: at least one byte) from the file, past the cache where the
    /// download was written past it, and moves `hashed` on.
    private func hashFromFile(_ range: Range<Int64>) throws(DownloadError) {
        if let pastCache, let bytes = try DirectReads.read(pastCache.descriptor, range, into: pastCache.readBuffer) {
            for digest in digests { digest.update(bytes) }
            hashed += Int64(bytes.count)
        } else {
            try FileHashing.update(digests, descriptor: descriptor, range: range, buffer: buffer)
            hashed = range.upperBound
        }
    }

    /// Ends the follower, if one started, and waits for it (one step at most); from then on no
    /// writer copies into the window.
    private func endFollower() {
        ending.store(true, ordering: .sequentiallyConsistent)
        // Under the lock: a copy under way is done, and from here on no follower starts.
        let started = state.withLockBroadcasting { state -> Bool in
            defer { state.started = true }
            if !state.started { state.followerEnded = true }   // none started, none will
            return state.started
        }
        guard started else { return }
        state.wait(until: nil) { !$0.followerEnded }
    }

    /// Hashes what is left of the file (up to `length`, complete on disk) and returns every digest.
    ///
    /// - Parameter stop: asked before each read (see ``FileHashing/update(_:descriptor:range:buffer:stop:)``).
    /// - Throws: `fileSystem` when the file cannot be read (here, or by the follower); `cancelled`.
    ///   After a throw the hasher is spent (its digests saw part of the rest): make a new one.
    func finish(length: Int64, stop: () -> Bool = { false }) throws(DownloadError) -> [ChecksumAlgorithm: [UInt8]] {
        endFollower()
        if let error = state.withLock({ $0.failure }) { throw error }
        if hashed < length, let window = pastCache?.window {
            let held = min(heldEnd.load(ordering: .acquiring), length)
            while hashed < held {
                let slot = Int(hashed % Int64(window.count))
                let count = min(Int(held - hashed), window.count - slot)
                for digest in digests { digest.update(UnsafeRawBufferPointer(rebasing: window[slot..<(slot + count)])) }
                hashed += Int64(count)
            }
            if hashed < length { try hashAhead(hashed..<length, stop: stop) }
        }
        if hashed < length {
            try FileHashing.update(digests, descriptor: descriptor, range: hashed..<length, buffer: buffer, stop: stop)
            hashed = length
        }
        var result: [ChecksumAlgorithm: [UInt8]] = [:]
        for (algorithm, digest) in zip(algorithms, digests) { result[algorithm] = digest.finalize() }
        return result
    }

    /// Hashes `range` read past the cache, several chunks ahead (into the window, free by now);
    /// where the file takes no direct reads, `hashed` stops short of the range's end.
    private func hashAhead(_ range: Range<Int64>, stop: () -> Bool) throws(DownloadError) {
        guard let pastCache else { return }
        let chunk = min(Self.chunkSize, pastCache.window.count / 2 / Int(DirectReads.alignment) * Int(DirectReads.alignment))
        let reader = DirectReadAhead(descriptor: pastCache.descriptor, range: range, memory: pastCache.window, chunk: chunk,
                                     threads: threads)
        defer { reader.end() }
        while true {
            if stop() { throw DownloadError(.cancelled, "cancelled while verifying the file") }
            guard let bytes = try reader.next() else { return }
            for digest in digests { digest.update(bytes) }
            hashed += Int64(bytes.count)
        }
    }

    /// Stops the follower and waits for it (the download failed, or is over). Idempotent.
    func stop() {
        endFollower()
    }
}
