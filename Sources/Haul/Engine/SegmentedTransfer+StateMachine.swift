import HaulCore

extension SegmentedTransfer {
    /// Every decision of a segmented transfer, as a pure state machine: events in (a host slot
    /// granted, bytes written, a segment ended, a failure, a back-off over, the checkpoint timer),
    /// actions out (wait for a slot, transfer a range, back off, end a worker, save a record),
    /// which ``SegmentedTransfer`` executes outside its lock. No clock, no socket, no file.
    ///
    /// Host slots belong to this state: a worker holds at most one, from the grant until the
    /// action that gives it back (``WorkerAction/backOff(_:releasingSlot:)`` or
    /// ``WorkerAction/end(releasingSlot:stopsTransfer:)`` with `true`), and every worker ends
    /// with none.
    struct StateMachine {
        /// What a worker (one connection) does next.
        enum WorkerAction: Equatable, Sendable {
            /// Wait for a host slot, then report ``slotGranted(worker:)`` (or ``slotWaitEnded(worker:)``).
            case acquireSlot
            /// Fetch exactly this range (the slot is held), then report how it went.
            case transfer(SegmentPlanner.Segment)
            /// Sleep this long before asking again; give the slot back first when told to.
            case backOff(Duration, releasingSlot: Bool)
            /// Stop; give the slot back first when told to, and stop every other worker when the
            /// transfer is over (complete or failed for good).
            case end(releasingSlot: Bool, stopsTransfer: Bool)
        }

        /// What the checkpoint timer does next.
        enum TimerAction: Equatable {
            /// Sync the data, then save a record of these ranges, block hashes and verified
            /// pieces' bytes, then report ``recordSaved(_:verified:)`` or ``recordFailed(_:)``.
            case save(ranges: [Range<Int64>], pieces: [BlockHash], verified: [Range<Int64>], savedBefore: Bool)
            /// Sleep until this instant (or until a worker ends), then tick again; `nil`: until
            /// a worker writes bytes (``takeTimerWakeUp()``) or ends. A stalled or slow server
            /// then costs the timer no wake-up between its bytes.
            case wait(until: ContinuousClock.Instant?)
            /// No worker is left and the last record (if any was due) is written.
            case finished
        }

        private enum Phase: Equatable { case waitingForSlot, transferring, backingOff, ending, ended }

        private struct Worker {
            var phase: Phase
            var holdsSlot: Bool
            var failures = 0
            /// The source (an index into the transfer's sources) it fetches from.
            var source = 0
        }

        private(set) var planner: SegmentPlanner
        /// The sources and what is known of each (one, without mirrors).
        private(set) var board: SourceBoard
        /// The pieces and their checks, with ``PieceChecksums``.
        private var pieceTracker: PieceTracker?
        /// Failed piece checks so far (the transfer gives up past ``pieceFailureLimit(_:)``).
        private var pieceFailures = 0
        /// Pieces each worker must check before it goes on (``takeChecks(for:)``).
        private var checks: [Int: [Int]] = [:]
        /// Sources set aside since the executor last asked (``takeSetAside()``), with why.
        private var setAsideNotices: [(source: Int, reason: String)] = []
        private var workers: [Int: Worker] = [:]
        /// The checksum of every completed piece, by first byte; changed in step with `planner`.
        private var pieces: [Int64: BlockHash]
        /// The first failure that cannot be retried.
        private(set) var failure: DownloadError?
        /// Cancelled from outside (pause or cancel).
        private(set) var cancelled = false
        /// Whether a record was saved (the download must remove it after its commit).
        private(set) var recordSaved = false
        private var savedRanges: [Range<Int64>]?
        /// The verified pieces' bytes of the last record.
        private var savedVerified: [Range<Int64>] = []
        private var saving = false
        private var finalRecordDone = false
        private var lastCheckpoint: ContinuousClock.Instant?
        /// When the last record was asked for.
        private var lastSave: ContinuousClock.Instant?
        private var timerStarted = false
        /// A timer thread was wanted and did not start: none is asked for again.
        private var timerRefused = false
        private let retry: RetryPolicy
        private let interval: Duration
        private let firstSource: Int

