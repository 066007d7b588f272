/// Plans a segmented download: which byte range each connection (a *worker*) fetches next.
///
/// A pure state machine (no locks, no I/O): the engine wraps it in a lock, sends the requests
/// and writes the bytes. Every byte of `[0, total)` is always in exactly one of three places:
/// ``completed`` (written), in flight (`[position, end)` of an active worker, see ``inFlight``) or
/// ``unassigned`` (held by no worker: not handed out yet, or left behind by a failed worker).
///
/// Splits never create a piece smaller than `minimumSegment`: ``start()`` splits a gap only into
/// pieces of at least that size, and ``finished(worker:)`` takes over the second half of the
/// largest remaining range only when both halves keep that size. A gap that was already smaller
/// (a hole between resumed ranges, the end of the file) is handed out whole.
struct SegmentPlanner: Sendable {
    /// A byte range `[start, end)` handed to one worker.
    struct Segment: Equatable, Sendable {
        /// The worker (connection) that fetches it: 0, 1, 2... up to `maximumConnections - 1`.
        var worker: Int
        /// The first byte to fetch.
        var start: Int64
        /// One past the last byte to fetch (it shrinks when another worker takes over the tail).
        var end: Int64
    }

    /// What one active worker holds: it has written `[segment start, position)`, `[position, end)` is still to come.
    private struct Slot: Sendable {
        /// Where its current segment began.
        var start: Int64
        var position: Int64
        var end: Int64
    }

    /// Split points move down to a multiple of this when both halves stay large enough.
    static let alignment: Int64 = 64 << 10

    /// The file's length in bytes.
    let total: Int64
    /// The most workers that ever hold a segment at once (at least 1).
    let maximumConnections: Int
    /// No split creates a piece smaller than this (at least 1).
    let minimumSegment: Int64
    /// The smallest piece a steal may create (at most `minimumSegment`): near the end of a
    /// download a small tail is still worth a second connection, when a file is not worth splitting.
    let minimumSteal: Int64
    /// In order (`nil`: split evenly): workers take the gaps from the start, this much at a time,
    /// so the bytes arrive close to each other in file order (for a hasher that follows them).
    let ordered: Int64?
    /// The bytes written so far: sorted, merged, within `[0, total)`.
    private(set) var completed: [Range<Int64>]
    /// Gaps no worker holds: sorted, merged.
    private(set) var unassigned: [Range<Int64>]
    private var slots: [Int: Slot] = [:]
    /// Where a failed worker stopped, so that its retry takes back its own range when it is still free.
    private var retryPositions: [Int: Int64] = [:]
    private var started = false

    /// Creates a planner for a file of `total` bytes, of which `completed` are already on disk.
    ///
    /// - Parameters:
    ///   - total: the file's length; a negative value counts as 0.
    ///   - completed: ranges already written (any order; overlaps and bytes outside the file are ignored).
    ///   - maximumConnections: workers at most (values below 1 count as 1).
    ///   - minimumSegment: the smallest piece a split may create (values below 1 count as 1).
    ///   - minimumSteal: the smallest piece a steal may create (default: `minimumSegment`).
    ///   - ordered: the piece size of an in-order plan (see ``ordered``; at least `minimumSegment`);
    ///     `nil`, or a single connection, splits evenly.
    init(total: Int64, completed: [Range<Int64>], maximumConnections: Int, minimumSegment: Int64, minimumSteal: Int64? = nil,
         ordered: Int64? = nil) {
        self.minimumSteal = max(1, min(minimumSteal ?? minimumSegment, max(1, minimumSegment)))
        self.ordered = maximumConnections > 1 ? ordered.map { max($0, max(1, minimumSegment)) } : nil
        self.total = max(0, total)
        self.maximumConnections = max(1, maximumConnections)
        self.minimumSegment = max(1, minimumSegment)
        var merged: [Range<Int64>] = []
        for range in completed {
            let clamped = max(0, range.lowerBound)..<max(0, min(self.total, range.upperBound))
            if clamped.lowerBound < clamped.upperBound { Self.insert(clamped, into: &merged) }
        }
        self.completed = merged
        self.unassigned = Self.gaps(in: merged, total: self.total)
    }

