import HaulCore
import HaulHTTP

/// Moves the missing bytes of a file of known length into its partial file over one or more
/// connections, each on a thread of its own, as its ``StateMachine`` decides.
///
/// The first connection is the attempt's first response (already reading from the first missing
/// byte, under a host slot the attempt took); the others take a host slot each and ask for
/// their segments with `Range` and `If-Range`. A connection that reaches its end takes over
/// half of the largest remaining range; one that fails gives its rest back and retries after a
/// backoff while the others go on. The calling thread is the checkpoint timer: every
/// ``Downloader/Configuration/resumeRecordInterval`` it syncs the data and writes a resume
/// record, and once more when the transfer ends, so progress survives a crash or a kill; when
/// nothing new was written since its last record it sleeps until a connection writes. With
/// one connection the calling thread is that connection, and a timer thread starts only once
/// the transfer has run for one interval.
///
/// One lock (``ConditionLock``) holds the state machine; every action (a request, a sleep, a
/// sync, a slot given back) runs outside it.
final class SegmentedTransfer: Sendable {
    /// What the transfer needs from its download.
    struct Setup: Sendable {
        var context: HTTPExchange.Context
        var partial: PartialFile
        var progress: ProgressReporter
        var total: Int64
        var ifRange: String?
        var limiter: RateLimiter?
        var hostSlots: HostSlots
        /// Makes the given complete ranges durable in the resume record (after the data was synced);
        /// the flag says whether this transfer saved a record before (see
        /// ``ResumeRecord/save(for:in:fieldsChecked:)``).
        var checkpoint: @Sendable (_ completed: [Range<Int64>], [BlockHash], _ verified: [Range<Int64>], _ savedBefore: Bool)
            throws(DownloadError) -> Void
        /// Open the ranged requests (each signing afresh when it has a signer): the request's URL
        /// first, then its mirrors.
        var sources: [SignedSource]
        /// The source of the first response.
        var firstSource = 0
        /// How each source before ``firstSource`` failed the first request: they start set aside
        /// (those whose failure a later try may not meet come back when no source is left).
        var setAsideFirst: [DownloadError] = []
        /// The checksum of each piece: every piece is hashed once complete, before the transfer
        /// can end (see ``PieceChecksums``).
        var pieceChecksums: PieceChecksums?
        /// The bytes of the pieces a resumed record says passed their checksums (within the
        /// completed ranges): trusted without a check.
        var verifiedPieces: [Range<Int64>] = []
        /// Tells the user something went wrong that the transfer got past (a source set aside).
        var warn: @Sendable (String) -> Void = { _ in }
        /// Hashes the bytes as they are written, when the download is verified.
        var hasher: StreamHasher?
        /// The checksums of the completed pieces a resume kept.
        var pieces: [BlockHash] = []
        /// Whether connections gather their bytes into whole blocks written past the page cache
        /// (``DirectStaging``); only without a rate limit.
        var writesDirect = false
    }

    private let setup: Setup
    private let state: ConditionLock<StateMachine>
    /// Connections register here; cancelled when the run is, or when the transfer is over.
    private let abort = CancellationSignal()
    /// The first segments and what their workers do first, planned at creation so the download
    /// can report its connections.
    private let starts: [(segment: SegmentPlanner.Segment, action: StateMachine.WorkerAction)]

    /// How many connections the transfer starts with.
    var plannedConnections: Int { max(1, starts.count) }

    /// Whether a resume record was written (so it must be removed after the commit).
    var checkpointed: Bool { state.withLock { $0.recordSaved } }

    /// Each source as it is now, in the order of ``Setup/sources``.
    var sourcesInUse: [SourceInUse] {
        let board = state.withLock { $0.board }
        return zip(setup.sources, board.sources).map { source, known in
            var reason: String?
            if case .setAside(let why, _) = known.standing { reason = why }
            return SourceInUse(url: source.base.description, requestIndex: source.requestIndex, connections: known.connections,
                               bytes: known.bytes, bytesPerSecondPerConnection: known.rate, setAsideReason: reason)
        }
    }

    /// The servers the transfer may take bytes from.
    var serverCount: Int { setup.sources.count }

    /// What each server gave, when there are several (empty with one).
    var sourceReport: [SourceReport] {
        guard setup.sources.count > 1 else { return [] }
        return sourcesInUse.map { SourceReport(url: $0.url, bytes: $0.bytes, setAsideReason: $0.setAsideReason) }
    }