        /// - Parameters:
        ///   - planner: the plan, with the ranges already complete.
        ///   - pieces: the checksums of the completed pieces a resume kept.
        ///   - retry: how many failures a worker may have, and its back-off.
        ///   - recordInterval: how often the timer saves a record.
        ///   - board: the sources (default: one).
        ///   - firstSource: the source of the first response.
        ///   - verified: the bytes of the pieces a resumed record says passed their checksums.
        init(planner: SegmentPlanner, pieces: [BlockHash], retry: RetryPolicy, recordInterval: Duration,
             board: SourceBoard = SourceBoard(count: 1, connectionsPerSource: 1), firstSource: Int = 0,
             pieceChecksums: PieceChecksums? = nil, verified: [Range<Int64>] = []) {
            self.planner = planner
            self.pieceTracker = pieceChecksums.map { PieceTracker(checksums: $0, total: planner.total, verified: verified) }
            self.savedVerified = pieceTracker?.verifiedRanges ?? []
            self.board = board
            self.firstSource = firstSource
            // What is complete at the start is on disk already (a resumed record says so, and a
            // new download has nothing): the first record is for something new.
            self.savedRanges = planner.completed
            self.pieces = Dictionary(pieces.map { ($0.range.lowerBound, $0) }, uniquingKeysWith: { $1 })
            self.retry = retry
            self.interval = recordInterval
        }

        /// The workers that have not exited yet.
        var runningWorkers: Int { workers.values.count { $0.phase != .ended } }

        /// How many workers have exited so far (the timer waits for this to change).
        private(set) var endings = 0

        /// Whether the timer sleeps until bytes are written (nothing new was complete at its tick).
        private(set) var timerAwaitsData = false

        /// The host slots the workers hold now.
        var slotsHeld: Int { workers.values.count { $0.holdsSlot } }

        /// Whether every byte is written.
        var isComplete: Bool { planner.isComplete && !(pieceTracker?.isChecking ?? false) }

        /// The completed pieces, in file order, none overlapping another (``separate(_:)``).
        var allPieces: [BlockHash] { Self.separate(pieces.values.sorted { $0.range.lowerBound < $1.range.lowerBound }) }

        /// `sorted` (in file order) without the pieces that overlap another: a worker that wrote
        /// into a range reopened meanwhile (its piece failed a check) may report a piece that
        /// overlaps the refetch's. Neither is known to describe the bytes on disk, so both go,
        /// and those bytes go without a checksum, as a record must never hold overlapping ones.
        static func separate(_ sorted: [BlockHash]) -> [BlockHash] {
            var kept: [BlockHash] = [], end: Int64 = 0, lastOverlapped = false
            for piece in sorted {
                if piece.range.lowerBound < end {
                    if !lastOverlapped, !kept.isEmpty { kept.removeLast() }
                    lastOverlapped = true
                } else {
                    kept.append(piece)
                    lastOverlapped = false
                }
                end = max(end, piece.range.upperBound)
            }
            return kept
        }

        // MARK: - Workers

        /// Hands out the first segments, the first to the worker that holds the first response
        /// and its host slot; the others wait for a slot each. Empty when nothing is missing
        /// (then the first response's slot goes back).
        mutating func start(now: ContinuousClock.Instant) -> [(segment: SegmentPlanner.Segment, action: WorkerAction)] {
            lastCheckpoint = now
            let segments = planner.start()
            return segments.enumerated().map { index, segment in
                let first = index == 0
                let source = first ? firstSource : board.pick() ?? firstSource
                board.connect(source)
                workers[segment.worker] = Worker(phase: first ? .transferring : .waitingForSlot, holdsSlot: first, source: source)
                return (segment, first ? .transfer(segment) : .acquireSlot)
            }
        }

        /// A worker has its host slot: it fetches its segment as it is now (others may have taken
        /// over its back meanwhile), or ends when nothing is left to it.
        mutating func slotGranted(worker: Int) -> WorkerAction {
            workers[worker]?.holdsSlot = true
            guard !isStopped, let position = planner.position(of: worker) else { return end(worker) }
            let end = planner.end(of: worker)
            guard position < end else { return segmentEnded(worker: worker, progressed: false) }
            workers[worker]?.phase = .transferring
            return .transfer(SegmentPlanner.Segment(worker: worker, start: position, end: end))
        }

        /// A worker's wait for a slot was cut short (the transfer stopped).
        mutating func slotWaitEnded(worker: Int) -> WorkerAction {
            end(worker)
        }

