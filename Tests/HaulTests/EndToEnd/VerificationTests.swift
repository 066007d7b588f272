import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulCrypto

/// How a verified download moves its bytes.
enum TransferShape: String, CaseIterable, CustomStringConvertible {
    /// A server without ranges: one stream, hashed as it arrives.
    case stream
    /// Ranges, one connection: the inline segmented path, hashed as it arrives.
    case single
    /// Ranges, four connections: the first run hashed as it arrives, the rest read back.
    case segmented

    var description: String { rawValue }

    var connections: Int { self == .segmented ? 4 : 1 }

    func resource(size: Int64, seed: UInt64 = 1) -> HaulServer.Resource {
        HaulServer.Resource(size: size, seed: seed, etag: "\"v1\"", ignoresRange: self == .stream, rate: 0)
    }
}

/// `DownloadRequest.checksum` and the server's own digests: checked before the final name.
///
/// Exclusive: a download paced at 1 MB/s is interrupted mid-way.
@Suite("Checksums and server digests", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct VerificationTests {
    static let size: Int64 = 3_000_000

    static func digest(_ algorithm: ChecksumAlgorithm, of resource: HaulServer.Resource) -> [UInt8] {
        Digest.hash(algorithm, resource.bytes(0..<resource.size))
    }

    @Test(arguments: ChecksumAlgorithm.allCases, TransferShape.allCases)
    func rightChecksumFinishesAndReportsTheSHA256(algorithm: ChecksumAlgorithm, shape: TransferShape) async throws {
        let server = try HaulServer()
        let resource = shape.resource(size: Self.size)
        server.setResource("/file.bin", resource)
        try await withTemporaryDirectory { dir in
            let checksum = try Checksum(algorithm: algorithm, expected: Self.digest(algorithm, of: resource))
            let request = DownloadRequest(url: url(server, "/file.bin"), checksum: checksum)
            let result = try await resumeDownloader(connections: shape.connections).file(from: request, to: .directory(dir))
            #expect(result.sha256 == Hex.encode(Self.digest(.sha256, of: resource)))
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == resource.bytes(0..<Self.size))
        }
    }

    @Test(arguments: ChecksumAlgorithm.allCases, TransferShape.allCases)
    func wrongChecksumFailsWithExitNineAndLeavesNothing(algorithm: ChecksumAlgorithm, shape: TransferShape) async throws {
        let server = try HaulServer()
        let resource = shape.resource(size: Self.size)
        server.setResource("/file.bin", resource)
        try await withTemporaryDirectory { dir in
            var wrong = Self.digest(algorithm, of: resource)
            wrong[0] ^= 0x01
            let request = DownloadRequest(url: url(server, "/file.bin"), checksum: try Checksum(algorithm: algorithm, expected: wrong))
            let error = await expectFailure(resumeDownloader(connections: shape.connections), request, to: .directory(dir))
            #expect(error?.code == .checksumMismatch)
            #expect(error?.code.exitStatus == 9)
            #expect(error?.message.contains(Hex.encode(wrong)) == true, "\(error?.message ?? "")")
            #expect(listFiles(dir) == [], "the final name must never appear and the partial is removed")
            // Not retried: the file was asked for from byte 0 once (the server may write more than
            // a segment's share of the open-ended first response before its connection closes).
            #expect(server.requests.filter { ($0.header("Range") ?? "bytes=0-").hasPrefix("bytes=0-") }.count == 1)
        }
    }

    @Test func noChecksumNoDigestReportsNoSHA256() async throws {
        let server = try HaulServer()
        server.setResource("/file.bin", TransferShape.single.resource(size: 100_000))
        try await withTemporaryDirectory { dir in
            let result = try await resumeDownloader().file(from: DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))
            #expect(result.sha256 == nil)
        }
    }

    /// The digest fields a server may send, and the shapes each is valid for.
    static let serverFields: [(field: String, shape: TransferShape)] = [
        ("Repr-Digest", .segmented), ("Repr-Digest", .single), ("Content-Digest", .stream), ("Digest", .stream),
    ]

    static func field(_ name: String, _ digest: [UInt8]) -> (name: String, value: String) {
        let base64 = Data(digest).base64EncodedString()
        return name == "Digest" ? (name, "SHA-256=\(base64)") : (name, "sha-256=:\(base64):")
    }

    @Test(arguments: serverFields.indices, [true, false])
    func serverDigestIsVerifiedWithoutBeingAsked(index: Int, matches: Bool) async throws {
        let (name, shape) = Self.serverFields[index]
        let server = try HaulServer()
        var resource = shape.resource(size: Self.size)
        var digest = Self.digest(.sha256, of: resource)
        if !matches { digest[5] ^= 0x80 }
        resource.extraHeaders = [Self.field(name, digest)]
        server.setResource("/file.bin", resource)
        try await withTemporaryDirectory { dir in
            let request = DownloadRequest(url: url(server, "/file.bin"))
            let downloader = resumeDownloader(connections: shape.connections)
            if matches {
                let result = try await downloader.file(from: request, to: .directory(dir))
                #expect(result.sha256 == Hex.encode(digest))
                #expect(listFiles(dir) == ["file.bin"])
            } else {
                let error = await expectFailure(downloader, request, to: .directory(dir))
                #expect(error?.code == .checksumMismatch, "\(name): \(error?.description ?? "finished")")
                #expect(error?.message.contains(name) == true, "\(error?.message ?? "")")
                #expect(listFiles(dir) == [])
            }
        }
    }

    @Test func contentDigestOfAPartialResponseIsNotMistakenForTheFile() async throws {
        // Content-Digest on a 206 covers only that range: it must not fail a good download.
        let server = try HaulServer()
        var resource = TransferShape.segmented.resource(size: Self.size)
        resource.extraHeaders = [Self.field("Content-Digest", Array(repeating: 7, count: 32))]
        server.setResource("/file.bin", resource)
        try await withTemporaryDirectory { dir in
            let result = try await resumeDownloader(connections: 4).file(from: DownloadRequest(url: url(server, "/file.bin")),
                                                                       to: .directory(dir))
            #expect(result.sha256 == nil)
            #expect(listFiles(dir) == ["file.bin"])
        }
    }

    @Test func aResumedDownloadStillChecksTheDigestItsRecordKept() async throws {
        let server = try HaulServer()
        var first = HaulServer.Resource(size: 6_000_000, seed: 1, etag: "\"v1\"", rate: 1_000_000)
        first.extraHeaders = [Self.field("Repr-Digest", Self.digest(.sha256, of: first))]
        server.setResource("/file.bin", first)
        try await withTemporaryDirectory { dir in
            let address = url(server, "/file.bin")
            _ = await interrupted(resumeDownloader(), DownloadRequest(url: address), to: .directory(dir), after: 1_000_000)
            let record = try #require(loadResumeRecord("file.bin", in: dir))
            #expect(record.serverDigest == "sha256=" + Hex.encode(Self.digest(.sha256, of: first)))

            // The same ETag, other bytes and no digest field: only the record's digest can tell.
            server.setResource("/file.bin", HaulServer.Resource(size: 6_000_000, seed: 2, etag: "\"v1\"", rate: 0))
            let error = await expectFailure(resumeDownloader(), DownloadRequest(url: address), to: .directory(dir))
            #expect(error?.code == .checksumMismatch, "\(error?.description ?? "finished")")
            #expect(listFiles(dir) == [])
        }
    }
}