    /// Each connection's segment as it is now.
    var segmentsInFlight: [SegmentInFlight] { state.withLock { $0.planner.connectionRanges } }

    init(setup: Setup, completed: [Range<Int64>], connections: Int) {
        // Staged bytes never meet a rate limit (the hasher takes them as they are written).
        precondition(!setup.writesDirect || setup.limiter == nil)
        self.setup = setup
        let configuration = setup.context.configuration
        // Steals may take tails down to 256 KiB: a finishing connection then helps until the end
        // (splitting the file itself still needs minimumSegmentSize per piece). A hasher that
        // takes bytes written past the page cache from its window wants them in file order.
        let ordered = setup.hasher != nil && setup.writesDirect ? StreamHasher.orderedPiece : nil
        // With mirrors, each source gets up to `connections` (its host's cap applies too).
        let (completed, blockHashes, verified) = Self.startingPoint(completed: completed, blockHashes: setup.pieces,
                                                                    verified: setup.verifiedPieces,
                                                                    checksums: setup.pieceChecksums, total: setup.total)
        let planner = SegmentPlanner(total: setup.total, completed: completed, maximumConnections: connections * setup.sources.count,
                                     minimumSegment: configuration.minimumSegmentSize,
                                     minimumSteal: min(configuration.minimumSegmentSize, 256 << 10), ordered: ordered)
        var board = SourceBoard(count: setup.sources.count, connectionsPerSource: connections)
        for (index, error) in setup.setAsideFirst.enumerated() where index < setup.sources.count {
            _ = board.failed(index, error: error, maximumRetries: 0)
        }
        var machine = StateMachine(planner: planner, pieces: blockHashes, retry: configuration.retry,
                                   recordInterval: configuration.resumeRecordInterval,
                                   board: board,
                                   firstSource: setup.firstSource, pieceChecksums: setup.pieceChecksums, verified: verified)
        starts = machine.start(now: .now)
        state = ConditionLock(machine)
    }

    /// What the transfer starts from: the `completed` bytes, `blockHashes` and `verified` pieces'
    /// bytes a resume kept, less, with piece `checksums`, every piece complete on disk whose check
    /// the record does not list (it was under way when the last run ended, and nothing else would
    /// check it) and the block hashes that touch one: every byte kept still has a hash, no hash
    /// outlives its bytes, and nothing verified lies outside what is kept. Pure.
    static func startingPoint(completed: [Range<Int64>], blockHashes: [BlockHash], verified: [Range<Int64>],
                              checksums: PieceChecksums?, total: Int64)
        -> (completed: [Range<Int64>], blockHashes: [BlockHash], verified: [Range<Int64>]) {
        guard let checksums else { return (completed, blockHashes, verified) }
        let trusted = PieceTracker.trusted(completed, verified: verified, checksums: checksums, total: total)
        guard trusted != completed else { return (completed, blockHashes, verified) }
        let kept = ByteRangeSet(trusted)
        let hashes = blockHashes.filter { kept.contains($0.range) }
        let start = ByteRangeSet(hashes.map(\.range)).ranges
        let stillVerified = verified.flatMap { range in
            start.compactMap { part -> Range<Int64>? in
                let low = max(range.lowerBound, part.lowerBound), high = min(range.upperBound, part.upperBound)
                return low < high ? low..<high : nil
            }
        }
        return (start, hashes, stillVerified)
    }

    /// Runs until every byte is on disk, or throws the first failure that cannot be retried.
    ///
    /// - Parameters:
    ///   - first: the attempt's first response, positioned at its body (from the first missing
    ///     byte), opened under a host slot that goes back when its connection is done.
    ///   - firstBuffer: the receive buffer `first` reads into.
    ///   - run: the run's cancellation (pause or cancel).
    /// - Throws: `cancelled`, `diskFull`, `rangeMismatch`, network errors once retries are used up...
    func run(first: HTTPExchange, firstBuffer: UnsafeMutableRawBufferPointer, run: CancellationSignal) throws(DownloadError) {
        guard let head = starts.first else {
            first.close()
            setup.hostSlots.release(for: setup.sources[setup.firstSource].base)
            return
        }
        // The first response was opened under the run's signal; move it to this transfer's,
        // which the run's cancellation (pause or cancel) reaches too.
        let link = run.addChild(abort)
        defer { run.removeChild(link) }
        first.rebind(to: abort)
        if starts.count == 1 {
            work(worker: head.segment.worker, action: head.action, exchange: first, buffer: firstBuffer, inline: true)
            if state.withLock({ $0.hasTimer }) {
                state.wait(until: nil) { !$0.recordsFinished }
            } else {
                runTimer(run: run)
            }
        } else {
            _ = state.withLock { $0.timerWanted(now: .now, inline: false) }
            startWorkers(first: FirstResponse(exchange: first, buffer: firstBuffer))
            runTimer(run: run)
        }
        if run.isCancelled { state.withLock { $0.cancel() } }
        try state.withLock { $0.outcome }.get()
    }