        /// A worker wrote `[.., position)` and grew `grown` (a piece within one block) after
        /// finishing `finished`: the bytes count as complete, the pieces that do not reach past
        /// its end are kept. Returns where the worker must stop now.
        mutating func wrote(worker: Int, upTo position: Int64, finished: [BlockHash], grown: BlockHash?,
                            measuredAt now: ContinuousClock.Instant? = nil) -> Int64 {
            // Another worker may have taken over the end of this range while these bytes were
            // written (it writes the same bytes again): a piece reaching past the new end is not
            // kept, so pieces never overlap; those bytes go without a checksum. With piece checks,
            // bytes that failed one are missing again: a piece that holds any of them is not kept.
            let limit = planner.end(of: worker)
            let before = planner.position(of: worker)
            planner.advance(worker: worker, to: position)
            let checked = pieceTracker != nil
            for piece in finished where piece.range.upperBound <= limit && (!checked || SegmentPlanner.covers(planner.completed, piece.range)) {
                pieces[piece.range.lowerBound] = piece
            }
            if let grown, grown.range.upperBound <= limit, !checked || SegmentPlanner.covers(planner.completed, grown.range) {
                pieces[grown.range.lowerBound] = grown
            }
            if board.hasMirrors || pieceTracker != nil, let before, let after = planner.position(of: worker), after > before {
                let source = workers[worker]?.source ?? firstSource
                if board.hasMirrors, let now {
                    board.wrote(after - before, from: source, at: now)
                    for slow in board.measure(now: now) { setAside(slow) }
                }
                if let ready = pieceTracker?.wrote(before..<after, by: source, completed: planner.completed), !ready.isEmpty {
                    checks[worker, default: []] += ready
                }
            }
            return planner.end(of: worker)
        }

        /// Where `worker` must stop now.
        func end(of worker: Int) -> Int64 { planner.end(of: worker) }

        /// The source `worker` fetches from (an index into the transfer's sources).
        func source(of worker: Int) -> Int { workers[worker]?.source ?? firstSource }

        /// After a write: whether the timer sleeps until bytes arrive and must be woken (once).
        mutating func takeTimerWakeUp() -> Bool {
            defer { timerAwaitsData = false }
            return timerAwaitsData
        }

        /// A worker's range ended cleanly: it goes on with its next one (keeping its slot), or
        /// ends; the last byte of the file stops the transfer.
        mutating func segmentEnded(worker: Int, progressed: Bool, now: ContinuousClock.Instant? = nil) -> WorkerAction {
            if progressed { workers[worker]?.failures = 0 }
            guard !isStopped else { return end(worker) }
            if let source = workers[worker]?.source, !board.isUsable(source) {
                return moveOrEnd(worker, after: nil)
            }
            if let next = planner.finished(worker: worker) ?? takeOverSlowerTail(for: worker, now: now) {
                workers[worker]?.phase = .transferring
                return .transfer(next)
            }
            return end(worker)
        }

        /// A worker's request or body failed. `stopped`: the transfer was stopped meanwhile (the
        /// failure is its consequence). A retryable failure within the retries gives the rest of
        /// the range back and backs off; any other stops the transfer.
        mutating func failed(worker: Int, error: DownloadError, stopped: Bool, jitter: Double) -> WorkerAction {
            if stopped, failure == nil, !planner.isComplete { cancelled = true }
            guard !isStopped, var state = workers[worker] else { return end(worker) }
            if board.hasMirrors, (4...8).contains(error.code.exitStatus) { return failedWithMirrors(worker: worker, error: error, jitter: jitter) }
            state.failures += 1
            guard error.isRetryable, state.failures <= retry.maximumRetries else {
                if failure == nil { failure = error }
                return end(worker)
            }
            _ = planner.failed(worker: worker)   // its rest goes back as a gap
            let released = state.holdsSlot
            state.holdsSlot = false
            state.phase = .backingOff
            workers[worker] = state
            return .backOff(retry.delay(beforeRetry: state.failures, jitter: jitter, retryAfter: error.retryAfter),
                            releasingSlot: released)
        }

        /// A worker's back-off is over: it takes its own gap back when still free, else another,
        /// and waits for a slot; or ends when nothing is left (or the transfer stopped).
        mutating func backOffEnded(worker: Int, interrupted: Bool) -> WorkerAction {
            guard !interrupted, !isStopped, planner.retry(worker: worker) != nil else { return end(worker) }
            workers[worker]?.phase = .waitingForSlot
            return .acquireSlot
        }

