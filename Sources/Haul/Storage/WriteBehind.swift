import HaulCore

/// One connection's direct writes, made by a writer thread behind its reader: while the writer
/// writes full staging buffers (and the disk takes them), the reader fills the next one.
///
/// The buffers form a ring of ``depth`` in one region of memory: the reader hands a full one
/// over (``handOver(_:)``) and takes the next free one (``nextBuffer()``), which waits only when
/// every other buffer is still being written: a slow disk slows the reader only when the ring is
/// full. The writer takes every buffer queued at once and writes neighbours in memory and in the
/// file with one write, so a writer that falls behind makes larger writes (up to
/// ``mostJoined`` buffers: 2 to 4 MiB writes took this machine's disk about 1.9 GB/s, 1 MiB
/// ones 1.5). Buffers are written in the order they were handed over, and their runs come back
/// to the reader in that order: the reader accounts for them (checksums, progress, its report)
/// itself, so bytes count as written only once they are, exactly as without a ring. The memory
/// is `depth` buffers per connection, taken from the downloader's ``ReceiveBuffers`` on the
/// first ``nextBuffer()`` and given back by ``close()``.
final class WriteBehind: Sendable {
    /// What the writer does with one full buffer: writes its bytes (each run reported to
    /// `wrote`, in order), from the writer's thread.
    typealias Write = @Sendable (_ staging: inout DirectStaging,
                                 _ wrote: (UnsafeRawBufferPointer, Int64) -> Void) throws(DownloadError) -> Void

    /// A run of bytes the writer wrote, in one of the ring's buffers.
    struct Run {
        let bytes: UnsafeRawBufferPointer
        let offset: Int64
    }

    /// The most buffers in the ring.
    let depth: Int
    /// The most buffers one write joins.
    static let mostJoined = 4
    private let write: Write
    private let pool: ReceiveBuffers
    private let bufferSize: Int
    private let threads: ThreadPool
    private let state: ConditionLock<State>

    /// - Parameters:
    ///   - depth: the most buffers written or being filled at once (at least 2).
    ///   - bufferSize: each buffer's size (a whole number of blocks).
    ///   - write: writes one buffer (in production, ``DirectStaging/flush(to:all:limit:wrote:)``).
    init(depth: Int, bufferSize: Int, buffers: ReceiveBuffers, threads: ThreadPool, write: @escaping Write) {
        precondition(depth >= 2)
        self.depth = depth
        self.bufferSize = bufferSize
        self.pool = buffers
        self.threads = threads
        self.write = write
        state = ConditionLock(State())
    }

    /// Hands a full buffer to the writer (starting its thread when none runs).
    func handOver(_ staging: DirectStaging) {
        let start = state.withLockBroadcasting { $0.handOver(Slot(staging: staging)) }
        if start, !threads.runIfFree(name: "haul-write", { [self] in serve() }) {
            state.withLock { $0.writerRuns = false }   // the reader writes when the ring is full
        }
    }

    /// The next buffer to fill (the ring's first one that is written), waiting while every
    /// other is being written. The runs written meanwhile go to `account` first, in order.
    ///
    /// - Throws: what `account` throws; the writer's failure (`diskFull`, `fileSystem`), once,
    ///   after the runs written before it (the buffers handed over after it are not written);
    ///   `resourceExhausted` when no memory is left for the ring.
    func nextBuffer(_ account: (Run) throws(DownloadError) -> Void) throws(DownloadError) -> UnsafeMutableRawBufferPointer {
        if state.withLock({ $0.region == nil }) {
            let region = Buffer(memory: try pool.take(size: depth * bufferSize))
            state.withLock { $0.carve(region, into: bufferSize) }
        }
        waitOrWrite { $0.mustWait }
        let (buffer, runs, failure) = state.withLock { $0.take() }
        for run in runs { try account(run) }
        if let failure { throw failure }
        return buffer!.memory
    }

    /// Waits until every buffer handed over is written, and gives their runs to `account`, in order.
    ///
    /// - Throws: the writer's failure, once, after the runs before it were given to `account`.
    func collect(_ account: (Run) throws(DownloadError) -> Void) throws(DownloadError) {
        waitOrWrite { $0.inFlight > 0 }
        let (runs, failure) = state.withLock { $0.collect() }
        for run in runs { try account(run) }
        if let failure { throw failure }
    }

    /// Waits for the writer, then gives the ring's memory back; runs not collected are dropped.
    func close() {
        waitOrWrite { $0.inFlight > 0 }
        if let region = state.withLockBroadcasting({ $0.close() }) { pool.give(region.memory) }
    }

    /// Whether the reader waits for a buffer now (the ring is full); for tests.
    var readerWaits: Bool { state.withLock { $0.readerWaits } }

    /// Waits while `blocked` holds and the writer writes; with no writer thread (none was free),
    /// the caller writes the queued buffers itself.
    private func waitOrWrite(while blocked: (State) -> Bool) {
        while true {
            let slots = state.withLock { $0.readerStep(blocked: blocked($0)) }
            if let slots {
                if slots.isEmpty { return }
                writeAll(slots)
            } else {
                state.wait(until: nil) { blocked($0) && ($0.writerBusy || $0.writerRuns) }
            }
        }
    }

    /// The writer's thread: the buffers in the order they came, waiting for more, until closed.
    private func serve() {
        while let slots = state.withLock({ $0.nextToWrite() }) {
            if slots.isEmpty {
                state.wait(until: nil) { $0.queued.isEmpty && !$0.closed }
            } else {
                writeAll(slots)
            }
        }
    }

