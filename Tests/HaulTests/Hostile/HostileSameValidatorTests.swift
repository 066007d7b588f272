import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP
import HaulCrypto

/// Content changed on the server with the same ETag and length: nothing in HTTP can tell, so the
/// resumed file is old bytes followed by new ones. Only a checksum catches it (issue 4, "Range
/// and resume"): exit 9, the final name never appears, the partial is discarded.
@Suite("Same validators, different content", .throttled, .timeLimit(.minutes(1)))
struct HostileSameValidatorTests {
    static let size: Int64 = 600_000

    /// Writes `file.bin.part` with the first half of `old` and a record (with block checksums)
    /// saying so, as an interrupted first run leaves them.
    static func plantHalf(of old: HaulServer.Resource, for address: URL, in dir: URL) throws {
        let half = old.size / 2
        try Data(old.bytes(0..<half)).write(to: dir.appendingPathComponent("file.bin.part"))
        let parsed = try HTTPURL.parse(address.absoluteString)
        var record = ResumeRecord(url: parsed, finalURL: parsed, etagHeader: "\"same\"", lastModified: nil,
                                  totalLength: old.size, completed: ByteRangeSet([0..<half]))
        record.blockHashes = BlockHash.pieces(of: record.completed).map {
            BlockHash(range: $0, crc32c: BlockHashes.crc(of: old.bytes($0)))
        }
        try record.save(for: "file.bin", in: DestinationFolder(path: dir.path))
    }

    @Test("library: the resumed mix fails with checksumMismatch and leaves nothing")
    func library() async throws {
        let server = try HaulServer()
        let old = HaulServer.Resource(size: Self.size, seed: 1, etag: "\"same\"")
        let new = HaulServer.Resource(size: Self.size, seed: 2, etag: "\"same\"")
        server.setResource("/file.bin", new)
        try await withTemporaryDirectory { dir in
            let address = url(server, "/file.bin")
            try Self.plantHalf(of: old, for: address, in: dir)
            let checksum = try Checksum(algorithm: .sha256, expected: Digest.hash(.sha256, new.bytes(0..<Self.size)))
            let error = await expectFailure(testDownloader(), DownloadRequest(url: address, checksum: checksum), to: .directory(dir))
            #expect(error?.code == .checksumMismatch)
            #expect(error?.code.exitStatus == 9)
            // It did resume (the validators matched): that is how the mix came about.
            #expect(server.requests.first?.header("Range") == "bytes=\(Self.size / 2)-")
            #expect(listFiles(dir) == [])
        }
    }

    @Test("without a checksum nothing can tell (documented limit): the resume is trusted")
    func withoutChecksumTheMixIsNotDetected() async throws {
        let server = try HaulServer()
        let old = HaulServer.Resource(size: Self.size, seed: 1, etag: "\"same\"")
        server.setResource("/file.bin", HaulServer.Resource(size: Self.size, seed: 2, etag: "\"same\""))
        try await withTemporaryDirectory { dir in
            let address = url(server, "/file.bin")
            try Self.plantHalf(of: old, for: address, in: dir)
            let result = try await testDownloader().file(from: address, to: .directory(dir))
            let bytes = try contents(result.fileURL)
            #expect(Array(bytes[0..<Int(Self.size / 2)]) == old.bytes(0..<(Self.size / 2)))
            #expect(listFiles(dir) == ["file.bin"])
        }
    }
}
