import Foundation
import HaulTestSupport
import Testing
@testable import Haul

/// A connection's bytes staged into whole blocks reach the file byte for byte, and are reported
/// written in order, each exactly once, wherever the run starts and however the bytes arrive.
@Suite("Direct staging", .throttled, .timeLimit(.minutes(1)))
struct DirectStagingTests {
    /// Runs `body` with a partial file `name` in a temporary folder and a staging of 64 KiB.
    func withStaging(_ name: String, _ body: (URL, PartialFile, inout DirectStaging) throws -> Void) throws {
        try withTemporaryDirectory { dir in
            let partial = try PartialFile.createEmpty(name, in: try DownloadTarget(destination: .directory(dir)).folder)
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: PartialFile.directAlignment)
            defer { memory.deallocate() }
            var staging = DirectStaging(buffer: memory)
            try body(dir, partial, &staging)
        }
    }

    @Test(arguments: [0, 1, 4095, 4096, 10_000, 1_048_576 - 7])
    func bytesInRandomSlicesLandInOrder(start: Int) throws {
        try withStaging("s.bin.part") { dir, partial, staging in
            let length = 300_000
            let content = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11 &+ start) }
            var reported: [Range<Int64>] = []
            let wrote = { (bytes: UnsafeRawBufferPointer, at: Int64) throws(DownloadError) in
                // What is reported written is what the file holds there.
                let offset = Int(at) - start
                #expect(Array(bytes) == Array(content[offset..<(offset + bytes.count)]))
                reported.append(at..<(at + Int64(bytes.count)))
            }
            var generator = SplitMix64(seed: UInt64(start) &+ 17)
            var sent = 0
            while sent < length {
                let count = min(length - sent, Int.random(in: 1...20_000, using: &generator))
                var taken = 0
                try content[sent..<(sent + count)].withUnsafeBytes { slice in
                    while taken < count {
                        taken += staging.append(UnsafeRawBufferPointer(rebasing: slice[taken...]),
                                                at: Int64(start + sent + taken))
                        if staging.isFull { try staging.flush(to: partial, all: false, limit: { Int64.max }, wrote: wrote) }
                    }
                }
                sent += count
            }
            try staging.flush(to: partial, all: true, limit: { Int64.max }, wrote: wrote)
            #expect(staging.isEmpty)
            partial.closeKeeping()
            // Reported once each, in order, with no gap.
            #expect(reported.first?.lowerBound == Int64(start))
            #expect(reported.last?.upperBound == Int64(start + length))
            #expect(zip(reported, reported.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
            let data = try Data(contentsOf: dir.appendingPathComponent("s.bin.part"))
            #expect(data.count == start + length)
            #expect(data.suffix(length) == Data(content))
        }
    }

    /// Bytes staged past the connection's end (another connection took over the rest) are
    /// dropped: not written, not reported; those before it are, up to the byte.
    @Test(arguments: [4096 * 3, 4096 * 3 + 100, 5])
    func bytesPastTheLimitAreDropped(limit: Int) throws {
        try withStaging("l.bin.part") { dir, partial, staging in
            let content = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
            var reported: Int64 = 0
            content.withUnsafeBytes { #expect(staging.append($0, at: 0) == content.count) }
            try staging.flush(to: partial, all: true, limit: { Int64(limit) }) { bytes, at throws(DownloadError) in
                #expect(at == reported)
                reported += Int64(bytes.count)
            }
            partial.closeKeeping()
            #expect(reported == Int64(limit))
            #expect(try Data(contentsOf: dir.appendingPathComponent("l.bin.part")) == Data(content[0..<limit]))
        }
    }

    /// A slow link's flushes write what they can before the buffer is full (a partial first
    /// block included), and a `wrote` that throws (a checkpoint that failed) does not make the
    /// next flush write or report the same bytes again.
    @Test func partialFlushesAndAThrowingReportNeverRepeatBytes() throws {
        try withStaging("p.bin.part") { dir, partial, staging in
            let content = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }
            var reported: [Range<Int64>] = []
            var failOnce = false
            let wrote = { (bytes: UnsafeRawBufferPointer, at: Int64) throws(DownloadError) in
                reported.append(at..<(at + Int64(bytes.count)))
                if failOnce {
                    failOnce = false
                    throw DownloadError(.internalError, "a checkpoint failed")
                }
            }
            func stage(_ range: Range<Int>) {
                content[range].withUnsafeBytes { #expect(staging.append($0, at: Int64(10 + range.lowerBound)) == range.count) }
            }
            stage(0..<100)                  // [10, 110): not even one block
            try staging.flush(to: partial, all: false, limit: { Int64.max }, wrote: wrote)
            #expect(reported == [10..<110] && staging.isEmpty)
            stage(100..<9_000)              // [110, 9010): the rest of the first block, one whole block, a tail
            failOnce = true
            #expect(throws: DownloadError.self) { try staging.flush(to: partial, all: false, limit: { Int64.max }, wrote: wrote) }
            try staging.flush(to: partial, all: false, limit: { Int64.max }, wrote: wrote)
            #expect(reported == [10..<110, 110..<4096, 4096..<8192], "\(reported)")
            #expect(!staging.isEmpty)        // 8192..<9010 waits for more
            stage(9_000..<20_000)
            try staging.flush(to: partial, all: true, limit: { Int64.max }, wrote: wrote)
            #expect(reported.last?.upperBound == 20_010 && staging.isEmpty)
            #expect(zip(reported, reported.dropFirst()).allSatisfy { $0.upperBound == $1.lowerBound })
            partial.closeKeeping()
            #expect(try Data(contentsOf: dir.appendingPathComponent("p.bin.part")).suffix(20_000) == Data(content))
        }
    }
}
