import HaulCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads of a file past the page cache (`O_DIRECT`), for bytes that were written past it
/// (``PartialFile/writeDirect(_:at:)``): a read through the cache would bring them in from the
/// disk in small read-ahead steps, into page-cache pages allocated for the occasion.
enum DirectReads {
    /// The alignment of a direct read's offset, length and memory (as for direct writes).
    static let alignment = Int64(PartialFile.directAlignment)

    /// Reads from `range.lowerBound` as much of `range` as `buffer` holds, in whole aligned blocks.
    ///
    /// - Parameters:
    ///   - descriptor: a file open with `O_DIRECT` for reading.
    ///   - range: the bytes wanted.
    ///   - buffer: aligned memory of at least two blocks.
    /// - Returns: the first bytes of `range` (at least one), within `buffer`; `nil` when the file
    ///   takes no direct reads (`EINVAL`: the caller reads through the cache instead).
    /// - Throws: `fileSystem` when the read fails or the file ends before `range` does.
    static func read(_ descriptor: Int32, _ range: Range<Int64>,
                     into buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> UnsafeRawBufferPointer? {
        let start = range.lowerBound / alignment * alignment
        let end = min((range.upperBound + alignment - 1) / alignment * alignment,
                      start + Int64(buffer.count) / alignment * alignment)
        var done = 0
        while start + Int64(done) < end {
            let count = pread(descriptor, buffer.baseAddress! + done, Int(end - start) - done, off_t(start) + off_t(done))
            if count < 0 {
                if errno == EINTR { continue }
                if errno == EINVAL { return nil }
                throw DownloadError(.fileSystem, "cannot read at offset \(start + Int64(done)) to verify it: \(errnoText())")
            }
            done += count
            if count == 0 || Int64(count) % alignment != 0 { break }   // the end of the file
        }
        let skip = Int(range.lowerBound - start)
        let available = min(Int64(done - skip), Int64(range.count))
        guard available > 0 else {
            throw DownloadError(.fileSystem, "the file ends at \(start + Int64(done)), before \(range.upperBound)")
        }
        return UnsafeRawBufferPointer(rebasing: buffer[skip..<(skip + Int(available))])
    }
}

/// Reads a range of a file past the page cache on a thread of its own, a few chunks ahead of
/// the caller, which takes them in order (``next()``): the disk reads while the caller hashes.
///
/// Unchecked Sendable: the memory of `slots` (raw pointers, which the compiler cannot follow)
/// belongs to the reader until a chunk is handed over, then to the caller until its next ``next()``.
final class DirectReadAhead: @unchecked Sendable {
    private let descriptor: Int32
    private let range: Range<Int64>
    private let slots: [UnsafeMutableRawBufferPointer]
    private let state: ConditionLock<State>

    /// What the reader and the caller share.
    private struct State {
        /// The chunks read, each in its slot.
        var chunks: [Result<UnsafeRawBufferPointer, DownloadError>?]
        /// Chunks read.
        var read = 0
        /// Chunks the caller has given back.
        var taken = 0
        var handedOut = false
        var stopping = false
        var ended = false
    }

    /// Starts reading `range` of `descriptor` (open with `O_DIRECT`) into `memory` (aligned, at
    /// least two `chunk`s; the caller's until ``end()`` returned). When the system gives no
    /// thread, nothing is read ahead: ``next()`` returns `nil` at once and the caller reads the
    /// range through the cache.
    init(descriptor: Int32, range: Range<Int64>, memory: UnsafeMutableRawBufferPointer, chunk: Int, threads: ThreadPool) {
        precondition(chunk % Int(DirectReads.alignment) == 0 && memory.count >= 2 * chunk)
        self.descriptor = descriptor
        self.range = range
        slots = (0..<(memory.count / chunk)).map { UnsafeMutableRawBufferPointer(rebasing: memory[($0 * chunk)..<(($0 + 1) * chunk)]) }
        state = ConditionLock(State(chunks: Array(repeating: nil, count: slots.count)))
        do throws(ResourceError) {
            try threads.run(name: "haul-read-ahead") { [self] in readAll() }
        } catch {
            state.withLock { $0.ended = true }
        }
    }

    /// The next bytes of the range, in order (the bytes handed out before go back); `nil` once
    /// the range is read, or where the file takes no direct reads (the caller then reads the
    /// rest through the cache).
    ///
    /// - Throws: the reader's failure (`fileSystem`).
    func next() throws(DownloadError) -> UnsafeRawBufferPointer? {
        let gaveBack = state.withLock { state -> Bool in
            guard state.handedOut else { return false }
            state.taken += 1
            state.handedOut = false
            return true
        }
        if gaveBack { state.broadcast() }   // the reader may wait for the slot
        return try state.withLock(waitingWhile: { $0.read == $0.taken && !$0.ended }) {
            (state: inout State) throws(DownloadError) -> UnsafeRawBufferPointer? in
            guard state.read > state.taken, let chunk = state.chunks[state.taken % slots.count] else { return nil }
            state.handedOut = true
            return try chunk.get()
        }
    }

    /// Stops the reader and waits for it: the memory is the caller's again. Idempotent.
    func end() {
        state.withLockBroadcasting { $0.stopping = true }
        state.wait(until: nil) { !$0.ended }
    }

    /// The reader thread: fills the free slots in order until the range is read, a read
    /// fails or is refused, or ``end()``.
    private func readAll() {
        var position = range.lowerBound
        var index = 0
        while position < range.upperBound {
            let slot = state.withLock(waitingWhile: { !$0.stopping && index - $0.taken >= slots.count }) { state in
                state.stopping ? nil : slots[index % slots.count]
            }
            guard let slot else { break }
            let chunk: Result<UnsafeRawBufferPointer, DownloadError>
            do throws(DownloadError) {
                guard let bytes = try DirectReads.read(descriptor, position..<range.upperBound, into: slot) else { break }
                chunk = .success(bytes)
                position += Int64(bytes.count)
            } catch {
                chunk = .failure(error)
            }
            state.withLockBroadcasting { state in
                state.chunks[index % slots.count] = chunk
                state.read = index + 1
            }
            index += 1
            if case .failure = chunk { break }
        }
        state.withLockBroadcasting { $0.ended = true }
    }
}
