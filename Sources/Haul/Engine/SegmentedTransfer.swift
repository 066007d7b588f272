import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Moves the missing bytes of a file of known length into its partial file over one or more
/// connections, each on a thread of its own, planned by ``SegmentPlanner``.
///
/// The first connection is the attempt's first response (already reading from the first missing
/// byte); the others ask for their segments with `Range` and `If-Range`. A connection that reaches
/// its end takes over half of the largest remaining range. A connection that fails gives its rest
/// back and retries after a backoff while the others go on. The calling thread coordinates:
/// it writes a resume record (after `fdatasync`) every ``Downloader/Configuration/resumeRecordInterval``,
/// and once more when the transfer ends for any reason, so progress survives a crash or a kill.
/// With one connection the calling thread is that connection; a thread of its own makes the
/// records once the transfer has run for one interval (see `checkpointIfDue`).
final class SegmentedTransfer: Sendable {
    /// What the transfer needs from its download.
    struct Setup: Sendable {
        var url: HTTPURL
        var userHeaders: [(name: String, value: String)]
        var configuration: Downloader.Configuration
        var tls: TLSContextCache
        var partial: PartialFile
        var progress: ProgressReporter
        var total: Int64
        var ifRange: String?
        var limiter: RateLimiter?
        var hostSlots: HostSlots?
        var pool: ConnectionPool?
        /// Makes the given complete ranges durable in the resume record (after the data was synced);
        /// the flag says whether this transfer saved a record before (see
        /// ``ResumeRecord/save(for:in:fieldsChecked:)``).
        var checkpoint: @Sendable ([Range<Int64>], [BlockHash], _ savedBefore: Bool) throws(DownloadError) -> Void
        /// Opens the ranged requests (signing each afresh when the download has a signer).
        var source: SignedSource
        /// Hashes the bytes as they are written, when the download is verified.
        var hasher: StreamHasher?
        /// The checksums of the completed pieces, extended as bytes are written.
        var blocks = BlockHashes()
        /// Whether connections gather their bytes into whole blocks written past the page cache
        /// (``DirectStaging``); only without a rate limit.
        var writesDirect = false
    }

    private let setup: Setup
    private let planner: Mutex<SegmentPlanner>
    /// Connections register here; fired when the run is cancelled or a connection fails for good.
    private let abort = CancellationSignal()
    private let failure = Mutex<DownloadError?>(nil)
    private let activeWorkers = Mutex(0)
    private let wakeup = WakeupDescriptor()
    private let recordSaved = Mutex(false)
    /// When the single connection of an inline transfer started (`nil`: not inline, or its
    /// checkpoints were handed to a coordinator thread).
    private let inlineCheckpoints = Mutex<ContinuousClock.Instant?>(nil)
    /// Whether an inline transfer handed its checkpoints to a coordinator thread, and the signal
    /// that thread gives when it has ended.
    private let coordinatorStarted = Mutex(false)
    private let coordinatorEnded = DispatchSemaphore(value: 0)
    /// The complete ranges of the last record written, to skip a checkpoint with nothing new.
    private let savedRanges = Mutex<[Range<Int64>]?>(nil)

    /// Whether a resume record was written (so it must be removed after the commit).
    var checkpointed: Bool { recordSaved.withLock { $0 } }

    /// The first segments, planned at creation so the download can report its connections.
    private let initialSegments: [SegmentPlanner.Segment]

    /// How many connections the transfer starts with.
    var plannedConnections: Int { max(1, initialSegments.count) }

    init(setup: Setup, completed: [Range<Int64>], connections: Int) {
        // Staged bytes do not reach a rate limit (see transfer).
        precondition(!setup.writesDirect || setup.limiter == nil)
        self.setup = setup
        // Steals may take tails down to 256 KiB: a finishing connection then helps until the end
        // (splitting the file itself still needs minimumSegmentSize per piece). A hasher that
        // takes the bytes from memory (StreamHasher.readPastCache) gets them in file order.
        let ordered = setup.hasher != nil && setup.writesDirect ? StreamHasher.orderedPiece : nil
        planner = Mutex(SegmentPlanner(total: setup.total, completed: completed, maximumConnections: connections,
                                       minimumSegment: setup.configuration.minimumSegmentSize,
                                       minimumSteal: min(setup.configuration.minimumSegmentSize, 256 << 10), ordered: ordered))
        initialSegments = planner.withLock { $0.start() }
    }

