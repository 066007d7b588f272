import HaulCore

/// One connection's direct writes, made by a writer thread behind its reader: while the writer
/// writes a full staging buffer (and the disk takes it), the reader fills the next one.
///
/// The buffers form a ring of at most ``depth``: the reader hands a full one over
/// (``handOver(_:)``) and takes a free one (``nextBuffer()``), which waits only when every
/// buffer is still being written: a slow disk slows the reader only when the ring is full.
/// Buffers are written in the order they were handed over, and their runs come back to the
/// reader in that order (``collect()``): the reader accounts for them (checksums, progress,
/// its report) itself, so bytes count as written only once they are, exactly as without a ring.
/// The memory is at most `depth` buffers per connection, taken from the downloader's
/// ``ReceiveBuffers`` as needed and given back by ``close()``.
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

    /// A buffer to fill next: a written one, a new one while the ring has fewer than ``depth``,
    /// else the first to be written (waiting for it). The runs written meanwhile come with it,
    /// in order: the caller accounts for them before it fills the buffer.
    ///
    /// - Throws: the writer's failure (`diskFull`, `fileSystem`), once (the buffers handed over
    ///   after it are not written); `resourceExhausted` when no memory is left for a new buffer.
    func nextBuffer() throws(DownloadError) -> (buffer: UnsafeMutableRawBufferPointer, written: [Run]) {
        let depth = self.depth
        waitOrWrite { $0.mustWait(depth: depth) }
        let taken = try state.withLock { (state) throws(DownloadError) in try state.take(depth: depth) }
        if let buffer = taken.buffer { return (buffer.memory, taken.written) }
        do throws(DownloadError) {
            return (try pool.take(size: bufferSize), taken.written)
        } catch {
            state.withLock { $0.made -= 1 }   // the runs are dropped: a resume fetches them again
            throw error
        }
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

    /// Waits for the writer, then gives every buffer of the ring back (`current` is the one the
    /// reader holds); runs not collected are dropped.
    func close(current: UnsafeMutableRawBufferPointer?) {
        waitOrWrite { $0.inFlight > 0 }
        var buffers = state.withLock { $0.close() }
        if let current { buffers.append(Buffer(memory: current)) }
        for buffer in buffers { pool.give(buffer.memory) }
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

    /// The writer's thread: the buffers in the order they came, until none is queued.
    private func serve() {
        while let slots = state.withLock({ $0.nextToWrite() }) {
            writeAll(slots)
        }
    }

    /// Writes buffers taken from the queue (in order), then marks them written.
    private func writeAll(_ slots: [Slot]) {
        var written: [Slot] = []
        var failure: DownloadError?
        for var slot in slots {
            if !slot.skipped && failure == nil {
                var runs: [Run] = []
                do throws(DownloadError) {
                    try write(&slot.staging) { bytes, offset in runs.append(Run(bytes: bytes, offset: offset)) }
                } catch {
                    failure = error
                }
                slot.runs = runs
            }
            written.append(slot)
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

    /// The buffers a reader may reuse (`@unchecked Sendable`: only the reader holds one).
    struct Buffer: @unchecked Sendable {
        let memory: UnsafeMutableRawBufferPointer
    }

    /// The ring as the lock holds it: pure, each event a method.
    struct State {
        /// Buffers handed over, not yet taken by the writer.
        var queued = FIFOQueue<Slot>()
        /// Buffers handed over and not yet written (queued or being written).
        var inFlight = 0
        /// Written buffers, in order, whose runs the reader has not collected.
        var done = FIFOQueue<Slot>()
        /// Buffers the reader may fill again.
        var free: [Buffer] = []
        /// Buffers taken from the pool (the ring's size so far).
        var made = 0
        var failure: DownloadError?
        var failureReported = false
        /// A writer thread runs (or was given a thread and is about to).
        var writerRuns = false
        /// Buffers are being written (by the writer's thread or the reader).
        var writerBusy = false
        var readerWaits = false

        /// Queues a full buffer; returns whether a writer thread must start.
        mutating func handOver(_ slot: Slot) -> Bool {
            queued.append(slot)
            inFlight += 1
            defer { writerRuns = true }
            return !writerRuns
        }

        /// Whether the reader must wait for a buffer: every one is handed over and none is written yet.
        func mustWait(depth: Int) -> Bool {
            done.isEmpty && free.isEmpty && made >= depth && (failure == nil || failureReported)
        }

        /// What a reader that is `blocked` does: goes on (`[]`), writes the queued buffers itself
        /// when no writer thread runs, or waits for the writer (`nil`).
        mutating func readerStep(blocked: Bool) -> [Slot]? {
            guard blocked else { return [] }
            if !writerRuns && !writerBusy && !queued.isEmpty {
                var slots: [Slot] = []
                while let slot = popQueued() { slots.append(slot) }
                return slots
            }
            readerWaits = true
            return nil
        }

        /// The reader's next buffer (`nil`: a new one from the pool) with the runs written before it.
        mutating func take(depth: Int) throws(DownloadError) -> (buffer: Buffer?, written: [Run]) {
            readerWaits = false
            if let failure, !failureReported {
                failureReported = true
                throw failure
            }
            let runs = drainDone()
            if let buffer = free.popLast() { return (buffer, runs) }
            precondition(made < depth, "a full ring has a buffer in flight")
            made += 1
            return (nil, runs)
        }

        /// Every run written so far, in order, and the writer's failure (once).
        mutating func collect() -> (written: [Run], failure: DownloadError?) {
            readerWaits = false
            let runs = drainDone()
            guard let failure, !failureReported else { return (runs, nil) }
            failureReported = true
            return (runs, failure)
        }

        /// The writer thread's next buffer; `nil` (and the thread ends) when none is queued.
        mutating func nextToWrite() -> [Slot]? {
            guard let slot = popQueued() else {
                writerRuns = false
                return nil
            }
            return [slot]
        }

        /// Buffers were written (or skipped), in order.
        mutating func written(_ slots: [Slot], failure: DownloadError?) {
            if let failure, self.failure == nil { self.failure = failure }
            for slot in slots { done.append(slot) }
            inFlight -= slots.count
            writerBusy = false
        }

        /// Every buffer not in flight, for the pool.
        mutating func close() -> [Buffer] {
            _ = drainDone()
            defer { free = [] }
            return free
        }

        /// The first queued buffer, to be written now (skipped after a failure).
        private mutating func popQueued() -> Slot? {
            guard var slot = queued.popFirst() else { return nil }
            slot.skipped = failure != nil
            writerBusy = true
            return slot
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
