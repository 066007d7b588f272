import Foundation
import HaulCore
import HaulTestSupport
import Testing
@testable import Haul

/// A connection's direct writes made behind its reader (``WriteBehind``): the reader goes on
/// while a write is under way, stops only when the ring is full, and the file gets every byte,
/// reported written in order, exactly once.
@Suite("Write behind the reader", .throttled, .timeLimit(.minutes(1)))
struct WriteBehindTests {
    static let bufferSize = 64 << 10
    static let depth = 3

    /// A reader feeding `content` to a ``SegmentWriter`` in 16 KiB slices on a thread of its own.
    final class Reader: @unchecked Sendable {   // `writer` is only used on the reader's thread, then after `finished`
        let writer: SegmentWriter
        let content: [UInt8]
        /// Bytes offered to the writer so far (the last slice's take may still be under way),
        /// and whether the reader is done (with its error, if any).
        let taken = ConditionLock<(count: Int, finished: Bool, error: DownloadError?)>((0, false, nil))
        let reports = SharedStateLock<[Int64]>([])

        init(file: PartialFile, content: [UInt8], ring: WriteBehind) {
            self.content = content
            let reports = self.reports
            let total = Int64(content.count)
            writer = SegmentWriter(file: file, from: 0, to: total,
                                   progress: ProgressReporter(events: EventQueue(), interval: .seconds(1), ticker: ProgressTicker()),
                                   hasher: nil, limiter: nil, abort: CancellationSignal(), ring: ring,
                                   flushInterval: .seconds(3600), report: { position, _, _ in
                reports.withLock { $0.append(position) }
                return total
            })
        }

        /// Feeds `content[sent..<upTo]` on the calling thread.
        func feed(from sent: Int, upTo end: Int) throws {
            var sent = sent
            while sent < end {
                let count = min(16 << 10, end - sent)
                taken.withLockBroadcasting { $0.count = sent + count }
                _ = try content[sent..<(sent + count)].withUnsafeBytes { try writer.take($0) }
                sent += count
            }
        }

        /// Feeds the rest from `sent` on a thread of its own, then finishes.
        func start(on threads: ThreadPool, from sent: Int = 0) {
            threads.runInTest(name: "test-reader") { [self] in
                var failed: DownloadError?
                do {
                    try feed(from: sent, upTo: content.count)
                    try writer.finish()
                } catch {
                    let failure = error as? DownloadError ?? DownloadError(.fileSystem, "\(error)")
                    try? writer.finish(after: failure)
                    failed = failure
                }
                let failure = failed
                taken.withLockBroadcasting { $0.finished = true; $0.error = failure }
            }
        }

        func waitUntilFinished() -> DownloadError? {
            taken.wait(until: nil) { !$0.finished }
            return taken.withLock { $0.error }
        }
    }

    static func pattern(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
    }

    static func makeFile(in dir: URL) throws -> PartialFile {
        try PartialFile.createEmpty("w.bin.part", in: try DownloadTarget(destination: .directory(dir)).folder)
    }

