/// A set of byte offsets kept as disjoint, sorted, merged half-open ranges.
///
/// Used for the bytes of a partial file that are durably on disk. The ranges are always in
/// normal form: sorted by start, none empty, and no two overlapping or touching (`0..<10` and
/// `10..<20` are stored as `0..<20`), so two sets holding the same bytes are equal.
struct ByteRangeSet: Sendable, Equatable {
    /// The ranges, in normal form.
    private(set) var ranges: [Range<Int64>]

    /// Creates a set holding every byte of `ranges` (in any order, overlapping or not).
    ///
    /// - Parameter ranges: the ranges; empty ones are ignored.
    init(_ ranges: [Range<Int64>] = []) {
        var sorted = ranges.filter { !$0.isEmpty }
        sorted.sort { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int64>] = []
        merged.reserveCapacity(sorted.count)
        for range in sorted {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        self.ranges = merged
    }

    /// Adds every byte of `range`, merging it with the ranges it overlaps or touches.
    ///
    /// O(log n + k), where k is the number of ranges merged.
    ///
    /// - Parameter range: the bytes to add; an empty range changes nothing.
    mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        // The first range that ends at or after the new start touches or follows it...
        let first = firstIndex { $0.upperBound >= range.lowerBound }
        // ...and every range from there that starts at or before the new end merges with it.
        let end = firstIndex(from: first) { $0.lowerBound > range.upperBound }
        if first == end {
            ranges.insert(range, at: first)
            return
        }
        let lower = min(range.lowerBound, ranges[first].lowerBound)
        let upper = max(range.upperBound, ranges[end - 1].upperBound)
        ranges.replaceSubrange(first..<end, with: CollectionOfOne(lower..<upper))
    }

    /// The bytes of `bounds` that are not in the set, as sorted half-open ranges.
    ///
    /// - Parameter bounds: the span to look at (for a file, `0..<length`).
    /// - Returns: the missing ranges within `bounds`, in order; `[]` when all are present.
    func gaps(within bounds: Range<Int64>) -> [Range<Int64>] {
        guard !bounds.isEmpty else { return [] }
        var gaps: [Range<Int64>] = []
        var cursor = bounds.lowerBound
        var index = firstIndex { $0.upperBound > bounds.lowerBound }
        while index < ranges.count, ranges[index].lowerBound < bounds.upperBound {
            let range = ranges[index]
            if range.lowerBound > cursor { gaps.append(cursor..<range.lowerBound) }
            cursor = max(cursor, range.upperBound)
            index += 1
        }
        if cursor < bounds.upperBound { gaps.append(cursor..<bounds.upperBound) }
        return gaps
    }

    /// Whether every byte of `range` is in the set (always true for an empty range).
    ///
    /// - Parameter range: the bytes to look for.
    /// - Returns: `true` when one stored range covers all of `range`.
    func contains(_ range: Range<Int64>) -> Bool {
        guard !range.isEmpty else { return true }
        let index = firstIndex { $0.upperBound > range.lowerBound }
        guard index < ranges.count else { return false }
        return ranges[index].lowerBound <= range.lowerBound && ranges[index].upperBound >= range.upperBound
    }

    /// The number of bytes in the set.
    var byteCount: Int64 {
        ranges.reduce(0) { $0 + ($1.upperBound - $1.lowerBound) }
    }

    /// The first index (from `start`) whose range satisfies `predicate`, by binary search;
    /// `predicate` must be false for a prefix of the ranges and true for the rest.
    private func firstIndex(from start: Int = 0, where predicate: (Range<Int64>) -> Bool) -> Int {
        var low = start
        var high = ranges.count
        while low < high {
            let middle = low + (high - low) / 2
            if predicate(ranges[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