    /// Runs until every byte is on disk, or throws the first failure that cannot be retried.
    ///
    /// - Parameters:
    ///   - first: the attempt's first response, positioned at its body (from the first missing byte).
    ///   - firstBuffer: the receive buffer `first` reads into.
    ///   - run: the run's cancellation (pause or cancel).
    ///   - firstHoldsHostSlot: `first` was opened under one of `setup.hostSlots`' slots, which
    ///     goes back when its connection is done with it.
    /// - Throws: `cancelled`, `diskFull`, `rangeMismatch`, network errors once retries are used up...
    func run(first: HTTPExchange, firstBuffer: UnsafeMutableRawBufferPointer, run: CancellationSignal,
             firstHoldsHostSlot: Bool) throws(DownloadError) {
        let segments = initialSegments
        guard !segments.isEmpty else {
            first.close()
            if firstHoldsHostSlot { setup.hostSlots?.release(for: setup.url) }
            return
        }
        activeWorkers.withLock { $0 = segments.count }
        // The first response was opened under the run's signal; move it to this transfer's,
        // which the run's cancellation (pause or cancel) reaches too.
        let link = run.addChild(abort)
        defer { run.removeChild(link) }
        first.rebind(to: abort)
        if segments.count == 1 {
            // One connection (a small file, or -x 1): it runs here, with no coordinator thread
            // (1,000 files of 64 KiB: one thread per file fewer). One that outlives a record
            // interval starts one then (see checkpointIfDue).
            inlineCheckpoints.withLock { $0 = ContinuousClock.now }
            work(worker: segments[0].worker, segment: segments[0], exchange: first, holdingSlot: firstHoldsHostSlot,
                 buffer: firstBuffer)
            if coordinatorStarted.withLock({ $0 }) { coordinatorEnded.wait() }
            finish(run: run)
        } else {
            let handOver = FirstResponse(exchange: first, buffer: firstBuffer)
            for (index, segment) in segments.enumerated() {
                if index == 0 {
                    spawnThread(name: "haul-segment") { [self] in
                        work(worker: segment.worker, segment: segment, exchange: handOver.exchange,
                             holdingSlot: firstHoldsHostSlot, buffer: handOver.buffer)
                    }
                } else {
                    spawnThread(name: "haul-segment") { [self] in
                        let buffer = ReceiveBuffers.shared.take(size: setup.configuration.bufferSize)
                        defer { ReceiveBuffers.shared.give(buffer) }
                        work(worker: segment.worker, segment: segment, exchange: nil, holdingSlot: false, buffer: buffer)
                    }
                }
            }
            coordinate(run: run)
        }
        if let error = failure.withLock({ $0 }) { throw error }
        if run.isCancelled { throw DownloadError(.cancelled, "cancelled; the partial file is kept") }
        guard planner.withLock({ $0.isComplete }) else {
            throw DownloadError(.internalError, "the transfer ended with bytes missing")
        }
    }

    /// The coordinator: checkpoints on a timer and waits for every worker.
    private func coordinate(run: CancellationSignal) {
        checkpointUntilWorkersEnd(lastCheckpoint: ContinuousClock.now)
        finish(run: run)
    }

    /// Checkpoints every record interval (the first one `interval` after `lastCheckpoint`) until
    /// no worker is left.
    private func checkpointUntilWorkersEnd(lastCheckpoint start: ContinuousClock.Instant) {
        let interval = setup.configuration.resumeRecordInterval
        var lastCheckpoint = start
        var fds = [pollfd(fd: wakeup.pollDescriptor, events: Int16(POLLIN), revents: 0)]
        while activeWorkers.withLock({ $0 }) > 0 {
            let wait = max(1, (interval - (ContinuousClock.now - lastCheckpoint)).milliseconds)
            fds[0].revents = 0
            _ = poll(&fds, 1, Int32(clamping: wait))
            wakeup.drain()
            if ContinuousClock.now - lastCheckpoint >= interval {
                checkpoint()
                lastCheckpoint = ContinuousClock.now
            }
        }
    }