    /// Waits for `reader`, then expects the file to hold its content, reported written once
    /// each, in order, up to the end.
    static func expectLanded(_ reader: Reader, in partial: PartialFile, _ dir: URL) throws {
        #expect(reader.waitUntilFinished() == nil)
        partial.closeKeeping()
        #expect(try Data(contentsOf: dir.appendingPathComponent("w.bin.part")) == Data(reader.content))
        let reports = reader.reports.withLock { $0 }
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $0 < $1 })
        #expect(reports.last == Int64(reader.content.count))
    }

    /// Waits (without a deadline: the suite's time limit ends a hang) until `condition` holds.
    static func waitFor(_ condition: () -> Bool) {
        while !condition() { usleep(1_000) }
    }

    @Test("while the writer is held, the reader fills the ring's other buffers, then waits; opened, every byte lands in order")
    func theReaderGoesOnWhileAWriteIsHeld() throws {
        try withTemporaryDirectory { dir in
            let partial = try Self.makeFile(in: dir)
            let gate = ConditionLock(false)
            let writesStarted = ConditionLock(0)
            let writeSizes = SharedStateLock<[Int]>([])
            let buffers = ReceiveBuffers()
            let ring = WriteBehind(depth: Self.depth, bufferSize: Self.bufferSize, buffers: buffers,
                                   threads: ThreadPool(maximumThreads: 2)) { (staging, wrote) throws(DownloadError) in
                writesStarted.withLockBroadcasting { $0 += 1 }
                writeSizes.withLock { $0.append(staging.memory.count) }
                gate.wait(until: nil) { !$0 }
                try staging.flush(to: partial, all: true, limit: { .max }, wrote: wrote)
            }
            let content = Self.pattern(Self.bufferSize * 8 + 1000)
            let reader = Reader(file: partial, content: content, ring: ring)

            // Given the first buffer's write held on the gate,
            try reader.feed(from: 0, upTo: Self.bufferSize)
            writesStarted.wait(until: nil) { $0 == 0 }
            // when the reader goes on, then it fills the next buffer while that write is held,
            try reader.feed(from: Self.bufferSize, upTo: 2 * Self.bufferSize)
            #expect(writesStarted.withLock { $0 } == 1)
            // and with the ring full it waits (inside the take of the third buffer's last slice).
            reader.start(on: ThreadPool(maximumThreads: 1), from: 2 * Self.bufferSize)
            Self.waitFor { ring.readerWaits }
            #expect(reader.taken.withLock { $0.count } == Self.bufferSize * Self.depth)
            #expect(writesStarted.withLock { $0 } == 1)
            #expect(reader.reports.withLock { $0.isEmpty })   // nothing counts as written yet

            // When the gate opens, then every byte is in the file, reported once each, in order.
            gate.withLockBroadcasting { $0 = true }
            try Self.expectLanded(reader, in: partial, dir)
            #expect(buffers.idleCount == 1)   // the ring's memory went back
            // The two buffers queued behind the held one were written as one.
            #expect(writeSizes.withLock { $0.prefix(2) } == [Self.bufferSize, 2 * Self.bufferSize])
        }
    }

    @Test("two writers: buffers written after a held one are reported only once it is, in order")
    func laterWritesWaitForTheHeldOne() throws {
        try withTemporaryDirectory { dir in
            let partial = try Self.makeFile(in: dir)
            let gate = ConditionLock(false)
            let firstHeld = ConditionLock(false)
            let laterWritten = ConditionLock(0)   // bytes written by writes not starting at 0
            let ring = WriteBehind(depth: 8, bufferSize: Self.bufferSize, buffers: ReceiveBuffers(),
                                   threads: ThreadPool(maximumThreads: 3)) { (staging, wrote) throws(DownloadError) in
                let first = staging.end <= Int64(staging.memory.count)   // this write starts at byte 0
                if first {
                    firstHeld.withLockBroadcasting { $0 = true }
                    gate.wait(until: nil) { !$0 }
                }
                try staging.flush(to: partial, all: true, limit: { .max }, wrote: wrote)
                if !first { laterWritten.withLockBroadcasting { $0 += staging.memory.count } }
            }
            #expect(ring.writers == 2)
            let content = Self.pattern(Self.bufferSize * 12 + 300)
            let reader = Reader(file: partial, content: content, ring: ring)

            // Given the write of the first buffer held, and the next three written by the other writer,
            try reader.feed(from: 0, upTo: Self.bufferSize)
            firstHeld.wait(until: nil) { !$0 }
            try reader.feed(from: Self.bufferSize, upTo: 4 * Self.bufferSize)
            laterWritten.wait(until: nil) { $0 < 3 * Self.bufferSize }
            // when the reader takes its next buffer (collecting what is written),
            try reader.feed(from: 4 * Self.bufferSize, upTo: 5 * Self.bufferSize)
            // then nothing is reported written: the first buffer's bytes are not on disk yet.
            #expect(reader.reports.withLock { $0.isEmpty })

            // When the first write ends, every byte lands and the reports come in order.
            gate.withLockBroadcasting { $0 = true }
            reader.start(on: ThreadPool(maximumThreads: 1), from: 5 * Self.bufferSize)
            try Self.expectLanded(reader, in: partial, dir)
        }
    }

    @Test("with no thread free for the writer, the reader writes the ring's buffers itself")
    func theReaderWritesWhenNoThreadIsFree() throws {
        try withTemporaryDirectory { dir in
            let partial = try Self.makeFile(in: dir)
            let threads = ThreadPool(maximumThreads: 1)
            let gate = ConditionLock(false)
            threads.runInTest(name: "test-busy") { gate.wait(until: nil) { !$0 } }   // the pool's only thread
            defer { gate.withLockBroadcasting { $0 = true } }
            let ring = WriteBehind(depth: Self.depth, bufferSize: Self.bufferSize, buffers: ReceiveBuffers(),
                                   threads: threads) { (staging, wrote) throws(DownloadError) in
                try staging.flush(to: partial, all: true, limit: { .max }, wrote: wrote)
            }
            let content = Self.pattern(Self.bufferSize * 10 + 4097)
            let reader = Reader(file: partial, content: content, ring: ring)
            reader.start(on: ThreadPool(maximumThreads: 1))
            #expect(reader.waitUntilFinished() == nil)
            partial.closeKeeping()
            #expect(try Data(contentsOf: dir.appendingPathComponent("w.bin.part")) == Data(content))
            #expect(reader.reports.withLock { $0.last } == Int64(content.count))
        }
    }

    @Test("a write that fails stops the reader with its error; what was written before it is reported, nothing after")
    func aFailedWriteStopsTheReader() throws {
        try withTemporaryDirectory { dir in
            let partial = try Self.makeFile(in: dir)
            let writes = SharedStateLock(0)
            let firstWriteEnd = SharedStateLock<Int64>(0)
            let buffers = ReceiveBuffers()
            let ring = WriteBehind(depth: Self.depth, bufferSize: Self.bufferSize, buffers: buffers,
                                   threads: ThreadPool(maximumThreads: 2)) { (staging, wrote) throws(DownloadError) in
                let count = writes.withLock { (count: inout Int) -> Int in
                    count += 1
                    return count
                }
                if count == 2 { throw DownloadError(.diskFull, "no space left on the test's device") }
                firstWriteEnd.withLock { $0 = staging.end }
                try staging.flush(to: partial, all: true, limit: { .max }, wrote: wrote)
            }
            let reader = Reader(file: partial, content: Self.pattern(Self.bufferSize * 12), ring: ring)
            reader.start(on: ThreadPool(maximumThreads: 1))
            #expect(reader.waitUntilFinished()?.code == .diskFull)
            partial.closeKeeping()
            let reports = reader.reports.withLock { $0 }
            let written = firstWriteEnd.withLock { $0 }
            #expect(reports.last == written)            // what the first write wrote counts, nothing more
            #expect(writes.withLock { $0 } == 2)        // nothing written after the failure
            #expect(buffers.idleCount == 1)
        }
    }
}