    /// Whether every byte of `[0, total)` is complete (a 0-byte file is complete from the start).
    var isComplete: Bool {
        total == 0 || (completed.count == 1 && completed[0] == 0..<total)
    }

    /// The workers holding a segment, in increasing order.
    var activeWorkers: [Int] { slots.keys.sorted() }

    /// What each active worker still has to fetch, `[position, end)`, by worker.
    var inFlight: [Segment] {
        slots.sorted { $0.key < $1.key }.map { Segment(worker: $0.key, start: $0.value.position, end: $0.value.end) }
    }

    /// Each active worker's segment as it is now, by worker: where it began, where its next
    /// byte goes, and its end (which shrinks when another worker takes over its tail).
    var connectionRanges: [SegmentInFlight] {
        slots.sorted { $0.key < $1.key }.map { SegmentInFlight(start: $0.value.start, position: $0.value.position, end: $0.value.end) }
    }

    /// The bytes not complete yet (in flight or unassigned).
    var remainingBytes: Int64 {
        total - completed.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) }
    }

    /// Hands out the first segments, at most `maximumConnections`, with worker ids 0, 1, 2... in file order.
    ///
    /// The gaps are split evenly, each piece at least `minimumSegment` long, so a file smaller than
    /// `2 * minimumSegment` gets one segment (as many connections as `gap bytes / minimumSegment`,
    /// at most `maximumConnections`). The first gap always gets the first segment (the engine's first
    /// connection is already reading from there); then every other gap gets one, largest first;
    /// the connections left split the gap whose largest piece is largest. When there are more gaps
    /// than connections, the rest stay ``unassigned`` for ``finished(worker:)``.
    ///
    /// - Returns: the segments, sorted by start; empty when the file is complete or on a second call.
    mutating func start() -> [Segment] {
        guard !started else { return [] }
        started = true
        let gaps = unassigned
        guard !gaps.isEmpty else { return [] }
        if ordered != nil { return startInOrder() }
        let gapBytes = gaps.reduce(Int64(0)) { $0 + ($1.upperBound - $1.lowerBound) }
        let wanted = Int(min(Int64(maximumConnections), max(1, gapBytes / minimumSegment)))

        var pieces = [Int](repeating: 0, count: gaps.count)
        pieces[0] = 1
        for _ in 1..<max(1, wanted) {
            var best: (index: Int, covered: Bool, piece: Int64)?
            for (index, gap) in gaps.enumerated() {
                let length = gap.upperBound - gap.lowerBound
                let count = Int64(pieces[index])
                guard count == 0 || length / (count + 1) >= minimumSegment else { continue }
                let covered = count > 0
                let largestPiece = covered ? length / count : length
                if let current = best, current.covered == covered ? current.piece >= largestPiece : !current.covered {
                    continue
                }
                best = (index, covered, largestPiece)
            }
            guard let best else { break }
            pieces[best.index] += 1
        }

        var segments: [Segment] = []
        var left: [Range<Int64>] = []
        for (index, gap) in gaps.enumerated() {
            let count = Int64(pieces[index])
            guard count > 0 else {
                left.append(gap)
                continue
            }
            let length = gap.upperBound - gap.lowerBound
            let (quotient, remainder) = length.quotientAndRemainder(dividingBy: count)
            var start = gap.lowerBound
            for piece in 0..<count {
                let end = start + quotient + (piece < remainder ? 1 : 0)
                let worker = segments.count
                slots[worker] = Slot(start: start, position: start, end: end)
                segments.append(Segment(worker: worker, start: start, end: end))
                start = end
            }
        }
        unassigned = left
        return segments
    }

    /// ``start()`` for an in-order plan: one piece each from the start of the gaps, in file order.
    private mutating func startInOrder() -> [Segment] {
        var segments: [Segment] = []
        while segments.count < maximumConnections, let segment = take(worker: segments.count, from: 0) {
            segments.append(segment)
        }
        return segments
    }

    /// Gives the worker the start of the unassigned gap at `index`: all of it, or in an in-order
    /// plan its first piece (a rest shorter than `minimumSegment` goes with it).
    private mutating func take(worker: Int, from index: Int) -> Segment? {
        guard index < unassigned.count else { return nil }
        var gap = unassigned.remove(at: index)
        if let ordered, gap.upperBound - gap.lowerBound - ordered >= minimumSegment {
            unassigned.insert((gap.lowerBound + ordered)..<gap.upperBound, at: index)
            gap = gap.lowerBound..<(gap.lowerBound + ordered)
        }
        slots[worker] = Slot(start: gap.lowerBound, position: gap.lowerBound, end: gap.upperBound)
        return Segment(worker: worker, start: gap.lowerBound, end: gap.upperBound)
    }

    /// Records that the worker wrote its segment up to `position` (exclusive): those bytes count as complete.
    ///
    /// Positions past the worker's current ``end(of:)`` (it shrank while the worker was writing)
    /// count only up to that end: the bytes beyond belong to another worker, which writes them
    /// again (the same bytes). A position behind the last one, or an unknown worker, is ignored.
    mutating func advance(worker: Int, to position: Int64) {
        guard var slot = slots[worker] else { return }
        let target = min(position, slot.end)
        guard target > slot.position else { return }
        Self.insert(slot.position..<target, into: &completed)
        slot.position = target
        slots[worker] = slot
    }

    /// Where the worker must stop: its segment's end, which shrinks when another worker takes over the tail.
    ///
    /// - Returns: 0 for a worker that holds no segment (it has nothing to write).
    func end(of worker: Int) -> Int64 {
        slots[worker]?.end ?? 0
    }

    /// Where the worker's next byte goes, or `nil` when it holds no segment.
    func position(of worker: Int) -> Int64? {
        slots[worker]?.position
    }

    /// The worker reached its end (or gave its segment up): hands it its next segment.
    ///
    /// First an unassigned gap (the one a failed worker left when this worker is that worker,
    /// else the first), whole (in an in-order plan, its first piece). Otherwise the worker takes over the second half of the largest
    /// range still in flight with another worker (ties: the lowest worker id), split at the middle
    /// (moved down to a multiple of 64 KiB when both halves stay at least `minimumSegment`); the
    /// other worker's end shrinks to the split point. Only a range of at least
    /// `2 * minimumSegment` is split. Bytes the worker did not reach go back to ``unassigned``.
    ///
    /// - Returns: the new segment, or `nil` when nothing is left worth taking (or the id is not
    ///   in `0..<maximumConnections`).
    mutating func finished(worker: Int) -> Segment? {
        guard worker >= 0 && worker < maximumConnections else { return nil }
        if let slot = slots.removeValue(forKey: worker), slot.position < slot.end {
            Self.insert(slot.position..<slot.end, into: &unassigned)
        }
        return assign(worker, preferring: retryPositions.removeValue(forKey: worker))
    }

    /// The worker failed (a connection error): its unwritten rest goes back to ``unassigned``.
    ///
    /// Other workers that finish may take that gap; ``retry(worker:)`` gives it back to this
    /// worker when it is still free. The engine decides whether to retry; it should call
    /// ``retry(worker:)`` even when this returns `nil`, since other gaps may wait for a worker.
    /// A worker that gives up for good leaves its gap to the workers still running; when none is
    /// left (``activeWorkers`` empty, not ``isComplete``), the download cannot finish.
    ///
    /// - Returns: the rest `[position, end)` the worker would retry, or `nil` when it had nothing left.
    mutating func failed(worker: Int) -> Segment? {
        guard let slot = slots.removeValue(forKey: worker), slot.position < slot.end else { return nil }
        Self.insert(slot.position..<slot.end, into: &unassigned)
        retryPositions[worker] = slot.position
        return Segment(worker: worker, start: slot.position, end: slot.end)
    }

    /// The worker gives up the rest of its segment while it still runs (its source was set
    /// aside): its end shrinks to its position, as when another worker takes over its tail, and
    /// `[position, end)` goes back to ``unassigned`` for the others. Bytes it writes past its
    /// new end do not count (another worker writes them again).
    ///
    /// - Returns: the bytes given back.
    @discardableResult
    mutating func yieldRest(worker: Int) -> Int64 {
        guard var slot = slots[worker], slot.position < slot.end else { return 0 }
        Self.insert(slot.position..<slot.end, into: &unassigned)
        let given = slot.end - slot.position
        slot.end = slot.position
        slots[worker] = slot
        return given
    }

    /// Bytes written but found wrong (a piece that failed its check): they leave ``completed``
    /// and go back to ``unassigned`` for the workers to fetch again.
    mutating func reopen(_ range: Range<Int64>) {
        var kept: [Range<Int64>] = []
        for done in completed {
            guard done.upperBound > range.lowerBound, done.lowerBound < range.upperBound else {
                kept.append(done)
                continue
            }
            if done.lowerBound < range.lowerBound { kept.append(done.lowerBound..<range.lowerBound) }
            if done.upperBound > range.upperBound { kept.append(range.upperBound..<done.upperBound) }
            Self.insert(max(done.lowerBound, range.lowerBound)..<min(done.upperBound, range.upperBound), into: &unassigned)
        }
        completed = kept
    }

    /// A failed worker is ready to try again: like ``finished(worker:)``, preferring the gap it left.
    ///
    /// - Returns: its own rest when no other worker took it meanwhile, else any other work, else `nil`.
    mutating func retry(worker: Int) -> Segment? {
        finished(worker: worker)
    }

    private mutating func assign(_ worker: Int, preferring position: Int64?) -> Segment? {
        if !unassigned.isEmpty {
            let index = position.flatMap { position in unassigned.firstIndex { $0.contains(position) } } ?? 0
            return take(worker: worker, from: index)
        }
        var victim: (worker: Int, remaining: Int64)?
        for (id, slot) in slots where id != worker {
            let remaining = slot.end - slot.position
            if let best = victim, remaining < best.remaining || (remaining == best.remaining && id > best.worker) {
                continue
            }
            victim = (id, remaining)
        }
        guard let victim, victim.remaining / 2 >= minimumSteal, let slot = slots[victim.worker] else { return nil }
        var split = slot.position + victim.remaining / 2
        let aligned = split - split % Self.alignment
        if aligned - slot.position >= minimumSteal { split = aligned }
        slots[victim.worker]?.end = split
        slots[worker] = Slot(start: split, position: split, end: slot.end)
        return Segment(worker: worker, start: split, end: slot.end)
    }

    /// Inserts `range` into a sorted list of disjoint ranges, merging it with those it overlaps or touches.
    static func insert(_ range: Range<Int64>, into list: inout [Range<Int64>]) {
        guard !range.isEmpty else { return }
        // First range whose end reaches the new range's start (binary search: the list is sorted).
        var low = 0
        var high = list.count
        while low < high {
            let middle = (low + high) / 2
            if list[middle].upperBound < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        var end = low
        var merged = range
        while end < list.count && list[end].lowerBound <= merged.upperBound {
            merged = min(merged.lowerBound, list[end].lowerBound)..<max(merged.upperBound, list[end].upperBound)
            end += 1
        }
        list.replaceSubrange(low..<end, with: [merged])
    }

    /// Whether `range` lies inside one of the sorted, disjoint `ranges` (a binary search).
    static func covers(_ ranges: [Range<Int64>], _ range: Range<Int64>) -> Bool {
        var low = 0, high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < range.upperBound { low = middle + 1 } else { high = middle }
        }
        return low < ranges.count && ranges[low].lowerBound <= range.lowerBound && ranges[low].upperBound >= range.upperBound
    }

    /// The parts of `[0, total)` not covered by a sorted list of disjoint ranges.
    static func gaps(in ranges: [Range<Int64>], total: Int64) -> [Range<Int64>] {
        var gaps: [Range<Int64>] = []
        var position: Int64 = 0
        for range in ranges {
            if range.lowerBound > position { gaps.append(position..<range.lowerBound) }
            position = max(position, range.upperBound)
        }
        if position < total { gaps.append(position..<total) }
        return gaps
    }
}
