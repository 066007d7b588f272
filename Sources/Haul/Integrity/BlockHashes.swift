import CHaulSys
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// The CRC-32C of every piece of a download's completed bytes (see ``BlockHash``), kept current
/// by the connections as they write, and checked against a resumed partial file.
///
/// A connection computes the CRC of each slice it writes from the receive buffer (no re-read),
/// extends its current piece with it, and publishes the piece with ``publish(_:)`` under the
/// segment planner's lock, in the same step that marks the bytes complete: a record never holds
/// a checksum for bytes it does not claim, nor claims bytes without one.
final class BlockHashes: Sendable {
    /// The pieces by their first byte.
    private let pieces: SharedStateLock<[Int64: BlockHash]>

    private init(pieces: [Int64: BlockHash]) {
        self.pieces = SharedStateLock(pieces)
    }

    /// No piece yet (a new download).
    convenience init() {
        self.init(pieces: [:])
    }

    /// Records `piece` (new, or grown from a piece with the same first byte).
    func publish(_ piece: BlockHash) {
        pieces.withLock { $0[piece.range.lowerBound] = piece }
    }

    /// Every piece, in order.
    var all: [BlockHash] {
        pieces.withLock { $0.values.sorted { $0.range.lowerBound < $1.range.lowerBound } }
    }

    /// The CRC-32C of `bytes` continued from `crc` (0 to start).
    static func crc(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        return haul_crc32c(crc, base, bytes.count)
    }

    /// The CRC-32C of `bytes`.
    static func crc(of bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { crc(0, $0) }
    }

    /// What a resume may trust of a partial file: `record` with every completed byte that is not
    /// covered by a piece whose bytes on disk still match its checksum taken out. The bytes of
    /// pieces that passed their piece checksums (``ResumeRecord/verifiedPieces``) are trusted
    /// without being read again.
    ///
    /// - Returns: the record to resume from, the pieces to continue with, and how many claimed
    ///   bytes were dropped.
    static func verify(_ record: ResumeRecord, descriptor: Int32) -> (record: ResumeRecord, hashes: BlockHashes, dropped: Int64) {
        var kept: [Int64: BlockHash] = [:]
        var trusted = ByteRangeSet()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 20, alignment: 4096)
        defer { buffer.deallocate() }
        for piece in record.blockHashes where record.completed.contains(piece.range) {
            if record.verifiedPieces.contains(piece.range)
                || crcOnDisk(piece.range, descriptor: descriptor, buffer: buffer) == piece.crc32c {
                kept[piece.range.lowerBound] = piece
                trusted.insert(piece.range)
            }
        }
        var result = record
        let dropped = record.completed.byteCount - trusted.byteCount
        result.completed = trusted
        result.blockHashes = kept.values.sorted { $0.range.lowerBound < $1.range.lowerBound }
        return (result, BlockHashes(pieces: kept), dropped)
    }

    /// The CRC-32C of `range` of the file; `nil` when it cannot be read whole.
    private static func crcOnDisk(_ range: Range<Int64>, descriptor: Int32, buffer: UnsafeMutableRawBufferPointer) -> UInt32? {
        var crc: UInt32 = 0
        var offset = range.lowerBound
        while offset < range.upperBound {
            let want = Int(min(Int64(buffer.count), range.upperBound - offset))
            let n = pread(descriptor, buffer.baseAddress, want, off_t(offset))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            crc = Self.crc(crc, UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            offset += Int64(n)
        }
        return crc
    }
}
