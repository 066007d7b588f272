import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

/// Issue 4, "Range and resume": servers that answer a range wrongly, files that changed or
/// shrank between runs, validators that cannot be trusted. The result is always one version of
/// the file, whole, or a typed error with nothing written.
///
/// Exclusive: paced downloads are interrupted mid-way.
@Suite("Hostile ranges", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct HostileRangeTests {
    /// A 206 for another start, end or total is a protocol error on the first request (asking
    /// `bytes=0-`) and on a segment's request alike: exit 7, no retry, nothing on disk.
    @Test(arguments: [
        (0, "bytes 100-199/200000"),          // first request, wrong start
        (0, "bytes 0-99/200000"),             // first request, wrong end
        (0, "bytes 0-199999/300000"),         // first request, wrong total
        (0, "bytes 0-99/*"),                  // first request, unknown total and short
        (1, "bytes 0-99/1000000"),            // a segment, wrong start
        (1, "bytes 500000-500099/1000000"),   // a segment, wrong end
        (1, "bytes 500000-999999/2000000"),   // a segment, wrong total
    ])
    func aPartialAnswerForAnotherRangeIsRefused(wrongRequest: Int, contentRange: String) async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 1_000_000) { $0 == wrongRequest ? .partial(contentRange: contentRange) : .stallAfter(0) }
        file.install(on: server, at: "/f.bin")
        let downloader = hostileDownloader { $0.connectionsPerDownload = 2; $0.minimumSegmentSize = 64 << 10 }
        await withTemporaryDirectory { dir in
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/f.bin")), to: .directory(dir))
            #expect(error?.code == .rangeMismatch, "\(error?.description ?? "")")
            #expect(error?.code.exitStatus == 7)
            #expect(server.requests.count == wrongRequest + 1, "a protocol error is not retried")
            #expect(listFiles(dir) == [])
        }
    }

    /// A resume (a record on disk, `Range` from its first missing byte) answered with a 206 that
    /// starts elsewhere: a protocol error, no retry, the partial and its record kept as they were.
    @Test(arguments: [false, true])
    func aResumeAnsweredForAnotherStartIsRefusedAndKeepsThePartial(startsLater: Bool) async throws {
        let server = try HaulServer()
        let size: Int64 = 3_000_000
        try await withTemporaryDirectory { dir async throws in
            let downloader = resumeDownloader(connections: 1)
            let record = try await interruptFirstRun(server, Validators.etag.resource(size: size, seed: 7, rate: 1_000_000),
                                                     downloader, in: dir, after: 500_000)
            let partialBefore = try contents(dir.appendingPathComponent("file.bin.part"))
            let recordBefore = try contents(dir.appendingPathComponent("file.bin.resume"))
            let asked = firstMissingByte(record)
            let start = startsLater ? asked + 4_096 : 0
            server.removeResource("/file.bin")
            let file = ScriptedFile(size: Int(size), seed: 7) { _ in .partial(contentRange: "bytes \(start)-\(start + 99)/\(size)") }
            file.install(on: server, at: "/file.bin")
            let before = server.requests.count

            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            #expect(run.error?.code == .rangeMismatch, "\(run.error?.description ?? "finished")")
            #expect(run.error?.code.exitStatus == 7)
            let sent = requests(of: server, after: before)
            #expect(sent.count == 1, "a protocol error is not retried")
            #expect(sent.first?.header("Range") == "bytes=\(asked)-")
            #expect(try contents(dir.appendingPathComponent("file.bin.part")) == partialBefore, "nothing may be written")
            #expect(try contents(dir.appendingPathComponent("file.bin.resume")) == recordBefore, "the record is kept as it was")
            #expect(!listFiles(dir).contains("file.bin"))
        }
    }

    /// A segment's request answered 200 (the whole file): the file changed or ranges stopped
    /// working, so the download starts over from byte 0 and ends with one whole version.
    @Test func aSegmentAnsweredWithTheWholeFileStartsOver() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 1_000_000) { $0 == 1 ? .ignoreRange : .serve }
        file.install(on: server, at: "/f.bin")
        let downloader = hostileDownloader { $0.connectionsPerDownload = 2; $0.minimumSegmentSize = 64 << 10 }
        try await withTemporaryDirectory { dir async throws in
            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/f.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.startingOver.count == 1, "\(run.names)")
            #expect(listFiles(dir) == ["f.bin"])
            #expect(try contents(dir.appendingPathComponent("f.bin")) == file.content)
            #expect(server.requests.filter { $0.header("Range") == "bytes=0-" }.count == 2, "the first request and the fresh one")
        }
    }

    /// The partial is complete but the server's file (same ETag) is now shorter: the 416 names
    /// another total, so it does not confirm the partial. The download starts over and the
    /// over-long local bytes never reach the final file.
    @Test(arguments: ["\"v1\"", "\"v2\""])
    func a416ForAnOverLongPartialStartsOver(serverETag: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            let old = HaulServer.Resource(size: 300_000, seed: 1, etag: "\"v1\"", rate: 0)
            let new = HaulServer.Resource(size: 200_000, seed: 2, etag: serverETag, rate: 0)
            server.setResource("/file.bin", new)
            let address = url(server, "/file.bin")
            try completePartial(of: old, at: address, in: dir)

            let run = await runToEnd(hostileDownloader(), DownloadRequest(url: address), to: .directory(dir))

            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.startingOver.count == 1, "\(run.names)")
            // The same ETag: 416 for another total, then a fresh request. A new ETag: If-Range
            // fails, so the server answers 200 with the new file at once.
            let expected = serverETag == "\"v1\"" ? ["bytes=300000-", "bytes=0-"] : ["bytes=300000-"]
            #expect(server.requests.map { $0.header("Range") } == expected)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == new.bytes(0..<200_000))
        }
    }

    /// An incomplete partial answered 416 (a server that refuses the range although its total
    /// is the recorded one, or one whose 416 carries another ETag): nothing confirms the bytes
    /// on disk, so the download starts over from byte 0 and ends with the server's file whole.
    @Test(arguments: ["\"v1\"", "\"v2\""])
    func a416ForAnIncompletePartialStartsOver(etagOf416: String) async throws {
        let server = try HaulServer()
        let size: Int64 = 3_000_000
        try await withTemporaryDirectory { dir async throws in
            let downloader = resumeDownloader(connections: 1)
            let record = try await interruptFirstRun(server, Validators.etag.resource(size: size, seed: 7, rate: 1_000_000),
                                                     downloader, in: dir, after: 500_000)
            server.removeResource("/file.bin")
            let file = ScriptedFile(size: Int(size), seed: 7) { index in
                index == 0 ? .status(416, headers: "Content-Range: bytes */\(size)\r\nETag: \(etagOf416)\r\n") : .serve
            }
            file.install(on: server, at: "/file.bin")
            let before = server.requests.count

            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.startingOver.count == 1, "\(run.names)")
            let ranges = requests(of: server, after: before).map { $0.header("Range") }
            #expect(ranges == ["bytes=\(firstMissingByte(record))-", "bytes=0-"], "\(ranges)")
            #expect(file.bodyBytesSent == size, "the whole file once, after the 416")
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == file.content)
        }
    }

    /// A complete partial with a 416 for exactly its end of the same file: finished with no body
    /// byte sent (the complete case of `ResumeTests`, here with a Last-Modified record).
    @Test func a416ConfirmingACompletePartialFinishesWithoutTheBody() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            let resource = HaulServer.Resource(size: 300_000, seed: 1, lastModified: Validators.date, rate: 0)
            server.setResource("/file.bin", resource)
            let address = url(server, "/file.bin")
            try completePartial(of: resource, at: address, in: dir, etag: nil, lastModified: Validators.date)

            let run = await runToEnd(hostileDownloader(), DownloadRequest(url: address), to: .directory(dir))

            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.startingOver.isEmpty)
            #expect(server.requests.map { $0.header("If-Range") } == [Validators.date])
            #expect(server.bodyBytesSent == 0)
            #expect(listFiles(dir) == ["file.bin"])
        }
    }

    /// The file changed between runs and only its Last-Modified tells: `If-Range` carries the old
    /// date, the server answers 200, and the new file replaces the old bytes from byte 0.
    @Test func aChangedLastModifiedGivesTheWholeNewFile() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            let old = HaulServer.Resource(size: 300_000, seed: 1, lastModified: Validators.date, rate: 0)
            let new = HaulServer.Resource(size: 300_000, seed: 2, lastModified: "Wed, 02 Dec 2026 10:00:00 GMT", rate: 0)
            server.setResource("/file.bin", new)
            let address = url(server, "/file.bin")
            try halfPartial(of: old, at: address, in: dir, etag: nil, lastModified: Validators.date)

            let run = await runToEnd(hostileDownloader(), DownloadRequest(url: address), to: .directory(dir))

            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.startingOver.count == 1, "\(run.names)")
            #expect(server.requests.first?.header("Range") == "bytes=150000-")
            #expect(server.requests.first?.header("If-Range") == Validators.date)
            #expect(server.requests.count == 1, "the 200 carries the new file")
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == new.bytes(0..<300_000))
        }
    }

    /// A weak ETag never goes into `If-Range` (RFC 9110 §13.1.5): with a Last-Modified the
    /// segments send the date; without one the download is not resumable (one connection, no
    /// record, no `If-Range` at all).
    @Test(arguments: [true, false])
    func aWeakETagIsNeverUsedForIfRange(withLastModified: Bool) async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 1_000_000, etag: "W/\"weak\"", lastModified: withLastModified ? Validators.date : nil) { _ in .serve }
        file.install(on: server, at: "/f.bin")
        let downloader = hostileDownloader { $0.connectionsPerDownload = 2; $0.minimumSegmentSize = 64 << 10 }
        try await withTemporaryDirectory { dir async throws in
            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/f.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(try contents(dir.appendingPathComponent("f.bin")) == file.content)
            let ifRanges = server.requests.compactMap { $0.header("If-Range") }
            #expect(!ifRanges.contains { $0.contains("weak") })
            if withLastModified {
                #expect(run.started?.connections == 2)
                #expect(!ifRanges.isEmpty && ifRanges.allSatisfy { $0 == Validators.date }, "\(ifRanges)")
            } else {
                #expect(run.started?.connections == 1)
                #expect(server.requests.count == 1)
                #expect(ifRanges.isEmpty)
            }
        }
    }

    /// A weak ETag alone: an interrupted download leaves no record to trust, so the next run
    /// starts over rather than appending to bytes it cannot check.
    @Test func aPartialWithOnlyAWeakETagIsNotResumed() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 200_000, etag: "W/\"weak\"") { $0 == 0 ? .closeAfter(80_000) : .serve }
        file.install(on: server, at: "/f.bin")
        try await withTemporaryDirectory { dir async throws in
            let result = try await hostileDownloader().file(from: url(server, "/f.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == file.content)
            #expect(server.requests.map { $0.header("Range") } == ["bytes=0-", "bytes=0-"])
            #expect(server.requests.allSatisfy { $0.header("If-Range") == nil })
            #expect(listFiles(dir) == ["f.bin"])
        }
    }
}

