/// The CRC-32C of one piece of a partial file's completed bytes, kept in the resume record so
/// a resume can tell whether the bytes on disk are still the ones that were downloaded.
///
/// A piece is a run of bytes one connection wrote in order, never crossing a multiple of
/// ``blockSize`` (so at most a few pieces per 4 MiB block). The checksum guards against
/// accidents (a file edited while paused, a disk error), not against an adversary: that is what
/// `--checksum` and server digests are for. CRC-32C, not SHA-256: it is computed as the bytes
/// arrive, with the CPU's CRC instructions, for a tenth of the cost of a copy (SHA-256 of every
/// byte, re-read at each checkpoint, doubled the CPU time of a 2 GiB download).
struct BlockHash: Sendable, Equatable {
    /// Pieces never cross a multiple of this: 4 MiB.
    static let blockSize: Int64 = 4 << 20

    /// The bytes checked, within one block.
    var range: Range<Int64>
    /// Their CRC-32C.
    var crc32c: UInt32

    /// The completed ranges cut at every multiple of ``blockSize``, in order (the coarsest
    /// pieces a record can hold for them).
    static func pieces(of completed: ByteRangeSet) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        for range in completed.ranges {
            var start = range.lowerBound
            while start < range.upperBound {
                let end = min((start / blockSize + 1) * blockSize, range.upperBound)
                result.append(start..<end)
                start = end
            }
        }
        return result
    }

    /// `first-last:crc,…` (inclusive ends, the CRC as 8 lowercase hex digits), as the record's
    /// `block-hashes` line holds them.
    static func encode(_ hashes: [BlockHash]) -> String {
        hashes.map { "\($0.range.lowerBound)-\($0.range.upperBound - 1):\(hex8($0.crc32c))" }.joined(separator: ",")
    }

    private static func hex8(_ value: UInt32) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: 8 - text.count) + text
    }

    /// The inverse of ``encode(_:)``: `nil` unless every entry is well formed, within `length`,
    /// within one block, and after the one before it. An empty text is an empty list.
    static func decode(_ text: String, length: Int64) -> [BlockHash]? {
        guard !text.isEmpty else { return [] }
        var result: [BlockHash] = []
        for entry in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = entry.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[1].utf8.count == 8, parts[1].lowercased() == parts[1],
                  let crc = UInt32(parts[1], radix: 16) else { return nil }
            let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = Int64(bounds[0]), let last = Int64(bounds[1]),
                  String(first) == bounds[0], String(last) == bounds[1],
                  first >= 0, first <= last, last < length, first / blockSize == last / blockSize else { return nil }
            if let previous = result.last, first < previous.range.upperBound { return nil }
            result.append(BlockHash(range: first..<(last + 1), crc32c: crc))
        }
        return result
    }
}
