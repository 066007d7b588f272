import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP
import HaulCrypto

/// The CLI side of "content changed with the same ETag and length": only `--checksum` catches
/// the resumed mix (exit 9, one line, no file left).
@Suite("CLI: same validators, different content", .throttled, .timeLimit(.minutes(1)))
struct HostileSameValidatorCLITests {
    @Test func aResumedMixExitsNineAndLeavesNothing() async throws {
        let server = try HaulServer()
        let size: Int64 = 600_000
        let old = HaulServer.Resource(size: size, seed: 1, etag: "\"same\"")
        let new = HaulServer.Resource(size: size, seed: 2, etag: "\"same\"")
        server.setResource("/file.bin", new)
        try await withTemporaryDirectory { dir in
            // An interrupted first run's leftovers: half of the old content and its record.
            let half = size / 2
            try Data(old.bytes(0..<half)).write(to: dir.appendingPathComponent("file.bin.part"))
            let parsed = try HTTPURL.parse(server.url("/file.bin"))
            var record = ResumeRecord(url: parsed, finalURL: parsed, etagHeader: "\"same\"", lastModified: nil,
                                      totalLength: size, completed: ByteRangeSet([0..<half]))
            record.blockHashes = BlockHash.pieces(of: record.completed).map {
                BlockHash(range: $0, crc32c: BlockHashes.crc(of: old.bytes($0)))
            }
            try record.save(for: "file.bin", in: DestinationFolder(path: dir.path))
            let digest = Hex.encode(Digest.hash(.sha256, new.bytes(0..<size)))

            let outcome = try await haul(["--checksum=sha256=\(digest)", "-d", dir.path, server.url("/file.bin")], in: dir)

            #expect(outcome.status == 9)
            let lines = outcome.standardError.split(separator: "\n")
            #expect(lines.last?.contains("checksum mismatch") == true, "\(outcome.standardError)")
            #expect(lines.count <= 2, "\(outcome.standardError)")
            #expect(server.requests.first?.header("Range") == "bytes=\(half)-")
            #expect(listFiles(dir) == [])
        }
    }
}