    /// One thread per connection: the first with the attempt's response, the others with
    /// buffers of their own. A connection the system gives no thread or buffer does not start
    /// and the others fetch its range (``StateMachine/notStarted(worker:error:)``); the first
    /// starts last, so those ranges are gaps before it runs.
    private func startWorkers(first: FirstResponse) {
        let resources = setup.context.resources
        for index in Array(starts.indices.dropFirst()) + [0] {
            let (worker, action) = (starts[index].segment.worker, starts[index].action)
            do throws(ResourceError) {
                try resources.threads.run(name: "haul-segment") { [self] in
                    guard index != 0 else {
                        return work(worker: worker, action: action, exchange: first.exchange, buffer: first.buffer)
                    }
                    do throws(DownloadError) {
                        let buffer = try resources.buffers.take(size: setup.context.configuration.bufferSize)
                        defer { resources.buffers.give(buffer) }
                        work(worker: worker, action: action, exchange: nil, buffer: buffer)
                    } catch {
                        work(worker: worker, action: state.withLock { $0.notStarted(worker: worker, error: error) },
                             exchange: nil, buffer: .init(start: nil, count: 0))
                    }
                }
            } catch {
                let ended = state.withLock { $0.notStarted(worker: worker, error: DownloadError(error)) }
                work(worker: worker, action: ended, exchange: index == 0 ? first.exchange : nil,
                     buffer: .init(start: nil, count: 0))
            }
        }
    }

    // MARK: - Workers

    /// One connection's life: the actions the state machine gives it, until it ends.
    ///
    /// - Parameter inline: the transfer's only connection, on the caller's thread (it starts
    ///   the timer thread once it has run for a record interval).
    private func work(worker: Int, action first: StateMachine.WorkerAction, exchange: HTTPExchange?,
                      buffer: UnsafeMutableRawBufferPointer, inline: Bool = false) {
        var action = first
        var handed = exchange
        // The host whose slot the worker holds: the first response's source's, for the first.
        var slotURL = exchange == nil ? nil : setup.sources[setup.firstSource].base
        while true {
            switch action {
            case .acquireSlot:
                let url = setup.sources[state.withLock { $0.source(of: worker) }].base
                let granted = setup.hostSlots.acquire(for: url, cancellation: abort)
                if granted { slotURL = url }
                action = state.withLock { granted ? $0.slotGranted(worker: worker) : $0.slotWaitEnded(worker: worker) }
            case .transfer(let segment):
                let given = handed
                handed = nil
                action = transfer(worker: worker, segment: segment, exchange: given, buffer: buffer, inline: inline)
            case .backOff(let delay, let releasingSlot):
                if releasingSlot, let url = slotURL { setup.hostSlots.release(for: url) }
                let slept = delay == .zero ? !abort.isCancelled : abort.sleep(for: delay)
                action = state.withLock { $0.backOffEnded(worker: worker, interrupted: !slept) }
            case .end(let releasingSlot, let stopsTransfer):
                handed?.close()   // a connection is always closed before its slot goes back
                if releasingSlot, let url = slotURL { setup.hostSlots.release(for: url) }
                if stopsTransfer { abort.cancel() }   // wakes the connections waiting or sleeping
                state.withLockBroadcasting { $0.exited(worker: worker) }
                return
            }
        }
    }

