import Foundation
import HaulTestSupport
import Testing
@testable import Haul

/// A connection's bytes staged into whole blocks reach the file byte for byte, and are reported
/// written in order, each exactly once, wherever the run starts and however the bytes arrive.
@Suite("Direct staging", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct DirectStagingTests {
    @Test(arguments: [0, 1, 4095, 4096, 10_000, 1_048_576 - 7])
    func bytesInRandomSlicesLandInOrder(start: Int) throws {
        try withTemporaryDirectory { dir in
            let folder = try DownloadTarget(destination: .directory(dir)).folder
            let partial = try PartialFile.createEmpty("s.bin.part", in: folder)
            let length = 300_000
            let content = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11 &+ start) }
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: PartialFile.directAlignment)
            defer { memory.deallocate() }
            var staging = DirectStaging(buffer: memory)
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
                        if staging.isFull { try staging.flush(to: partial, all: false, wrote: wrote) }
                    }
                }
                sent += count
            }
            try staging.flush(to: partial, all: true, wrote: wrote)
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
}