    /// Interrupted or failed: keeps what arrived. Complete, with a record on disk: records every
    /// byte, so a crash between here and the rename costs a 416 on the next run, not the record
    /// interval's bytes again (with no record, a download that short just starts over).
    private func finish(run: CancellationSignal) {
        if failure.withLock({ $0 != nil }) || run.isCancelled || !planner.withLock({ $0.isComplete })
            || recordSaved.withLock({ $0 }) {
            checkpoint()
        }
    }

    /// For a transfer with one connection on the calling thread: once it has run for a record
    /// interval, starts a coordinator thread that checkpoints from then on (at once, then every
    /// interval), as a transfer of several connections has. A checkpoint made here would stop the
    /// connection for its `fdatasync`: measured on this machine's disk in a slow hour, the sync
    /// took 25 ms of every 50, and 2 GiB with `-x 1` took 3.08 s with inline checkpoints against
    /// 1.77 s with this thread (medians of 3; curl 1.81 s). Every single-connection transfer
    /// that lasts longer than an interval (25 ms) pays one pooled thread for it: a rate-limited
    /// one, or a small file over a slow link.
    /// Throws a failure a checkpoint met.
    private func checkpointIfDue() throws(DownloadError) {
        let interval = setup.configuration.resumeRecordInterval
        let due = inlineCheckpoints.withLock { started -> Bool in
            guard let since = started, ContinuousClock.now - since >= interval else { return false }
            started = nil   // for good: the coordinator takes over
            return true
        }
        if due {
            coordinatorStarted.withLock { $0 = true }
            spawnThread(name: "haul-checkpoints") { [self] in
                checkpointUntilWorkersEnd(lastCheckpoint: ContinuousClock.now - interval)
                coordinatorEnded.signal()
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Syncs the data, then records what is complete. A failure here stops the transfer.
    private func checkpoint() {
        // Taken before the sync: every byte in it is written. The pieces are published under the
        // same lock as the ranges they cover, so the two always agree.
        let (completed, pieces) = planner.withLock { ($0.completed, setup.blocks.all) }
        // Nothing new since the last record (a stalled or trickling server): no sync and no
        // write, so waiting costs no CPU (measured: 2.7% of a core at one record per 25 ms).
        if savedRanges.withLock({ $0 == completed }) { return }
        do throws(DownloadError) {
            try setup.partial.syncData()
            try setup.checkpoint(completed, pieces, recordSaved.withLock { $0 })
            recordSaved.withLock { $0 = true }
            savedRanges.withLock { $0 = completed }
        } catch {
            fail(error)
        }
    }

    private func fail(_ error: DownloadError) {
        failure.withLock { if $0 == nil { $0 = error } }
        abort.cancel()
    }

    /// One connection's life: its segments one after another, retrying its own range on failure.
    ///
    /// It holds a host slot (`holdingSlot`: the one `firstExchange` was opened under) from its
    /// first request until it has no segment left, and lets it go only while it waits before a
    /// retry: so a connection that takes over a range goes on at once, and one that waits for a
    /// slot asks, once it has one, for its range as it is then, taken over by no one meanwhile.
    private func work(worker: Int, segment first: SegmentPlanner.Segment, exchange firstExchange: HTTPExchange?,
                      holdingSlot: Bool, buffer: UnsafeMutableRawBufferPointer) {
        defer {
            activeWorkers.withLock { $0 -= 1 }
            wakeup.signal()
        }
        var segment: SegmentPlanner.Segment? = first
        var exchange = firstExchange
        var slotHeld = holdingSlot
        defer {
            // Stopped before its first response was read: it still has to be ended, and then its
            // slot goes back (a connection is always closed before its slot is).
            exchange?.close()
            if slotHeld { setup.hostSlots?.release(for: setup.url) }
        }
        var failures = 0
        while let current = segment, !abort.isCancelled {
            if !slotHeld, let slots = setup.hostSlots {
                guard slots.acquire(for: setup.url, cancellation: abort) else { return }
                slotHeld = true
            }
            do throws(DownloadError) {
                let progressed = try transfer(worker: worker, segment: current, exchange: exchange, buffer: buffer)
                exchange = nil
                if progressed { failures = 0 }
                segment = planner.withLock { $0.finished(worker: worker) }
                if segment == nil, planner.withLock({ $0.isComplete }) {
                    abort.cancel()   // every byte is on disk: wake the connections sleeping before a retry
                }
            } catch {
                exchange = nil
                if slotHeld {
                    setup.hostSlots?.release(for: setup.url)
                    slotHeld = false
                }
                if abort.isCancelled { return }
                failures += 1
                guard error.isRetryable, failures <= setup.configuration.retry.maximumRetries else {
                    fail(error)
                    return
                }
                _ = planner.withLock { $0.failed(worker: worker) }   // its rest goes back as a gap
                let delay = setup.configuration.retry.delay(beforeRetry: failures, jitter: Double.random(in: 0...1),
                                                            retryAfter: error.retryAfter)
                if !abort.sleep(for: delay) { return }
                segment = planner.withLock { $0.retry(worker: worker) }   // its own gap if still free, else any
            }
        }
    }

    /// Reads one segment (opening a ranged request unless `exchange` is the first response).
    /// Returns whether any byte was written. The connection is closed or pooled before it returns.
    private func transfer(worker: Int, segment: SegmentPlanner.Segment, exchange given: HTTPExchange?,
                          buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> Bool {
        let exchange: HTTPExchange
        if let given {
            exchange = given
        } else {
            // Ask for the range as it is now: before this connection had a slot (or after a
            // failure), another may have taken over the back of it.
            var asked = segment
            let now = planner.withLock { $0.end(of: worker) }
            if now > segment.start && now < segment.end { asked.end = now }
            let opened = try setup.source.open(range: ByteRangeRequest(first: asked.start, last: asked.end - 1),
                                               ifRange: setup.ifRange, configuration: setup.configuration, tls: setup.tls,
                                               pool: setup.pool, cancellation: abort, buffer: buffer)
            do throws(DownloadError) {
                try validate(opened.head, segment: asked)
            } catch {
                opened.close()
                throw error
            }
            exchange = opened
        }
        defer { exchange.finish(pool: setup.pool) }
        if let limiter = setup.limiter { exchange.limitReads(to: limiter.readSize) }
        var position = segment.start
        var end = planner.withLock { $0.end(of: worker) }
        let file = setup.partial
        let progress = setup.progress
        let limiter = setup.limiter
        let hasher = setup.hasher
        let blocks = setup.blocks
        var piece: BlockHash?          // the run of bytes this connection is writing, within one block
        var finishedPieces: [BlockHash] = []
        let abort = self.abort
        // Bytes written at `at` (in order): the hasher, their checksums, progress, the plan, a checkpoint.
        func account(_ bytes: UnsafeRawBufferPointer, at start: Int64) throws(DownloadError) {
            hasher?.offer(bytes, at: start)
            var done = 0
            while done < bytes.count {
                let at = start + Int64(done)
                let blockEnd = (at / BlockHash.blockSize + 1) * BlockHash.blockSize
                let count = Int(min(Int64(bytes.count - done), blockEnd - at))
                if let current = piece, current.range.upperBound != at || at % BlockHash.blockSize == 0 {
                    finishedPieces.append(current)
                    piece = nil
                }
                var current = piece ?? BlockHash(range: at..<at, crc32c: 0)
                current.crc32c = BlockHashes.crc(current.crc32c, UnsafeRawBufferPointer(rebasing: bytes[done..<(done + count)]))
                current.range = current.range.lowerBound..<(at + Int64(count))
                piece = current
                done += count
            }
            let written = start + Int64(bytes.count)
            progress.add(bytes.count)
            let grown = piece
            end = planner.withLock { planner in
                // Another connection may have taken over the end of this range while these bytes
                // were being written (it writes the same bytes again): a piece reaching past this
                // connection's new end is not published, so pieces never overlap; those bytes go
                // without a checksum (a resume fetches them again).
                let limit = planner.end(of: worker)
                for finished in finishedPieces where finished.range.upperBound <= limit { blocks.publish(finished) }
                if let grown, grown.range.upperBound <= limit { blocks.publish(grown) }
                planner.advance(worker: worker, to: written)
                return planner.end(of: worker)
            }
            finishedPieces.removeAll(keepingCapacity: true)
            try checkpointIfDue()
        }
        // Without a rate limit (which meters the bytes as they arrive), the bytes are gathered
        // into whole blocks and written past the page cache where the file system takes that:
        // copying 2 GiB into fresh page-cache pages was half of the transfer's CPU time on this
        // machine, and the checkpoints' syncs then wrote those pages back. A checksum's hasher
        // gets them from `account` (see StreamHasher.readPastCache).
        let block = PartialFile.directAlignment
        let stagingBuffer = setup.writesDirect
            ? ReceiveBuffers.shared.take(size: max(block, (setup.configuration.bufferSize + block - 1) / block * block)) : nil
        defer { if let stagingBuffer { ReceiveBuffers.shared.give(stagingBuffer) } }
        var staging = stagingBuffer.map { DirectStaging(buffer: $0) }
        let flushInterval = setup.configuration.resumeRecordInterval
        var lastFlush = ContinuousClock.now
        // Stages bytes that arrived at `position`; writes a full buffer, everything at the
        // segment's end, and on a slow link what it can at least every record interval (all but
        // a last partial block), so a checkpoint can claim it.
        func stage(_ bytes: UnsafeRawBufferPointer, into staging: inout DirectStaging) throws(DownloadError) {
            var taken = 0
            while taken < bytes.count {
                taken += staging.append(UnsafeRawBufferPointer(rebasing: bytes[taken...]), at: position + Int64(taken))
                if staging.isFull { try staging.flush(to: file, all: false, limit: { end }, wrote: account) }
            }
            position += Int64(bytes.count)
            if position >= end {
                try staging.flush(to: file, all: true, limit: { end }, wrote: account)
            } else if !staging.isEmpty, ContinuousClock.now - lastFlush >= flushInterval {
                try staging.flush(to: file, all: false, limit: { end }, wrote: account)
                lastFlush = ContinuousClock.now
            }
        }
        let ended: Bool
        do throws(DownloadError) {
            ended = try exchange.readBody(stallTimeout: setup.configuration.stallTimeout) { (slice) throws(DownloadError) -> Bool in
                let usable = Int(min(Int64(slice.count), end - position))
                guard usable > 0 else { return position < end }
                let bytes = UnsafeRawBufferPointer(rebasing: slice[0..<usable])
                if staging != nil {
                    try stage(bytes, into: &staging!)
                    return position < end
                }
                // No writeback hints here: the coordinator's fdatasync every record interval already
                // streams the data out, and a hint can block this reader when the disk queue is
                // full (measured on the capped server: 8 connections lost 0.25 s in 2.9 s).
                try file.write(bytes, at: position)
                try account(bytes, at: position)
                position += Int64(usable)
                if let limiter, !limiter.consume(usable, sleep: { abort.sleep(for: .milliseconds(Int64($0 * 1000))) }) {
                    throw DownloadError(.cancelled, "cancelled")
                }
                return position < end
            }
        } catch {
            // The bytes that arrived before the failure are good: they are written and count.
            if staging != nil, error.code != .diskFull, error.code != .fileSystem {
                try? staging!.flush(to: file, all: true, limit: { end }, wrote: account)
            }
            throw error
        }
        if staging != nil { try staging!.flush(to: file, all: true, limit: { end }, wrote: account) }
        if ended && position < end {
            // The response ended before this worker's end: the server sent less than it announced.
            throw DownloadError(.truncatedBody, "the connection ended at byte \(position), before \(end)")
        }
        return position > segment.start
    }

    /// A ranged answer must be a 206 for exactly the asked bytes of a file of the same length.
    private func validate(_ head: ResponseHead, segment: SegmentPlanner.Segment) throws(DownloadError) {
        try DownloadJob.validate(head, askedForRange: true)
        guard head.status == 206 else {
            throw DownloadError(.resourceChanged, "the server sent the whole file for a range request: the file changed or ranges stopped working")
        }
        guard case .satisfied(let first, let last, let complete)? = head.headers["Content-Range"].flatMap(ContentRange.parse),
              first == segment.start, last == segment.end - 1, complete == nil || complete == setup.total else {
            throw DownloadError(.rangeMismatch, "asked for bytes \(segment.start)-\(segment.end - 1) of \(setup.total); the server answered "
                                + "'\(head.headers["Content-Range"] ?? "no Content-Range")'")
        }
    }
}

/// The attempt's first response and its buffer, handed from the job's thread to the first
/// worker's. `@unchecked Sendable`: after the hand-over only that worker touches them, and the
/// job's thread waits (in `coordinate`) until every worker has ended before freeing the buffer.
private struct FirstResponse: @unchecked Sendable {
    let exchange: HTTPExchange
    let buffer: UnsafeMutableRawBufferPointer
}
