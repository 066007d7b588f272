import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

/// The resume record keeps a CRC-32C per piece of completed bytes (within 4 MiB blocks); a resume
/// checks them and downloads again any piece whose bytes changed on disk.
///
/// Exclusive: paced downloads are interrupted mid-way.
@Suite("Block hashes in the resume record", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct ResumeBlockHashTests {
    static let size: Int64 = 13_000_000
    static let block = BlockHash.blockSize

    @Test(arguments: [1, 3])
    func aCorruptedBlockIsDownloadedAgainAndOnlyIt(connections: Int) async throws {
        let server = try HaulServer()
        let slow = Validators.etag.resource(size: Self.size, rate: connections == 1 ? 4_000_000 : 1_400_000)
        server.setResource("/file.bin", slow)
        try await withTemporaryDirectory { dir in
            // Given a partial file whose record holds hashes of its completed pieces...
            let address = url(server, "/file.bin")
            let downloader = resumeDownloader(connections: connections)
            _ = await interrupted(downloader, DownloadRequest(url: address), to: .directory(dir), after: 6_000_000)
            let record = try #require(loadResumeRecord("file.bin", in: dir))
            // Every completed byte is in exactly one piece, each within a block, each matching the bytes.
            #expect(ByteRangeSet(record.blockHashes.map(\.range)) == record.completed)
            #expect(record.blockHashes.map(\.range.count).reduce(0, +) == record.completed.byteCount)
            #expect(record.blockHashes.allSatisfy { ($0.range.lowerBound / Self.block) == (($0.range.upperBound - 1) / Self.block) })
            #expect(record.blockHashes.allSatisfy { $0.crc32c == BlockHashes.crc(of: slow.bytes($0.range)) })
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

    @Test("CRC-32C: the published check values (RFC 3720 B.4), and in pieces equal to at once")
    func crc32cVectors() {
        #expect(BlockHashes.crc(of: Array("123456789".utf8)) == 0xE306_9283)
        #expect(BlockHashes.crc(of: [UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(BlockHashes.crc(of: [UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(BlockHashes.crc(of: (0..<32).map { UInt8($0) }) == 0x46DD_794E)
        let bytes = HaulServer.content(seed: 3).bytes(0..<100_003)
        var running: UInt32 = 0
        for start in stride(from: 0, to: bytes.count, by: 7_777) {
            running = Array(bytes[start..<min(start + 7_777, bytes.count)]).withUnsafeBytes { BlockHashes.crc(running, $0) }
        }
        #expect(running == BlockHashes.crc(of: bytes))
    }

    @Test("verify keeps the pieces whose bytes match and drops the rest")
    func verifyDropsChangedPieces() throws {
        try withTemporaryDirectory { dir in
            let bytes = HaulServer.content(seed: 9).bytes(0..<(Self.block + 1000))
            let path = dir.appendingPathComponent("f").path
            var changed = bytes
            changed[Int(Self.block) + 10] ^= 0xFF
            try Data(changed).write(to: URL(fileURLWithPath: path))
            let descriptor = open(path, O_RDONLY)
            defer { close(descriptor) }
            let url = try HTTPURL.parse("http://example.com/f")
            var record = ResumeRecord(url: url, finalURL: url, etagHeader: "\"v\"", lastModified: nil,
                                      totalLength: Int64(bytes.count), completed: ByteRangeSet([0..<Int64(bytes.count)]))
            record.blockHashes = [0..<100, 100..<Self.block, Self.block..<(Self.block + 1000)].map {
                BlockHash(range: $0, crc32c: BlockHashes.crc(of: Array(bytes[Int($0.lowerBound)..<Int($0.upperBound)])))
            }
            let checked = BlockHashes.verify(record, descriptor: descriptor)
            #expect(checked.record.completed == ByteRangeSet([0..<Self.block]))
            #expect(checked.dropped == 1000)
            #expect(checked.hashes.all.map(\.range) == [0..<100, 100..<Self.block])
            // The bytes of verified pieces are trusted without being read: the changed byte lies in
            // one, and nothing sees it (a descriptor that cannot be read would show a read).
            var verified = record
            verified.verifiedPieces = ByteRangeSet([Self.block..<(Self.block + 1000)])
            #expect(BlockHashes.verify(verified, descriptor: descriptor).record.completed == ByteRangeSet([0..<Int64(bytes.count)]))
            verified.verifiedPieces = ByteRangeSet([0..<Int64(bytes.count)])
            #expect(BlockHashes.verify(verified, descriptor: -1).dropped == 0, "nothing read")
            // A record without checksums trusts nothing.
            record.blockHashes = []
            #expect(BlockHashes.verify(record, descriptor: descriptor).record.completed.byteCount == 0)
        }
    }
}