        /// A worker could not start (the system gave no thread or buffer): its range goes back
        /// as a gap the others take over, and it ends. When no other worker is left to take it,
        /// the transfer fails with `error`; the connections it has go on otherwise.
        mutating func notStarted(worker: Int, error: DownloadError) -> WorkerAction {
            _ = planner.failed(worker: worker)
            let othersLeft = workers.contains { $0.key != worker && $0.value.phase != .ending && $0.value.phase != .ended }
            if !othersLeft, !isStopped { failure = error }
            return end(worker)
        }

        /// The run was paused or cancelled: every worker stops at its next step.
        mutating func cancel() {
            if failure == nil { cancelled = true }
        }

        /// Whether the workers must stop: failed for good, cancelled, or every byte written.
        private var isStopped: Bool { failure != nil || cancelled || isComplete }

        /// A worker carried out its ``WorkerAction/end(releasingSlot:stopsTransfer:)``: its
        /// connection is closed and its slot given back.
        mutating func exited(worker: Int) {
            guard workers[worker]?.phase == .ending else { return }
            workers[worker]?.phase = .ended
            endings += 1
        }

        /// Ends `worker`, giving its slot back; an ending that finds the transfer over (complete
        /// or failed) stops the others.
        private mutating func end(_ worker: Int) -> WorkerAction {
            guard let state = workers[worker], state.phase != .ending, state.phase != .ended else {
                return .end(releasingSlot: false, stopsTransfer: false)
            }
            workers[worker] = Worker(phase: .ending, holdsSlot: false, failures: state.failures, source: state.source)
            board.disconnect(state.source)
            let over = failure != nil || isComplete
            return .end(releasingSlot: state.holdsSlot, stopsTransfer: over && !cancelled)
        }
    }
}

extension SegmentedTransfer.StateMachine {
    // MARK: - Sources

    /// A failure of a transfer with mirrors that the source is to blame for (the network, TLS,
    /// a refusal, a bad answer, an HTTP status): the worker retries the same source after a
    /// back-off while the source is usable, else moves to another; the transfer fails only when
    /// no source is left to serve the missing bytes.
    fileprivate mutating func failedWithMirrors(worker: Int, error: DownloadError, jitter: Double) -> WorkerAction {
        guard var state = workers[worker] else { return end(worker) }
        if board.failed(state.source, error: error, maximumRetries: retry.maximumRetries) {
            setAside(state.source, reason: error.message)
        }
        _ = planner.failed(worker: worker)   // its rest goes back as a gap
        guard board.isUsable(state.source) else { return moveOrEnd(worker, after: error, jitter: jitter) }
        state.failures += 1
        let released = state.holdsSlot
        state.holdsSlot = false
        state.phase = .backingOff
        workers[worker] = state
        let failures = board.sources[state.source].failures
        return .backOff(retry.delay(beforeRetry: failures, jitter: jitter, retryAfter: error.retryAfter), releasingSlot: released)
    }

    /// Moves `worker` off its source (set aside) to the best usable one with room, through a
    /// back-off that gives its slot back (none after a clean end; the retry policy's after a
    /// failure when the sources set aside had to come back). Ends it when no source has room;
    /// when no source is left at all, the transfer fails with `error`.
    fileprivate mutating func moveOrEnd(_ worker: Int, after error: DownloadError?, jitter: Double = 0) -> WorkerAction {
        guard var state = workers[worker] else { return end(worker) }
        _ = planner.failed(worker: worker)
        var delay = Duration.zero
        if board.pick() == nil, !othersUseUsableSources(besides: worker), board.reviveRetryable() {
            state.failures += 1
            delay = retry.delay(beforeRetry: state.failures, jitter: jitter, retryAfter: error?.retryAfter)
        }
        guard let next = board.pick(), state.failures <= retry.maximumRetries || error == nil else {
            if !othersUseUsableSources(besides: worker), failure == nil {
                failure = error ?? DownloadError(.networkError, "every source of the file was set aside")
            }
            return end(worker)
        }
        board.disconnect(state.source)
        board.connect(next)
        let released = state.holdsSlot
        state.source = next
        state.holdsSlot = false
        state.phase = .backingOff
        workers[worker] = state
        return .backOff(delay, releasingSlot: released)
    }

