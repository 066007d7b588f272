import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

/// A cancelled download continues where it stopped when it runs again: it asks for the missing
/// bytes with `Range` and `If-Range`, and the server sends each byte about once.
///
/// Exclusive: paced downloads are interrupted mid-way, and the bytes sent are bounded.
@Suite("Resume after an interruption", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct ResumeTests {
    static let size: Int64 = 4_000_000

    @Test(arguments: Validators.allCases, [1, 4])
    func resumesFromTheFirstMissingByte(validators: Validators, connections: Int) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader(connections: connections)
            // 0.4 MB/s in all: the cancel comes after about 0.75 s of a 10 s download (room for a
            // late cancel under load).
            let slow = validators.resource(size: Self.size, rate: 400_000 / connections)
            let record = try await interruptFirstRun(server, slow, downloader, in: dir, after: 300_000)
            let resumeAt = firstMissingByte(record)
            #expect(resumeAt > 0 && resumeAt < Self.size)

            // Given the same file, served faster (paced: the bytes the server sends are then the
            // bytes read); when the same download runs again:
            server.setResource("/file.bin", validators.resource(size: Self.size, rate: 16_000_000))
            let before = server.requests.count
            let second = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            // Then it asks only for what is missing, checked by the validator, and ends byte-identical.
            #expect(second.error == nil, "\(second.error?.description ?? "")")
            let seen = requests(of: server, after: before)
            let first = try #require(seen.first)
            #expect(first.header("Range") == "bytes=\(resumeAt)-")
            #expect(first.header("If-Range") == validators.ifRange)
            #expect(seen.allSatisfy { $0.header("If-Range") == validators.ifRange && requestedRange($0) != nil })
            #expect(seen.allSatisfy { (requestedRange($0)?.first ?? 0) >= resumeAt })
            #expect(second.started?.resumedFrom == record.completed.byteCount)
            #expect((second.started?.resumedFrom ?? 0) > 0)
            #expect(second.startingOver.isEmpty)
            #expect(second.names.first == "started" && second.names.last == "finished")
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == slow.bytes(0..<Self.size))
            #expect(server.bodyBytesSent >= Self.size)
            #expect(server.bodyBytesSent < Self.size * 11 / 10, "sent \(server.bodyBytesSent) bytes for \(Self.size)")
        }
    }

    @Test func resumesWhenTheURLWasSignedAgain() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader()
            let slow = Validators.etag.resource(size: Self.size, rate: 1_000_000)
            let record = try await interruptFirstRun(server, slow, downloader, in: dir, after: 300_000,
                                                     path: "/file.bin?X-Amz-Signature=first1111&Expires=100")
            let text = try String(contentsOf: dir.appendingPathComponent("file.bin.resume"), encoding: .utf8)
            #expect(!text.contains("first1111"), "the record keeps the signature in clear:\n\(text)")

            server.setResource("/file.bin", Validators.etag.resource(size: Self.size, rate: nil))
            let before = server.requests.count
            let resigned = DownloadRequest(url: url(server, "/file.bin?X-Amz-Signature=second222&Expires=200"))
            let second = await runToEnd(downloader, resigned, to: .directory(dir))

            #expect(second.error == nil, "\(second.error?.description ?? "")")
            let first = try #require(requests(of: server, after: before).first)
            #expect(first.target.contains("second222"))
            #expect(first.header("Range") == "bytes=\(firstMissingByte(record))-")
            #expect(first.header("If-Range") == "\"v1\"")
            #expect(second.started?.resumedFrom == record.completed.byteCount)
            #expect(second.startingOver.isEmpty)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == slow.bytes(0..<Self.size))
            #expect(server.bodyBytesSent < Self.size * 11 / 10)
        }
    }

    @Test func startOverDownloadsEverythingAgain() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader()
            let slow = Validators.etag.resource(size: Self.size, rate: 1_000_000)
            let record = try await interruptFirstRun(server, slow, downloader, in: dir, after: 300_000)
            server.setResource("/file.bin", Validators.etag.resource(size: Self.size, rate: nil))
            let before = server.requests.count
            let sentBefore = server.bodyBytesSent
            var request = DownloadRequest(url: url(server, "/file.bin"))
            request.startOver = true
            let second = await runToEnd(downloader, request, to: .directory(dir))

            #expect(second.error == nil, "\(second.error?.description ?? "")")
            let seen = requests(of: server, after: before)
            let first = try #require(seen.first)
            #expect(requestedRange(first)?.first ?? 0 == 0, "a fresh start asks from byte 0: \(first.header("Range") ?? "-")")
            #expect(first.header("If-Range") == nil)
            #expect(!seen.contains { requestedRange($0)?.first == firstMissingByte(record) })
            #expect(second.started?.resumedFrom == 0)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == slow.bytes(0..<Self.size))
            #expect(server.bodyBytesSent - sentBefore >= Self.size)
        }
    }

    @Test func aCompletePartialWhoseRenameDidNotHappenIsFinishedWithoutItsBody() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            // Given a complete NAME.part and a record saying so (a crash between the last sync and the rename).
            let resource = Validators.etag.resource(size: 1_500_000)
            server.setResource("/file.bin", resource)
            let address = url(server, "/file.bin")
            try Data(resource.bytes(0..<resource.size)).write(to: dir.appendingPathComponent("file.bin.part"))
            let parsed = try HTTPURL.parse(address.absoluteString)
            var record = ResumeRecord(url: parsed, finalURL: parsed, etagHeader: "\"v1\"", lastModified: nil,
                                      totalLength: resource.size, completed: ByteRangeSet([0..<resource.size]))
            record.blockHashes = BlockHash.pieces(of: record.completed).map {
                BlockHash(range: $0, crc32c: BlockHashes.crc(of: resource.bytes($0)))
            }
            try record.save(for: "file.bin", in: DestinationFolder(path: dir.path))

            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: address), to: .directory(dir))

            // Then the 416 for the end of the same file confirms it, and no body byte is sent.
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.finished)
            #expect(run.startingOver.isEmpty)
            #expect(server.requests.count == 1)
            #expect(server.requests.first?.header("Range") == "bytes=\(resource.size)-")
            #expect(server.requests.first?.header("If-Range") == "\"v1\"")
            #expect(server.bodyBytesSent == 0)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == resource.bytes(0..<resource.size))
        }
    }
}
