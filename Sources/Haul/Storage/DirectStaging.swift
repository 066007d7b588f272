/// One connection's bytes gathered into whole 4 KiB blocks, so that a large transfer can write
/// them past the page cache (``PartialFile/writeDirect(_:at:)``).
///
/// A buffer index and the file offset it holds are equal modulo the block size, so a block of
/// the file is a block of memory: the bytes before the first block boundary, and at the end the
/// bytes after the last one, go through the page cache. Bytes count as written only once
/// ``flush(to:all:limit:wrote:)`` wrote them (it calls `wrote` for each run, in order).
struct DirectStaging {
    private let buffer: UnsafeMutableRawBufferPointer   // page-aligned, a whole number of blocks
    /// The file offset of `buffer[0]` (a block boundary).
    private var base: Int64 = 0
    /// The staged bytes are `buffer[low..<high]`.
    private var low = 0
    private var high = 0

    private static let block = PartialFile.directAlignment

    /// - Parameter buffer: page-aligned memory of a whole number of blocks, owned by the caller.
    init(buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= Self.block && buffer.count % Self.block == 0
                     && Int(bitPattern: buffer.baseAddress) % Self.block == 0)
        self.buffer = buffer
    }

    /// The memory the bytes are staged in.
    var memory: UnsafeMutableRawBufferPointer { buffer }

    /// The file offset just past the staged bytes (where the next bytes must go).
    var end: Int64 { base + Int64(high) }
    var isEmpty: Bool { low == high }
    var isFull: Bool { high == buffer.count }

    /// Stages as many of `bytes` (to be written at `offset`) as fit, and returns how many.
    /// `offset` must be ``end`` unless nothing is staged. Bytes already in place (read into
    /// ``freeSpace(at:)``) are not copied.
    mutating func append(_ bytes: UnsafeRawBufferPointer, at offset: Int64) -> Int {
        if isEmpty { start(at: offset) }
        precondition(offset == end, "staged bytes must be contiguous")
        let count = min(bytes.count, buffer.count - high)
        let tail = UnsafeMutableRawBufferPointer(rebasing: buffer[high..<(high + count)])
        if UnsafeRawPointer(tail.baseAddress) != bytes.baseAddress {
            tail.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
        }
        high += count
        return count
    }

    /// The memory where the bytes for file offset `offset` (``end``, or any when nothing is
    /// staged) go: a reader may receive them there and ``append(_:at:)`` them without a copy.
    mutating func freeSpace(at offset: Int64) -> UnsafeMutableRawBufferPointer {
        if isEmpty { start(at: offset) }
        precondition(offset == end, "staged bytes must be contiguous")
        return UnsafeMutableRawBufferPointer(rebasing: buffer[high...])
    }

    /// This full buffer and `next` as one, when `next` holds the bytes that follow in the file
    /// and its memory follows this one's (neighbours in a ring's region): one write for both.
    func joined(with next: DirectStaging) -> DirectStaging? {
        guard isFull, next.low == 0, next.base == end,
              next.buffer.baseAddress == buffer.baseAddress.map({ $0 + buffer.count }) else { return nil }
        var joined = DirectStaging(buffer: UnsafeMutableRawBufferPointer(start: buffer.baseAddress,
                                                                         count: buffer.count + next.buffer.count))
        joined.base = base
        joined.low = low
        joined.high = buffer.count + next.high
        return joined
    }

    /// Empties the buffer for bytes from `offset` on (its block lands on a block of memory).
    private mutating func start(at offset: Int64) {
        base = offset - offset % Int64(Self.block)
        low = Int(offset - base)
        high = low
    }

    /// Writes the staged whole blocks direct (the bytes before the first of them through the
    /// page cache); with `all`, the bytes after the last one through the page cache too, else
    /// they stay staged. Nothing at or past `limit()` (the connection's end, asked before each
    /// write: it shrinks when another connection takes over the rest) is written: those bytes
    /// are dropped, and the connection that took them over writes them.
    ///
    /// Why the limit: past its end a connection would write again what the connection that took
    /// over writes, and could write direct a block that one writes a part of. A part written
    /// through the cache reads the rest of its block from disk first; the file's
    /// ``DirectWriteGate`` keeps such a write from meeting a direct write under way (a take-over
    /// made while the old owner's direct write across the new end was under way).
    mutating func flush(to file: PartialFile, all: Bool, limit: () -> Int64,
                        wrote: (UnsafeRawBufferPointer, Int64) throws(DownloadError) -> Void) throws(DownloadError) {
        let block = Self.block
        clip(to: limit())
        let firstBoundary = min(high, (low + block - 1) / block * block)
        if firstBoundary > low {
            try writeThroughCache(low..<firstBoundary, to: file, wrote: wrote)
            clip(to: limit())
        }
        let lastBoundary = max(low, high / block * block)
        if lastBoundary > low {
            let blocks = UnsafeRawBufferPointer(rebasing: buffer[low..<lastBoundary])
            let done = try file.writeDirect(blocks, at: base + Int64(low))
            if done < blocks.count {   // refused: the page cache takes the rest
                try file.write(UnsafeRawBufferPointer(rebasing: blocks[done...]), at: base + Int64(low + done))
            }
            let at = base + Int64(low)
            low = lastBoundary   // before `wrote`, which may throw: the bytes are written either way
            try wrote(blocks, at)
            clip(to: limit())
        }
        if all, high > low {
            try writeThroughCache(low..<high, to: file, wrote: wrote)
        }
        if low > 0 {   // keep the rest (less than a block) at the start of the buffer
            let kept = high - low
            let start = low / block * block
            if kept > 0 {
                UnsafeMutableRawBufferPointer(rebasing: buffer[(low - start)..<(high - start)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[low..<high]))
            }
            base += Int64(start)
            low -= start
            high -= start
        }
    }

    /// Drops the staged bytes at or past the file offset `limit`.
    private mutating func clip(to limit: Int64) {
        let index = limit - base
        if index < Int64(high) { high = max(low, Int(max(0, index))) }
    }

    private mutating func writeThroughCache(_ range: Range<Int>, to file: PartialFile,
                                            wrote: (UnsafeRawBufferPointer, Int64) throws(DownloadError) -> Void) throws(DownloadError) {
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[range])
        try file.write(bytes, at: base + Int64(range.lowerBound))
        low = range.upperBound   // before `wrote`, which may throw: the bytes are written either way
        try wrote(bytes, base + Int64(range.lowerBound))
    }
}