    /// Near the end of a transfer with mirrors (nothing left to split): the rest of the worker
    /// with the most bytes to go on a source this worker's outpaces twice over, taken over
    /// whole, so the end never waits on a slow source's tail (its bytes past the cut are
    /// fetched again).
    fileprivate mutating func takeOverSlowerTail(for worker: Int, now: ContinuousClock.Instant?) -> SegmentPlanner.Segment? {
        guard board.hasMirrors, let now, let own = workers[worker]?.source else { return nil }
        var victim: (id: Int, left: Int64)?
        for (id, other) in workers where id != worker && other.phase == .transferring && board.outpaces(own, other.source, now: now) {
            let left = planner.end(of: id) - (planner.position(of: id) ?? planner.end(of: id))
            if left > 0, left > victim?.left ?? 0 { victim = (id, left) }
        }
        guard let victim else { return nil }
        planner.yieldRest(worker: victim.id)
        return planner.finished(worker: worker)
    }

    // MARK: - Pieces

    /// The pieces `worker` completed and must check now (outside the lock), each once.
    mutating func takeChecks(for worker: Int) -> [Int] {
        checks.removeValue(forKey: worker) ?? []
    }

    /// The check of piece `index` is done. A piece that did not match goes back to the missing
    /// bytes (with its block hashes); with mirrors, the sources that wrote it are set aside,
    /// else the transfer fails (`checksumMismatch`).
    mutating func pieceChecked(_ index: Int, matched: Bool) {
        guard let (refetch, blamed) = pieceTracker?.checked(index, matched: matched) else { return }
        guard let range = refetch else {
            let reason = "bytes it sent for piece \(index + 1) did not match its checksum, which the piece met once fetched without it"
            setAside(blamed, reason: reason)
            return
        }
        pieceFailures += 1
        planner.reopen(range)
        pieces = pieces.filter { $0.value.range.upperBound <= range.lowerBound || $0.value.range.lowerBound >= range.upperBound }
        guard board.hasMirrors, pieceFailures <= Self.pieceFailureLimit(pieceTracker) else {
            if failure == nil { failure = DownloadError(.checksumMismatch, "bytes \(range.lowerBound)-\(range.upperBound - 1) do not match piece \(index + 1)'s checksum") }
            return
        }
        setAside(blamed, reason: "it sent bytes \(range.lowerBound)-\(range.upperBound - 1) that do not match piece \(index + 1)'s checksum")
        if board.pick() == nil, !workers.values.contains(where: { $0.phase != .ending && $0.phase != .ended && board.isUsable($0.source) }),
           !board.reviveRetryable(), failure == nil {
            failure = DownloadError(.checksumMismatch, "every source sent bytes that do not match piece \(index + 1)'s checksum")
        }
    }

    /// Sets `sources` aside (those still usable) for `reason`.
    private mutating func setAside(_ sources: Set<Int>, reason: String) {
        for source in sources.sorted() where board.setAside(source, reason: reason) {
            setAside(source, reason: reason)
        }
    }

    /// How many failed checks a transfer with mirrors bears: three per piece at most, so that a
    /// file every server sends wrong ends.
    static func pieceFailureLimit(_ tracker: PieceTracker?) -> Int {
        3 * (tracker?.checksums.digests.count ?? 0)
    }

    /// Whether another worker still runs on a usable source (it will take the gaps left).
    private func othersUseUsableSources(besides worker: Int) -> Bool {
        workers.contains { id, other in
            id != worker && other.phase != .ending && other.phase != .ended && board.isUsable(other.source)
        }
    }

    /// `source` was set aside (``SourceBoard`` said so): its connections give their ranges back
    /// to the others, and the executor is told once (``takeSetAside()``).
    fileprivate mutating func setAside(_ source: Int, reason: String? = nil) {
        for (id, worker) in workers where worker.source == source && worker.phase == .transferring {
            planner.yieldRest(worker: id)
        }
        guard case .setAside(let standing, _) = board.sources[source].standing else { return }
        setAsideNotices.append((source, reason ?? standing))
    }

    /// The sources set aside since the last call, with why.
    mutating func takeSetAside() -> [(source: Int, reason: String)] {
        defer { setAsideNotices.removeAll() }
        return setAsideNotices
    }
}