/// Writes `NAME.part` holding all of `resource` and a record saying it is complete.
private func completePartial(of resource: HaulServer.Resource, at address: URL, in dir: URL,
                             etag: String? = "\"v1\"", lastModified: String? = nil) throws {
    try writePartial(of: resource, bytes: resource.size, at: address, in: dir, etag: etag, lastModified: lastModified)
}

/// Writes `NAME.part` holding the first half of `resource` and a record saying so.
private func halfPartial(of resource: HaulServer.Resource, at address: URL, in dir: URL,
                         etag: String?, lastModified: String?) throws {
    try writePartial(of: resource, bytes: resource.size / 2, at: address, in: dir, etag: etag, lastModified: lastModified)
}

private func writePartial(of resource: HaulServer.Resource, bytes: Int64, at address: URL, in dir: URL,
                          etag: String?, lastModified: String?) throws {
    let name = address.lastPathComponent
    try Data(resource.bytes(0..<bytes)).write(to: dir.appendingPathComponent(name + ".part"))
    let parsed = try HTTPURL.parse(address.absoluteString)
    var record = ResumeRecord(url: parsed, finalURL: parsed, etagHeader: etag, lastModified: lastModified,
                              totalLength: resource.size, completed: ByteRangeSet([0..<bytes]))
    record.blockHashes = BlockHash.pieces(of: record.completed).map {
        BlockHash(range: $0, crc32c: BlockHashes.crc(of: resource.bytes($0)))
    }
    try record.save(for: name, in: DestinationFolder(path: dir.path))
}
