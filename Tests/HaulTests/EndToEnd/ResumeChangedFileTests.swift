import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul

/// The file on the server changed between two runs, or the server stopped honouring ranges:
/// the result is always one version of the file from its first byte to its last, never old
/// bytes followed by new ones (what curl, wget and aria2 produce).
///
/// Exclusive: paced downloads are interrupted mid-way.
@Suite("Resume when the server's file changed", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct ResumeChangedFileTests {
    static let size: Int64 = 3_000_000

    @Test(arguments: [size, 3_500_000, 800_000])
    func aNewETagGivesTheWholeNewFile(newSize: Int64) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader(connections: 2)
            let old = Validators.etag.resource(size: Self.size, seed: 1, rate: 250_000)
            let record = try await interruptFirstRun(server, old, downloader, in: dir, after: 300_000)

            let new = Validators.etag.resource(size: newSize, seed: 2, rate: nil, etag: "\"v2\"")
            server.setResource("/file.bin", new)
            let before = server.requests.count
            let second = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            #expect(second.error == nil, "\(second.error?.description ?? "")")
            let first = try #require(requests(of: server, after: before).first)
            #expect(first.header("Range") == "bytes=\(firstMissingByte(record))-")
            #expect(first.header("If-Range") == "\"v1\"")
            #expect(second.startingOver.count == 1, "\(second.names)")
            #expect(second.started?.resumedFrom == 0)
            #expect(second.started?.totalBytes == newSize)
            #expect(listFiles(dir) == ["file.bin"])
            let final = dir.appendingPathComponent("file.bin")
            #expect(fileSize(final) == newSize)
            #expect(try contents(final) == new.bytes(0..<newSize), "the file mixes two versions")
        }
    }

    /// A server that keeps the ETag but serves another length is broken: a 206 for another
    /// total is a protocol error and nothing is written.
    @Test(arguments: [5_000_000, 2_000_000] as [Int64])
    func aKeptETagWithAnotherLengthIsARangeMismatch(newSize: Int64) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader(connections: 2)
            let old = Validators.etag.resource(size: Self.size, seed: 1, rate: 250_000)
            let record = try await interruptFirstRun(server, old, downloader, in: dir, after: 300_000)
            try #require(firstMissingByte(record) < newSize, "the resume must ask for a byte the new file has")
            let partialBefore = try contents(dir.appendingPathComponent("file.bin.part"))
            let recordBefore = try contents(dir.appendingPathComponent("file.bin.resume"))

            server.setResource("/file.bin", Validators.etag.resource(size: newSize, seed: 2, rate: 3_000_000))
            let before = server.requests.count
            let second = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            #expect(second.error?.code == .rangeMismatch, "\(second.error?.description ?? "finished")")
            #expect(second.error?.code.exitStatus == 7)
            #expect(requests(of: server, after: before).count == 1, "no retry of a protocol error")
            #expect(!listFiles(dir).contains("file.bin"), "no file may appear")
            #expect(try contents(dir.appendingPathComponent("file.bin.part")) == partialBefore, "nothing may be written")
            #expect(try contents(dir.appendingPathComponent("file.bin.resume")) == recordBefore, "the record is kept as it was")
        }
    }

    /// The same ETag for a file now shorter than the first missing byte: 416, which does not
    /// confirm the partial, so the download starts over and gets the short file whole.
    @Test func aKeptETagWithAFileShorterThanThePartialStartsOver() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader(connections: 2)
            let old = Validators.etag.resource(size: Self.size, seed: 1, rate: 250_000)
            let record = try await interruptFirstRun(server, old, downloader, in: dir, after: 300_000)
            let newSize: Int64 = 50_000
            try #require(firstMissingByte(record) > newSize)

            let new = Validators.etag.resource(size: newSize, seed: 2, rate: nil)
            server.setResource("/file.bin", new)
            let before = server.requests.count
            let second = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            #expect(second.error == nil, "\(second.error?.description ?? "")")
            let seen = requests(of: server, after: before)
            #expect(seen.first?.header("Range") == "bytes=\(firstMissingByte(record))-")
            #expect(seen.dropFirst().first?.header("Range") == "bytes=0-", "then a fresh request")
            #expect(second.startingOver.count == 1, "\(second.names)")
            #expect(second.started?.resumedFrom == 0)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == new.bytes(0..<newSize))
        }
    }

    @Test func aServerIgnoringRangeOnResumeMeansStartingOverNeverAppending() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader(connections: 2)
            let old = Validators.etag.resource(size: Self.size, seed: 1, rate: 250_000)
            _ = try await interruptFirstRun(server, old, downloader, in: dir, after: 300_000)

            var ignoring = Validators.etag.resource(size: Self.size, seed: 1, rate: 3_000_000)
            ignoring.ignoresRange = true
            server.setResource("/file.bin", ignoring)
            let before = server.requests.count
            let sentBefore = server.bodyBytesSent
            let second = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            #expect(second.error == nil, "\(second.error?.description ?? "")")
            #expect(second.startingOver.count == 1, "\(second.names)")
            #expect(second.started?.resumedFrom == 0)
            #expect(second.started?.connections == 1, "no ranges, one connection")
            #expect(requests(of: server, after: before).count == 1)
            #expect(server.bodyBytesSent - sentBefore == Self.size)
            #expect(listFiles(dir) == ["file.bin"])
            let final = dir.appendingPathComponent("file.bin")
            #expect(fileSize(final) == Self.size)
            #expect(try contents(final) == old.bytes(0..<Self.size))
        }
    }
}