    /// Fetches one segment (over `exchange` when it is the first response) and returns the state
    /// machine's next action. The connection is closed or pooled before it returns.
    private func transfer(worker: Int, segment: SegmentPlanner.Segment, exchange given: HTTPExchange?,
                          buffer: UnsafeMutableRawBufferPointer, inline: Bool) -> StateMachine.WorkerAction {
        do throws(DownloadError) {
            let exchange: HTTPExchange
            if let given {
                exchange = given
            } else {
                exchange = try open(segment, buffer: buffer)
            }
            defer { exchange.finish(pool: setup.context.resources.pool) }
            let progressed = try read(exchange, worker: worker, segment: segment, inline: inline)
            let now: ContinuousClock.Instant? = setup.sources.count > 1 ? .now : nil
            return state.withLock { $0.segmentEnded(worker: worker, progressed: progressed, now: now) }
        } catch {
            let stopped = abort.isCancelled
            let (action, setAside) = state.withLock { machine in
                (machine.failed(worker: worker, error: error, stopped: stopped, jitter: .random(in: 0...1)), machine.takeSetAside())
            }
            announce(setAside)
            return action
        }
    }

    /// Warns once for each source set aside.
    private func announce(_ setAside: [(source: Int, reason: String)]) {
        for (source, reason) in setAside {
            setup.warn("source \(source + 1) (\(setup.sources[source].base)) set aside: \(reason)")
        }
    }

