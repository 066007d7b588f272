import HaulCore

/// Writes one connection's body slices into the partial file, from `start` up to an end that
/// may shrink while it writes (another connection took over the rest), and accounts for each
/// run of bytes written: its checksum piece, the progress, the hasher, the rate limit, and the
/// report to the transfer's state (which answers with the end as it is now).
///
/// Without a rate limit (which meters the bytes as they arrive), the bytes of a large file are
/// gathered into whole blocks and written past the page cache (``DirectStaging``): copying a
/// large file into fresh page-cache pages is about half of the transfer's CPU time, and the
/// checkpoints' syncs would then write those pages back. Full buffers are written behind the
/// reader (``WriteBehind``), which goes on receiving meanwhile; their bytes are accounted for
/// here, in order, once written.
final class SegmentWriter {
    /// What the writer reports after each run of bytes: the position reached, the pieces it
    /// finished and the one it is growing. Returns where the connection must stop now.
    typealias Report = (_ position: Int64, _ finished: [BlockHash], _ grown: BlockHash?) throws(DownloadError) -> Int64

    private let file: PartialFile
    private let progress: ProgressReporter
    private let hasher: StreamHasher?
    private let limiter: RateLimiter?
    private let abort: CancellationSignal
    private let report: Report
    /// The ring of buffers written behind the reader, when the writes are direct.
    private let ring: WriteBehind?
    /// The buffer being filled.
    private var staging: DirectStaging?
    private let flushInterval: Duration
    private var lastFlush = ContinuousClock.now

    /// The next byte to receive.
    private(set) var position: Int64
    /// Where the connection stops (shrinks when another connection takes over the rest).
    private(set) var end: Int64
    /// The run of bytes being written within one block, and the runs finished since the last report.
    private var piece: BlockHash?
    private var finishedPieces: [BlockHash] = []

    /// - Parameters:
    ///   - ring: the buffers for direct writes, or `nil` to write every slice through the page
    ///     cache; ``finish(after:)`` gives them back.
    ///   - flushInterval: on a slow link, staged bytes are written at least this often, so a
    ///     checkpoint can claim them.
    init(file: PartialFile, from start: Int64, to end: Int64, progress: ProgressReporter, hasher: StreamHasher?,
         limiter: RateLimiter?, abort: CancellationSignal, ring: WriteBehind?,
         flushInterval: Duration, report: @escaping Report) {
        self.file = file
        self.position = start
        self.end = end
        self.progress = progress
        self.hasher = hasher
        self.limiter = limiter
        self.abort = abort
        self.ring = ring
        self.flushInterval = flushInterval
        self.report = report
    }

    /// Takes one slice of the body; returns whether more is wanted.
    func take(_ slice: UnsafeRawBufferPointer) throws(DownloadError) -> Bool {
        let usable = Int(min(Int64(slice.count), end - position))
        guard usable > 0 else { return position < end }
        let bytes = UnsafeRawBufferPointer(rebasing: slice[0..<usable])
        if ring != nil {
            try stage(bytes)
            return position < end
        }
        // No writeback hints here: the checkpoints' fdatasync streams the data out, and a hint
        // can block this reader when the disk queue is full.
        try file.write(bytes, at: position)
        try account(bytes, at: position)
        position += Int64(usable)
        if let limiter, !limiter.consume(usable, sleep: { [abort] in abort.sleep(for: .milliseconds(Int64($0 * 1000))) }) {
            throw DownloadError(.cancelled, "cancelled")
        }
        return position < end
    }

    /// Where the connection may receive its next bytes so that ``take(_:)`` copies nothing: the
    /// free part of the buffer being filled, up to the connection's end (`nil`: no such buffer).
    func freeSpace() -> UnsafeMutableRawBufferPointer? {
        guard staging != nil, position < end else { return nil }
        let space = staging!.freeSpace(at: position)
        return UnsafeMutableRawBufferPointer(rebasing: space[0..<Int(min(Int64(space.count), end - position))])
    }

    /// Writes what is still staged: at the end, and after a `failure` that was not the disk's
    /// (the bytes that arrived before it are good). Gives the ring's buffers back.
    func finish(after failure: DownloadError? = nil) throws(DownloadError) {
        guard let ring else { return }
        defer {
            ring.close()
            staging = nil
        }
        if let failure, failure.code == .diskFull || failure.code == .fileSystem { return }
        try writeStaged(all: true)
    }

    /// Stages bytes that arrived at `position`, handing each full buffer to the ring; writes
    /// everything at the end, and on a slow link what it can at least every flush interval (all
    /// but a last partial block).
    private func stage(_ bytes: UnsafeRawBufferPointer) throws(DownloadError) {
        var taken = 0
        while taken < bytes.count {
            if staging == nil { try startBuffer() }
            taken += staging!.append(UnsafeRawBufferPointer(rebasing: bytes[taken...]), at: position + Int64(taken))
            if staging!.isFull {
                ring!.handOver(staging!)
                staging = nil
            }
        }
        position += Int64(bytes.count)
        if position >= end {
            try writeStaged(all: true)
            return
        }
        if staging == nil { try startBuffer() }   // so the next bytes can be received into it
        if staging.map({ !$0.isEmpty }) ?? false, ContinuousClock.now - lastFlush >= flushInterval {
            try writeStaged(all: false)
            lastFlush = ContinuousClock.now
        }
    }

    /// Accounts for the bytes the ring wrote meanwhile, then takes its next buffer.
    private func startBuffer() throws(DownloadError) {
        let buffer = try ring!.nextBuffer { (run) throws(DownloadError) in try account(run.bytes, at: run.offset) }
        staging = DirectStaging(buffer: buffer)
    }

    /// Waits for the ring's writes (accounting for them), then writes the buffer being filled
    /// here: its whole blocks, and with `all` the rest too.
    private func writeStaged(all: Bool) throws(DownloadError) {
        try ring!.collect { (run) throws(DownloadError) in try account(run.bytes, at: run.offset) }
        try staging?.flush(to: file, all: all, limit: { end }, wrote: account)
    }

    /// Bytes written at `start` (in order): the hasher, their checksum pieces, the progress, the report.
    private func account(_ bytes: UnsafeRawBufferPointer, at start: Int64) throws(DownloadError) {
        hasher?.offer(bytes, at: start)
        var done = 0
        while done < bytes.count {
            let at = start + Int64(done)
            let blockEnd = (at / BlockHash.blockSize + 1) * BlockHash.blockSize
            let count = Int(min(Int64(bytes.count - done), blockEnd - at))
            if let current = piece, current.range.upperBound != at || at % BlockHash.blockSize == 0 {
                finishedPieces.append(current)
                piece = nil
            }
            var current = piece ?? BlockHash(range: at..<at, crc32c: 0)
            current.crc32c = BlockHashes.crc(current.crc32c, UnsafeRawBufferPointer(rebasing: bytes[done..<(done + count)]))
            current.range = current.range.lowerBound..<(at + Int64(count))
            piece = current
            done += count
        }
        progress.add(bytes.count)
        end = try report(start + Int64(bytes.count), finishedPieces, piece)
        finishedPieces.removeAll(keepingCapacity: true)
    }
}
