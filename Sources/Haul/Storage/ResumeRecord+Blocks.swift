/// The SHA-256 of one piece of a partial file's completed bytes, kept in the resume record so
/// a resume can tell whether the bytes on disk are still the ones that were downloaded.
///
/// The completed ranges are cut at every multiple of ``blockSize``; each piece is hashed on
/// its own (see ``pieces(of:)``). A whole block is hashed once; the piece a connection is still
/// writing grows, and is hashed again at each checkpoint (at most one block per connection).
struct BlockHash: Sendable, Equatable {
    /// Pieces never cross a multiple of this: 4 MiB.
    static let blockSize: Int64 = 4 << 20

    /// The bytes hashed, within one block.
    var range: Range<Int64>
    /// Their SHA-256.
    var sha256: [UInt8]

    /// The completed ranges cut at every multiple of ``blockSize``, in order.
    static func pieces(of completed: ByteRangeSet) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        for range in completed.ranges {
            var start = range.lowerBound
            while start < range.upperBound {
                let blockEnd = (start / blockSize + 1) * blockSize
                let end = min(blockEnd, range.upperBound)
                result.append(start..<end)
                start = end
            }
        }
        return result
    }

    /// `first-last:hex,…` (inclusive ends), as the record's `block-hashes` line holds them.
    static func encode(_ hashes: [BlockHash]) -> String {
        hashes.map { "\($0.range.lowerBound)-\($0.range.upperBound - 1):\(Hex.encode($0.sha256))" }.joined(separator: ",")
    }

    /// The inverse of ``encode(_:)``: `nil` unless every entry is well formed, within `length`,
    /// within one block, and after the one before it. An empty text is an empty list.
    static func decode(_ text: String, length: Int64) -> [BlockHash]? {
        guard !text.isEmpty else { return [] }
        var result: [BlockHash] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = entry.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[1].utf8.count == 64, parts[1].lowercased() == parts[1],
                  let digest = Hex.decode(String(parts[1])) else { return nil }
            let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]),
                  String(first) == bounds[0], String(last) == bounds[1],
                  first >= 0, first <= last, last < length, first / blockSize == last / blockSize else { return nil }
            if let previous = result.last, first < previous.range.upperBound { return nil }
            result.append(BlockHash(range: first..<(last + 1), sha256: digest))
        }
        return result
    }
}