    /// Sends the ranged request for `segment` and checks its answer.
    private func open(_ segment: SegmentPlanner.Segment, buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> HTTPExchange {
        let index = state.withLock { $0.source(of: segment.worker) }
        // The validator is the first response's server's: another server's file has its own.
        let exchange = try setup.sources[index].open(range: ByteRangeRequest(first: segment.start, last: segment.end - 1),
                                                     ifRange: index == setup.firstSource ? setup.ifRange : nil,
                                                     context: setup.context, cancellation: abort, buffer: buffer)
        do throws(DownloadError) {
            try validate(exchange.head, segment: segment)
        } catch {
            exchange.close()
            throw error
        }
        return exchange
    }

    /// Reads the body of `exchange` into the file from `segment.start` to the worker's end.
    /// Returns whether any byte was written.
    private func read(_ exchange: HTTPExchange, worker: Int, segment: SegmentPlanner.Segment,
                      inline: Bool) throws(DownloadError) -> Bool {
        let configuration = setup.context.configuration
        if let limiter = setup.limiter { exchange.limitReads(to: limiter.readSize) }
        let writer = SegmentWriter(
            file: setup.partial, from: segment.start, to: state.withLock { $0.end(of: worker) }, progress: setup.progress,
            hasher: setup.hasher, limiter: setup.limiter, abort: abort, ring: setup.writesDirect ? ring(worker: worker) : nil,
            flushInterval: configuration.resumeRecordInterval,
            report: { [self] (position, finished, grown) throws(DownloadError) -> Int64 in
                try wrote(worker: worker, upTo: position, finished: finished, grown: grown, inline: inline)
            })
        let ended: Bool
        do throws(DownloadError) {
            ended = try exchange.readBody(stallTimeout: configuration.stallTimeout, into: writer.freeSpace) {
                (slice) throws(DownloadError) -> Bool in try writer.take(slice)
            }
        } catch {
            try? writer.finish(after: error)
            throw error
        }
        try writer.finish()
        if ended && writer.position < writer.end {
            // The response ended before this worker's end: the server sent less than it announced.
            throw DownloadError(.truncatedBody, "the connection ended at byte \(writer.position), before \(writer.end)")
        }
        return writer.position > segment.start
    }

    /// The buffers of one connection's direct writes: each its receive buffer's size (in whole
    /// blocks), about 8 MiB in all per transfer and 2 at least per connection. Each buffer
    /// is written up to the connection's end as it is at that moment.
    private func ring(worker: Int) -> WriteBehind {
        let block = PartialFile.directAlignment
        let size = max(block, (setup.context.configuration.bufferSize + block - 1) / block * block)
        let depth = max(2, min(8, Self.writeBehindBytes / (size * plannedConnections)))
        let resources = setup.context.resources
        return WriteBehind(depth: depth, bufferSize: size, buffers: resources.buffers,
                           threads: resources.threads) { [partial = setup.partial, state] (staging, wrote) throws(DownloadError) in
            try staging.flush(to: partial, all: true, limit: { state.withLock { $0.end(of: worker) } }, wrote: wrote)
        }
    }

    /// The memory a transfer's connections write behind their readers, in all.
    static let writeBehindBytes = 8 << 20

    /// Reports written bytes to the state machine; returns the worker's end as it is now. An
    /// inline transfer starts the timer thread once it has run for a record interval.
    private func wrote(worker: Int, upTo position: Int64, finished: [BlockHash], grown: BlockHash?,
                       inline: Bool) throws(DownloadError) -> Int64 {
        let mirrors = setup.sources.count > 1
        let now: ContinuousClock.Instant? = inline || mirrors ? .now : nil
        var (end, startTimer, failure, wake, setAside, checks) = state.withLock { machine in
            let end = machine.wrote(worker: worker, upTo: position, finished: finished, grown: grown, measuredAt: mirrors ? now : nil)
            let startTimer = inline ? now.map { machine.timerWanted(now: $0, inline: true) } ?? false : false
            return (end, startTimer, machine.failure, machine.takeTimerWakeUp(), mirrors ? machine.takeSetAside() : [],
                    setup.pieceChecksums == nil ? [] : machine.takeChecks(for: worker))
        }
        announce(setAside)
        if !checks.isEmpty { (end, failure) = try check(pieces: checks, of: worker) }
        if wake { state.withLockBroadcasting { _ in } }   // the timer sleeps until bytes arrive
        if startTimer {
            // The worker notices a pause or cancel itself; the timer ends after it. Without a
            // thread, the caller runs the timer once this connection ended.
            do throws(ResourceError) {
                try setup.context.resources.threads.run(name: "haul-checkpoint") { [self] in runTimer(run: nil) }
            } catch {
                state.withLock { $0.timerNotStarted() }
            }
        }
        if let failure { throw failure }
        return end
    }

    /// Hashes the pieces a worker completed (read back from the partial file) and reports each;
    /// returns the worker's end and the transfer's failure as they are after the reports.
    private func check(pieces: [Int], of worker: Int) throws(DownloadError) -> (end: Int64, failure: DownloadError?) {
        guard let checksums = setup.pieceChecksums else { return (0, nil) }
        for index in pieces {
            let range = checksums.range(of: index, total: setup.total)
            let digest = try FileHashing.hash(descriptor: setup.partial.descriptor, algorithm: checksums.algorithm, range: range)
            let matched = digest == checksums.digests[index]
            let setAside = state.withLock { machine in
                machine.pieceChecked(index, matched: matched)
                return machine.takeSetAside()
            }
            if !matched { setup.warn("bytes \(range.lowerBound)-\(range.upperBound - 1) do not match piece \(index + 1)'s checksum; fetching them again") }
            announce(setAside)
        }
        return state.withLock { ($0.end(of: worker), $0.failure) }
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

    // MARK: - Records

    /// The checkpoint timer: saves records as the state machine asks, sleeping between ticks
    /// until the next is due or a worker ends, until no worker is left and the last record is
    /// written.
    private func runTimer(run: CancellationSignal?) {
        while true {
            let cancelled = run?.isCancelled ?? false
            let (action, endings) = state.withLock { machine in
                if cancelled { machine.cancel() }
                return (machine.tick(now: .now), machine.endings)
            }
            switch action {
            case .save(let ranges, let pieces, let verified, let savedBefore):
                save(ranges, pieces, verified: verified, savedBefore: savedBefore)
            case .wait(let deadline?):
                state.wait(until: deadline) { $0.endings == endings }
            case .wait(nil):
                state.wait(until: nil) { $0.endings == endings && $0.timerAwaitsData }
            case .finished:
                state.withLockBroadcasting { _ in }   // an inline transfer may wait for its timer
                return
            }
        }
    }

    /// Syncs the data, then records what is complete. A failure here stops the transfer.
    private func save(_ ranges: [Range<Int64>], _ pieces: [BlockHash], verified: [Range<Int64>], savedBefore: Bool) {
        do throws(DownloadError) {
            try setup.partial.syncData()
            try setup.checkpoint(ranges, pieces, verified, savedBefore)
            state.withLock { $0.recordSaved(ranges, verified: verified) }
        } catch {
            state.withLock { $0.recordFailed(error) }
            abort.cancel()
        }
    }
}

/// The attempt's first response and its buffer, handed from the job's thread to the first
/// worker's. Unchecked Sendable: after the hand-over only that worker touches them, and the
/// job's thread waits (in `runTimer`) until every worker has exited before freeing the buffer.
private struct FirstResponse: @unchecked Sendable {
    let exchange: HTTPExchange
    let buffer: UnsafeMutableRawBufferPointer
}
