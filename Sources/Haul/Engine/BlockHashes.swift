import Synchronization

/// Keeps the ``BlockHash`` list of a download current as its completed bytes grow, and checks
/// a resumed partial file against the list its record holds.
///
/// Each piece (a completed range cut at block boundaries) keeps a running SHA-256: at a
/// checkpoint only the bytes added to a piece since the last one are read (from the page
/// cache, just written) and hashed, so every byte is hashed once however often the record is
/// written.
final class BlockHashes: Sendable {
    /// A piece's running hash. `@unchecked Sendable`: used only under ``state``'s lock.
    private struct Running: @unchecked Sendable {
        var range: Range<Int64>
        var digest: Digest
    }

    /// The running hashes by the start of their piece.
    private let state: Mutex<[Int64: Running]>

    /// Starts from pieces already verified (a resume), or from nothing.
    private init(running: [Int64: Running]) {
        state = Mutex(running)
    }

    /// No piece hashed yet (a new download).
    convenience init() {
        self.init(running: [:])
    }

    /// The hashes of every piece of `completed`, hashing what was added since the last call.
    ///
    /// - Parameters:
    ///   - completed: the completed ranges, all written to `descriptor`.
    ///   - descriptor: the partial file.
    /// - Returns: one hash per piece, in order.
    /// - Throws: `fileSystem` when the file cannot be read.
    func update(completed: ByteRangeSet, descriptor: Int32) throws(DownloadError) -> [BlockHash] {
        try state.withLock { (running) throws(DownloadError) -> [BlockHash] in
            var next: [Int64: Running] = [:]
            var result: [BlockHash] = []
            for piece in BlockHash.pieces(of: completed) {
                var entry: Running
                if let known = running[piece.lowerBound], known.range.upperBound <= piece.upperBound {
                    entry = known
                } else {
                    entry = Running(range: piece.lowerBound..<piece.lowerBound, digest: Digest(.sha256))
                }
                if entry.range.upperBound < piece.upperBound {
                    let added = entry.range.upperBound..<piece.upperBound
                    try FileHashing.update([entry.digest], descriptor: descriptor, range: added,
                                           bufferSize: Int(min(Int64(1 << 20), max(64 << 10, Int64(added.count)))))
                    entry.range = piece
                }
                next[piece.lowerBound] = entry
                result.append(BlockHash(range: piece, sha256: entry.digest.copy().finalize()))
            }
            running = next
            return result
        }
    }

    /// What a resume may trust of a partial file: `record` with every piece whose bytes on disk
    /// no longer match its hash (or that has no hash) taken out of its completed ranges.
    ///
    /// - Parameters:
    ///   - record: the resume record read beside the partial file.
    ///   - descriptor: the partial file.
    /// - Returns: the record to resume from, the hashes to continue with, and how many claimed
    ///   bytes were dropped.
    static func verify(_ record: ResumeRecord, descriptor: Int32) -> (record: ResumeRecord, hashes: BlockHashes, dropped: Int64) {
        var known: [Range<Int64>: [UInt8]] = [:]
        for hash in record.blockHashes { known[hash.range] = hash.sha256 }
        var kept: [Range<Int64>] = []
        var running: [Int64: Running] = [:]
        var dropped: Int64 = 0
        for piece in BlockHash.pieces(of: record.completed) {
            let digest = Digest(.sha256)
            let matches: Bool
            if let expected = known[piece] {
                do throws(DownloadError) {
                    try FileHashing.update([digest], descriptor: descriptor, range: piece)
                    matches = digest.copy().finalize() == expected
                } catch {
                    matches = false
                }
            } else {
                matches = false
            }
            if matches {
                kept.append(piece)
                running[piece.lowerBound] = Running(range: piece, digest: digest)
            } else {
                dropped += Int64(piece.count)
            }
        }
        var trusted = record
        trusted.completed = ByteRangeSet(kept)
        trusted.blockHashes = record.blockHashes.filter { running[$0.range.lowerBound]?.range == $0.range }
        return (trusted, BlockHashes(running: running), dropped)
    }
}
