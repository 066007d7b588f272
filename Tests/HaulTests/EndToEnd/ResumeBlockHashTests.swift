import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul

/// The resume record keeps a SHA-256 per 4 MiB block of completed bytes; a resume re-hashes
/// them and downloads again any block whose bytes changed on disk.
@Suite("Block hashes in the resume record", .timeLimit(.minutes(1)))
struct ResumeBlockHashTests {
    static let size: Int64 = 13_000_000
    static let block = BlockHash.blockSize

    @Test(arguments: [1, 3])
    func aCorruptedBlockIsDownloadedAgainAndOnlyIt(connections: Int) async throws {
        let server = try HaulServer()
        let slow = Validators.etag.resource(size: Self.size, rate: connections == 1 ? 3_000_000 : 1_000_000)
        server.setResource("/file.bin", slow)
        try await withTemporaryDirectory { dir in
            // Given a partial file whose record holds hashes of its completed pieces...
            let address = url(server, "/file.bin")
            let downloader = resumeDownloader(connections: connections)
            _ = await interrupted(downloader, DownloadRequest(url: address), to: .directory(dir), after: 9_000_000)
            let record = try #require(loadResumeRecord("file.bin", in: dir))
            #expect(record.blockHashes.map(\.range) == BlockHash.pieces(of: record.completed))
            // (the largest piece that does not start the file)
            let victim = try #require(record.blockHashes.map(\.range).filter { $0.lowerBound > 0 }.max { $0.count < $1.count })
            try #require(victim.count > 1_000_000, "pieces: \(record.blockHashes.map(\.range))")

            // ...and a byte inside one piece changed on disk while paused,
            let part = dir.appendingPathComponent("file.bin.part")
            let handle = try FileHandle(forUpdating: part)
            let corrupted = victim.lowerBound + 12_345
            try handle.seek(toOffset: UInt64(corrupted))
            let original = slow.bytes(corrupted..<(corrupted + 1))[0]
            try handle.write(contentsOf: [original ^ 0xFF])
            try handle.close()

            // When the download runs again,
            server.setResource("/file.bin", Validators.etag.resource(size: Self.size, rate: 0))
            let before = server.requests.count
            let second = await runToEnd(downloader, DownloadRequest(url: address), to: .directory(dir))

            // Then the file is right, the bad piece was asked for again, and the other claimed bytes were not.
            #expect(second.error == nil, "\(second.error?.description ?? "")")
            #expect(try contents(dir.appendingPathComponent("file.bin")) == slow.bytes(0..<Self.size))
            #expect(listFiles(dir) == ["file.bin"])
            #expect(second.events.contains { if case .warning(let text) = $0 { text.contains("no longer match") } else { false } })
            let asked = requests(of: server, after: before).compactMap(requestedRange)
            #expect(asked.contains { $0.first <= victim.lowerBound && ($0.last ?? Self.size) >= victim.lowerBound },
                    "the changed piece was not asked for again: \(asked)")
            var kept = record.completed
            kept = ByteRangeSet(kept.ranges.flatMap { range -> [Range<Int64>] in
                guard range.overlaps(victim) else { return [range] }
                return [range.lowerBound..<victim.lowerBound, victim.upperBound..<range.upperBound]
            })
            #expect(!asked.contains { start in kept.ranges.contains { $0.contains(start.first) } },
                    "a request starts inside bytes that are intact: \(asked), kept \(kept)")
            let trusted = kept.byteCount
            #expect(second.started?.resumedFrom == trusted)
        }
    }

    @Test func piecesAreCutAtBlockBoundaries() {
        let set = ByteRangeSet([0..<10, (Self.block - 5)..<(2 * Self.block + 3)])
        #expect(BlockHash.pieces(of: set) == [0..<10, (Self.block - 5)..<Self.block, Self.block..<(2 * Self.block),
                                               (2 * Self.block)..<(2 * Self.block + 3)])
    }

    @Test func runningHashesMatchHashesOfTheFile() throws {
        try withTemporaryDirectory { dir in
            // The incremental hashes a checkpoint writes equal those of the bytes read afresh.
            let bytes = HaulServer.content(seed: 9).bytes(0..<(Self.block + 1000))
            let path = dir.appendingPathComponent("f").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let descriptor = open(path, O_RDONLY)
            defer { close(descriptor) }
            let hashes = BlockHashes()
            _ = try hashes.update(completed: ByteRangeSet([0..<100]), descriptor: descriptor)
            _ = try hashes.update(completed: ByteRangeSet([0..<3_000_000]), descriptor: descriptor)
            let last = try hashes.update(completed: ByteRangeSet([0..<(Self.block + 1000)]), descriptor: descriptor)
            #expect(last.map(\.range) == [0..<Self.block, Self.block..<(Self.block + 1000)])
            for hash in last {
                #expect(hash.sha256 == Digest.hash(.sha256, Array(bytes[Int(hash.range.lowerBound)..<Int(hash.range.upperBound)])))
            }
        }
    }
}