extension SegmentedTransfer.StateMachine {
    // MARK: - Records

    /// A transfer that brought fewer bytes per second than this since its last record (a
    /// trickle) is recorded ``trickleInterval`` after it: a sync and a record for a few bytes cost
    /// more than the bytes, and a crash then loses at most 80 KiB of them.
    static let trickleRate: Int64 = 16 << 10
    /// How often a trickle is recorded.
    static let trickleInterval: Duration = .seconds(5)

    /// The checkpoint timer fired (or a worker ended). While workers run, saves a record every
    /// interval when something new is complete (a trickle: every ``trickleInterval``), and
    /// sleeps until a worker writes when nothing is new; once none is left, saves the last one
    /// when the transfer stopped short, or when it is complete and a record exists (so a crash
    /// before the rename costs a 416 on the next run, not the interval's bytes).
    mutating func tick(now: ContinuousClock.Instant) -> TimerAction {
        if saving { return .wait(until: now + interval) }
        if runningWorkers > 0 {
            let due = (lastCheckpoint ?? now) + interval
            guard now >= due else { return .wait(until: due) }
            lastCheckpoint = now
            if savedRanges == planner.completed {
                timerAwaitsData = true
                return .wait(until: nil)
            }
            if let last = lastSave, now - last < Self.trickleInterval {
                let fresh = Self.byteCount(planner.completed) - Self.byteCount(savedRanges ?? [])
                if Double(fresh) < Double(Self.trickleRate) * (now - last).seconds {
                    return .wait(until: last + Self.trickleInterval)
                }
            }
            lastSave = now
            return saveIfNew() ?? .wait(until: nil)
        }
        guard !finalRecordDone else { return .finished }
        finalRecordDone = true
        let needed = failure != nil || cancelled || !planner.isComplete || recordSaved
        return (needed ? saveIfNew() : nil) ?? .finished
    }

    /// The bytes in `ranges`.
    private static func byteCount(_ ranges: [Range<Int64>]) -> Int64 {
        ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) }
    }

    /// `.save` when the complete ranges changed since the last record (a stalled server costs no
    /// sync and no write).
    private mutating func saveIfNew() -> TimerAction? {
        let ranges = planner.completed
        let verified = pieceTracker?.verifiedRanges ?? []
        if savedRanges == ranges && savedVerified == verified { return nil }
        saving = true
        return .save(ranges: ranges, pieces: allPieces, verified: verified, savedBefore: recordSaved)
    }

    /// Claims the checkpoint timer for the caller: `true` once, when it should start. With
    /// `inline` (one connection on the caller's thread), only after the transfer ran for an
    /// interval: a short transfer then needs no timer thread at all.
    mutating func timerWanted(now: ContinuousClock.Instant, inline: Bool) -> Bool {
        guard !timerStarted, !timerRefused else { return false }
        if inline, let since = lastCheckpoint, now - since < interval { return false }
        timerStarted = true
        return true
    }

    /// The timer thread ``timerWanted(now:inline:)`` asked for did not start: the caller runs
    /// the timer once the connection ended (it writes the last record; none before it).
    mutating func timerNotStarted() {
        timerStarted = false
        timerRefused = true
    }

    /// Whether the timer ran to its end (or never started and no worker is left).
    var recordsFinished: Bool { finalRecordDone && !saving }

    /// Whether a timer thread owns the records.
    var hasTimer: Bool { timerStarted }

    /// The record of `ranges` and `verified` is on disk (after the data it describes).
    mutating func recordSaved(_ ranges: [Range<Int64>], verified: [Range<Int64>] = []) {
        saving = false
        recordSaved = true
        savedRanges = ranges
        savedVerified = verified
    }

    /// Saving a record failed: the transfer stops with that failure.
    mutating func recordFailed(_ error: DownloadError) {
        saving = false
        if failure == nil { failure = error }
    }

    /// How the transfer ended, once no worker is left.
    var outcome: Result<Void, DownloadError> {
        if let failure { return .failure(failure) }
        if cancelled { return .failure(DownloadError(.cancelled, "cancelled; the partial file is kept")) }
        guard planner.isComplete else { return .failure(DownloadError(.internalError, "the transfer ended with bytes missing")) }
        return .success(())
    }
}