    /// Writes buffers taken from the queue (in order; neighbours joined into one write), then
    /// marks them written.
    private func writeAll(_ slots: [Slot]) {
        var written = slots
        var failure: DownloadError?
        var first = 0
        while first < written.count {
            var staging = written[first].staging
            var last = first
            while last + 1 < written.count, last + 1 - first < Self.mostJoined, !written[last + 1].skipped,
                  let joined = staging.joined(with: written[last + 1].staging) {
                staging = joined
                last += 1
            }
            if !written[first].skipped && failure == nil {
                var runs: [Run] = []
                do throws(DownloadError) {
                    try write(&staging) { bytes, offset in runs.append(Run(bytes: bytes, offset: offset)) }
                } catch {
                    failure = error
                }
                written[first].runs = runs   // the group's runs, reported with its first buffer
            }
            first = last + 1
        }
        let done = written
        state.withLockBroadcasting { $0.written(done, failure: failure) }
    }
}

// MARK: - State

extension WriteBehind {
    /// A buffer of the ring and what the writer wrote from it; held by the reader or the writer,
    /// never both (`@unchecked Sendable`: the lock hands it over).
    struct Slot: @unchecked Sendable {
        var staging: DirectStaging
        var memory: UnsafeMutableRawBufferPointer { staging.memory }
        var runs: [Run] = []
        /// Not written: the writer failed on an earlier buffer.
        var skipped = false
    }

    /// The ring's memory, or one buffer of it (`@unchecked Sendable`: the lock hands it over).
    struct Buffer: @unchecked Sendable {
        let memory: UnsafeMutableRawBufferPointer
    }

    /// The ring as the lock holds it: pure, each event a method.
    struct State {
        /// The memory of every buffer; `nil` until the reader's first buffer.
        var region: Buffer?
        /// Buffers handed over, not yet taken by the writer.
        var queued = FIFOQueue<Slot>()
        /// Buffers handed over and not yet written (queued or being written).
        var inFlight = 0
        /// Written buffers, in order, whose runs the reader has not collected.
        var done = FIFOQueue<Slot>()
        /// Buffers the reader may fill again, in ring order.
        var free = FIFOQueue<Buffer>()
        var failure: DownloadError?
        var failureReported = false
        /// A writer thread runs (or was given a thread and is about to), until the ring closes.
        var writerRuns = false
        var closed = false
        /// Buffers are being written (by the writer's thread or the reader).
        var writerBusy = false
        var readerWaits = false

        /// Splits `region` into the ring's buffers, all free.
        mutating func carve(_ region: Buffer, into size: Int) {
            self.region = region
            for start in stride(from: 0, to: region.memory.count, by: size) {
                free.append(Buffer(memory: UnsafeMutableRawBufferPointer(rebasing: region.memory[start..<(start + size)])))
            }
        }

        /// Queues a full buffer; returns whether a writer thread must start.
        mutating func handOver(_ slot: Slot) -> Bool {
            queued.append(slot)
            inFlight += 1
            defer { writerRuns = true }
            return !writerRuns
        }

        /// Whether the reader must wait for a buffer: every other one is handed over and none is
        /// written yet.
        var mustWait: Bool {
            done.isEmpty && free.isEmpty && (failure == nil || failureReported)
        }

        /// What a reader that is `blocked` does: goes on (`[]`), writes the queued buffers itself
        /// when no writer thread runs, or waits for the writer (`nil`).
        mutating func readerStep(blocked: Bool) -> [Slot]? {
            guard blocked else { return [] }
            if !writerRuns && !writerBusy && !queued.isEmpty { return popQueued() }
            readerWaits = true
            return nil
        }

        /// The reader's next buffer with the runs written before it; no buffer after the
        /// writer's failure, which comes once.
        mutating func take() -> (buffer: Buffer?, written: [Run], failure: DownloadError?) {
            readerWaits = false
            let runs = drainDone()
            if let failure, !failureReported {
                failureReported = true
                return (nil, runs, failure)
            }
            guard let buffer = free.popFirst() else { preconditionFailure("a full ring has a buffer in flight") }
            return (buffer, runs, nil)
        }

        /// Every run written so far, in order, and the writer's failure (once).
        mutating func collect() -> (written: [Run], failure: DownloadError?) {
            readerWaits = false
            let runs = drainDone()
            guard let failure, !failureReported else { return (runs, nil) }
            failureReported = true
            return (runs, failure)
        }

        /// The writer thread's next buffers (every one queued; none: it waits for some); `nil`
        /// (and the thread ends) once the ring is closed.
        mutating func nextToWrite() -> [Slot]? {
            let slots = popQueued()
            if slots.isEmpty && closed {
                writerRuns = false
                return nil
            }
            return slots
        }

        /// Buffers were written (or skipped), in order.
        mutating func written(_ slots: [Slot], failure: DownloadError?) {
            if let failure, self.failure == nil { self.failure = failure }
            for slot in slots { done.append(slot) }
            inFlight -= slots.count
            writerBusy = false
        }

        /// The ring's memory, for the pool; the writer's thread ends.
        mutating func close() -> Buffer? {
            closed = true
            _ = drainDone()
            free = FIFOQueue()
            defer { region = nil }
            return region
        }

        /// Every queued buffer, to be written now (skipped after a failure).
        private mutating func popQueued() -> [Slot] {
            var slots: [Slot] = []
            while var slot = queued.popFirst() {
                slot.skipped = failure != nil
                slots.append(slot)
            }
            if !slots.isEmpty { writerBusy = true }
            return slots
        }

        private mutating func drainDone() -> [Run] {
            var runs: [Run] = []
            while let slot = done.popFirst() {
                runs += slot.runs
                free.append(Buffer(memory: slot.memory))
            }
            return runs
        }
    }
}
