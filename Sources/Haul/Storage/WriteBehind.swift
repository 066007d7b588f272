import HaulCore

/// One connection's direct writes, made by writer threads behind its reader: while they write
/// full staging buffers (and the disk takes them), the reader fills the next one.
///
/// The buffers form a ring of ``depth`` in one region of memory: the reader hands a full one
/// over (``handOver(_:)``) and takes the next free one (``nextBuffer(_:)``), which waits only
/// when every other buffer is still being written: a slow disk slows the reader only when the
/// ring is full. A writer takes the first queued buffers (up to ``mostJoined``) and writes
/// neighbours in memory and in the file with one write, so writers that fall behind make larger
/// writes (2 to 4 MiB writes took this machine's disk about 1.9 GB/s, 1 MiB ones 1.5); with 4
/// buffers or more two writers run, so two writes are in flight. Runs come back to the reader in
/// the order the buffers were handed over, whichever write ends first: the reader accounts for
/// them (checksums, progress, its report) itself, so bytes count as written only once they and
/// every byte before them are, exactly as without a ring; after a failed write nothing later is
/// reported. The memory is `depth` buffers per connection, taken from the downloader's
/// ``ReceiveBuffers`` on the first ``nextBuffer(_:)`` and given back by ``close()``.
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
    /// The most buffers one write joins (and one writer takes at once).
    static let mostJoined = 4
    /// The writer threads, so that two writes can be in flight (one with a ring under 4 buffers).
    let writers: Int
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
        self.writers = depth >= 4 ? 2 : 1
        self.bufferSize = bufferSize
        self.pool = buffers
        self.threads = threads
        self.write = write
        state = ConditionLock(State())
    }

    /// Hands a full buffer to the writers (starting one more thread while fewer than
    /// ``writers`` run).
    func handOver(_ staging: DirectStaging) {
        let writers = self.writers
        let start = state.withLockBroadcasting { $0.handOver(Slot(staging: staging), writers: writers) }
        if start, !threads.runIfFree(name: "haul-write", { [self] in serve() }) {
            state.withLock { $0.writersRunning -= 1 }   // with none, the reader writes when the ring is full
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
                state.wait(until: nil) { blocked($0) && ($0.writing > 0 || $0.writersRunning > 0) }
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
        var failedAt: Int?
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
                    failedAt = written[first].number
                }
                written[first].runs = runs   // the group's runs, reported with its first buffer
            }
            first = last + 1
        }
        let (done, failedNumber) = (written, failedAt)
        state.withLockBroadcasting { $0.written(done, failure: failure, failedAt: failedNumber) }
    }
}

// MARK: - State

extension WriteBehind {
    /// A buffer of the ring and what the writer wrote from it; held by the reader or the writer,
    /// never both (unchecked Sendable: the lock hands it over).
    struct Slot: @unchecked Sendable {
        var staging: DirectStaging
        var memory: UnsafeMutableRawBufferPointer { staging.memory }
        var runs: [Run] = []
        /// Not written: the writer failed on an earlier buffer.
        var skipped = false
        /// Its place in the order of hand-overs.
        var number = 0
    }

    /// The ring's memory, or one buffer of it (unchecked Sendable: the lock hands it over).
    struct Buffer: @unchecked Sendable {
        let memory: UnsafeMutableRawBufferPointer
    }

    /// The ring as the lock holds it: pure, each event a method.
    struct State {
        /// The memory of every buffer; `nil` until the reader's first buffer.
        var region: Buffer?
        /// Buffers handed over, not yet taken by a writer, in order.
        var queued = FIFOQueue<Slot>()
        /// The number the next buffer handed over gets, and the next one due in `done`.
        var nextNumber = 0
        var nextDone = 0
        /// Buffers handed over and not yet written (queued or being written).
        var inFlight = 0
        /// Buffers written out of order (another writer's earlier ones are under way), by number.
        var early: [Int: Slot] = [:]
        /// Written buffers, in order, whose runs the reader has not collected.
        var done = FIFOQueue<Slot>()
        /// Buffers the reader may fill again, in ring order.
        var free = FIFOQueue<Buffer>()
        var failure: DownloadError?
        /// The buffer whose write failed: the runs of later ones are never reported (a gap).
        var failedNumber: Int?
        var failureReported = false
        /// Writer threads running (or given a thread and about to), until the ring closes.
        var writersRunning = 0
        /// Batches being written (by writer threads or the reader).
        var writing = 0
        var closed = false
        var readerWaits = false

        /// Splits `region` into the ring's buffers, all free.
        mutating func carve(_ region: Buffer, into size: Int) {
            self.region = region
            for start in stride(from: 0, to: region.memory.count, by: size) {
                free.append(Buffer(memory: UnsafeMutableRawBufferPointer(rebasing: region.memory[start..<(start + size)])))
            }
        }

        /// Queues a full buffer; returns whether one more writer thread must start.
        mutating func handOver(_ slot: Slot, writers: Int) -> Bool {
            var slot = slot
            slot.number = nextNumber
            nextNumber += 1
            queued.append(slot)
            inFlight += 1
            guard writersRunning < writers else { return false }
            writersRunning += 1
            return true
        }

        /// Whether the reader must wait for a buffer: every other one is handed over and none is
        /// written yet.
        var mustWait: Bool {
            done.isEmpty && free.isEmpty && (failure == nil || failureReported)
        }

        /// What a reader that is `blocked` does: goes on (`[]`), writes the queued buffers itself
        /// when no writer thread runs, or waits for the writers (`nil`).
        mutating func readerStep(blocked: Bool) -> [Slot]? {
            guard blocked else { return [] }
            if writersRunning == 0 && writing == 0 && !queued.isEmpty { return popQueued(most: Int.max) }
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

        /// A writer thread's next buffers (the first queued, up to ``WriteBehind/mostJoined``;
        /// none: it waits for some); `nil` (and the thread ends) once the ring is closed.
        mutating func nextToWrite() -> [Slot]? {
            let slots = popQueued(most: WriteBehind.mostJoined)
            if slots.isEmpty && closed {
                writersRunning -= 1
                return nil
            }
            return slots
        }

        /// Buffers were written (or skipped), in order; `failure` is that of the first of them
        /// numbered `failedAt`.
        mutating func written(_ slots: [Slot], failure: DownloadError?, failedAt: Int?) {
            if let failure, let failedAt, failedNumber.map({ failedAt < $0 }) ?? true {
                self.failure = failure
                failedNumber = failedAt
            }
            for slot in slots { early[slot.number] = slot }
            while var slot = early.removeValue(forKey: nextDone) {
                if let failedNumber, slot.number > failedNumber { slot.runs = [] }
                done.append(slot)
                nextDone += 1
            }
            inFlight -= slots.count
            writing -= 1
        }

        /// The ring's memory, for the pool; the writers' threads end.
        mutating func close() -> Buffer? {
            closed = true
            _ = drainDone()
            free = FIFOQueue()
            defer { region = nil }
            return region
        }

        /// The first `most` queued buffers, to be written now (skipped after a failure).
        private mutating func popQueued(most: Int) -> [Slot] {
            var slots: [Slot] = []
            while slots.count < most, var slot = queued.popFirst() {
                slot.skipped = failure != nil
                slots.append(slot)
            }
            if !slots.isEmpty { writing += 1 }
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
