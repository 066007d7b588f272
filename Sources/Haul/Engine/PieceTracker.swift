/// Which pieces of a transfer with ``PieceChecksums`` are verified, which wait for their check,
/// and which sources wrote each piece not verified yet: a pure state, kept by
/// ``SegmentedTransfer/StateMachine``.
///
/// A piece becomes ready once every byte of it is complete; it is handed out once for its check;
/// a check that fails gives it back as missing bytes, with the sources that wrote it.
struct PieceTracker: Sendable {
    let checksums: PieceChecksums
    let total: Int64
    private var verified: [Bool]
    /// Pieces handed out for their check and not reported yet.
    private(set) var checking: Set<Int> = []
    /// The sources that wrote bytes of each piece not verified yet.
    private var writers: [Int: Set<Int>] = [:]
    /// How often each piece failed its check.
    private var failures: [Int: Int] = [:]
    /// The sources each failed piece is suspected of: those that wrote it every time it failed
    /// (or, when none did, the last ones).
    private var suspects: [Int: Set<Int>] = [:]
    /// The bytes of the verified pieces.
    private var verifiedBytes = ByteRangeSet()

    /// - Parameter verified: the bytes of the pieces that passed their checks before (a resumed
    ///   record lists them); each piece they cover whole counts as verified.
    init(checksums: PieceChecksums, total: Int64, verified: [Range<Int64>]) {
        self.checksums = checksums
        self.total = total
        self.verified = Array(repeating: false, count: checksums.digests.count)
        for index in self.verified.indices where SegmentPlanner.covers(verified, checksums.range(of: index, total: total)) {
            self.verified[index] = true
            verifiedBytes.insert(checksums.range(of: index, total: total))
        }
    }

    /// The bytes of the verified pieces, merged (kept as pieces pass: the checkpoint asks for
    /// them at every record, and a file may have 262,144 pieces).
    var verifiedRanges: [Range<Int64>] { verifiedBytes.ranges }

    /// What a resume keeps of `completed`: every byte but those of the pieces complete on disk
    /// that `verified` does not cover (their check was under way when the last run ended, and
    /// nothing would check them now).
    static func trusted(_ completed: [Range<Int64>], verified: [Range<Int64>], checksums: PieceChecksums,
                        total: Int64) -> [Range<Int64>] {
        var kept = ByteRangeSet(completed)
        var unchecked = ByteRangeSet()
        for index in checksums.digests.indices {
            let range = checksums.range(of: index, total: total)
            if kept.contains(range), !SegmentPlanner.covers(verified, range) { unchecked.insert(range) }
        }
        guard !unchecked.ranges.isEmpty else { return completed }
        kept = ByteRangeSet(completed.flatMap { unchecked.gaps(within: $0) })
        return kept.ranges
    }

    /// Whether a check is under way (the transfer is not over until it is reported).
    var isChecking: Bool { !checking.isEmpty }

    /// `source` wrote `range`; returns the pieces it touched that are now complete in `completed`,
    /// neither verified nor in a check: they are handed out for their check.
    mutating func wrote(_ range: Range<Int64>, by source: Int, completed: [Range<Int64>]) -> [Int] {
        guard !range.isEmpty else { return [] }
        let first = Int(range.lowerBound / checksums.length)
        let last = Int((range.upperBound - 1) / checksums.length)
        var ready: [Int] = []
        for index in first...min(last, verified.count - 1) where !verified[index] {
            writers[index, default: []].insert(source)
            if !checking.contains(index), SegmentPlanner.covers(completed, checksums.range(of: index, total: total)) {
                checking.insert(index)
                ready.append(index)
            }
        }
        return ready
    }

    /// The check of `index` is done. A failed piece (`matched` false) gives back its bytes, to be
    /// fetched again, and the sources to blame: the one source suspected (it wrote the piece each
    /// time it failed), or, once it failed three times, every one still suspected; none before
    /// (the piece is only fetched again). A piece that passes after failing blames the suspects
    /// that did not write it this time: each wrote it every time it failed, and without them it
    /// is right.
    mutating func checked(_ index: Int, matched: Bool) -> (refetch: Range<Int64>?, blamed: Set<Int>) {
        checking.remove(index)
        let sources = writers.removeValue(forKey: index) ?? []
        if matched {
            verified[index] = true
            verifiedBytes.insert(checksums.range(of: index, total: total))
            defer { (failures[index], suspects[index]) = (nil, nil) }
            return (nil, suspects[index]?.subtracting(sources) ?? [])
        }
        failures[index, default: 0] += 1
        let common = suspects[index].map { $0.intersection(sources) } ?? sources
        let suspected = common.isEmpty ? sources : common
        suspects[index] = suspected
        let blamed = suspected.count == 1 || failures[index]! >= 3 ? suspected : []
        return (checksums.range(of: index, total: total), blamed)
    }
}
