import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul

/// Issue 4, "Framing": bodies whose length or coding lies, heads that are huge or not HTTP.
@Suite("Hostile framing", .throttled, .timeLimit(.minutes(1)))
struct HostileFramingTests {
    /// A framing error is a protocol error: never retried (one request although retries are on),
    /// nothing left on disk. A body cut short is a network failure: retried, then exit 4.
    @Test(arguments: [
        ("/bytes/100/f.bin?length=-1", "invalidContentLength", Int32(7), 1),
        ("/bytes/100/f.bin?length=99999999999999999999999", "invalidContentLength", 7, 1),
        ("/bytes/100/f.bin?length=9223372036854775808", "invalidContentLength", 7, 1),
        ("/bytes/100/f.bin?length=100,%20101", "invalidContentLength", 7, 1),
        ("/chunked?size=3000&mode=negative", "invalidChunk", 7, 1),
        ("/chunked?size=3000&mode=overflow", "invalidChunk", 7, 1),
        ("/chunked?size=3000&mode=nonhex", "invalidChunk", 7, 1),
        ("/headers?size=1048576", "headersTooLarge", 7, 1),
        ("/headers?count=100000", "headersTooLarge", 7, 1),
        ("/garbage", "malformedResponse", 7, 1),
        ("/bytes/100/f.bin?header=Transfer-Encoding:gzip", "malformedResponse", 7, 1),
        ("/chunked?size=3000&mode=missing-last", "truncatedBody", 4, 3),
    ])
    func brokenFramingFailsWithItsCode(path: String, code: String, exit: Int32, requests: Int) async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let error = await expectFailure(hostileDownloader(retries: 2), DownloadRequest(url: url(server, path)), to: .directory(dir))
            #expect(error?.code.name == code, "\(error?.description ?? "")")
            #expect(error?.code.exitStatus == exit)
            #expect(server.requests.count == requests)
            // A protocol error leaves nothing. A cut chunked body (no length, so no resume record)
            // keeps its partial like any network failure; the next run starts it over.
            #expect(listFiles(dir) == (exit == 7 ? [] : ["chunked.part"]))
        }
    }

    /// `Content-Length` larger than the body, then the server closes: the bytes that came stay,
    /// the retry asks for the rest only, and the file is whole. No byte is sent twice.
    @Test func aBodyShorterThanItsContentLengthIsRetriedFromWhereItStopped() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 200_000) { $0 == 0 ? .closeAfter(50_000) : .serve }
        file.install(on: server, at: "/f.bin")
        try await withTemporaryDirectory { dir async throws in
            let result = try await hostileDownloader().file(from: url(server, "/f.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == file.content)
            #expect(listFiles(dir) == ["f.bin"])
            #expect(server.requests.map { $0.header("Range") } == ["bytes=0-", "bytes=50000-199999"])
            #expect(file.bodyBytesSent == 200_000)
        }
    }

    /// `Content-Length` smaller than what the server sends: the message ends at the length and
    /// the excess is ignored (it is not part of the file).
    @Test func bytesBeyondTheContentLengthAreIgnored() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            let result = try await hostileDownloader().file(from: url(server, "/bytes/1000/short.bin?length=500&no-ranges"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(500))
            #expect(listFiles(dir) == ["short.bin"])
            #expect(server.requests.count == 1)
        }
    }

    /// `Transfer-Encoding: chunked` with a `Content-Length`: chunked wins (RFC 9112 §6.3), the
    /// length is ignored, whether it is smaller or larger than the body.
    @Test(arguments: ["3", "999999", "-5"])
    func chunkedWinsOverContentLength(length: String) async throws {
        let server = try HaulServer()
        let body = Array("0123456789abcdefghij".utf8)
        server.route("/te-cl.txt") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
            try connection.write("a\r\n0123456789\r\na\r\nabcdefghij\r\n0\r\n\r\n")
        }
        try await withTemporaryDirectory { dir async throws in
            let result = try await hostileDownloader().file(from: url(server, "/te-cl.txt"), to: .directory(dir))
            #expect(try contents(result.fileURL) == body)
            #expect(listFiles(dir) == ["te-cl.txt"])
            #expect(server.requests.count == 1)
        }
    }

    /// A `Content-Encoding: gzip` body that was not asked for (Haul sends `Accept-Encoding:
    /// identity`) is stored exactly as sent, never decoded.
    @Test func aGzipBodyNotAskedForIsStoredAsSent() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            let result = try await hostileDownloader().file(from: url(server, "/bytes/70000/data.bin?gzip"), to: .directory(dir))
            #expect(result.response.headers["Content-Encoding"] == "gzip")
            #expect(try contents(result.fileURL) == expectedContent(70_000))
            #expect(listFiles(dir) == ["data.bin"])
            #expect(server.requests.first?.header("Accept-Encoding") == "identity")
        }
    }

    /// A real gzip stream served as `Content-Encoding: gzip` keeps its gzip bytes (magic 1f 8b).
    @Test func realGzipBytesAreNotDecoded() async throws {
        let server = try HaulServer()
        let gzip: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xCB, 0x48, 0xCD, 0xC9, 0xC9,
                             0x07, 0x00, 0x86, 0xA6, 0x10, 0x36, 0x05, 0x00, 0x00, 0x00]   // "hello"
        server.route("/hello.txt") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\n"
                                 + "Content-Length: \(gzip.count)\r\nConnection: close\r\n\r\n")
            try connection.write(gzip)
        }
        try await withTemporaryDirectory { dir async throws in
            let result = try await hostileDownloader().file(from: url(server, "/hello.txt"), to: .directory(dir))
            #expect(try contents(result.fileURL) == gzip)
            #expect(listFiles(dir) == ["hello.txt"])
        }
    }

    /// Headers that never end: the header deadline ends the wait (the byte budget would too,
    /// later); nothing on disk. (The trickled-head and silent-server cases are in `FailureTests`.)
    @Test func headersThatNeverEndHitTheDeadlineAndAreNotRetriedForever() async throws {
        let server = try HaulServer()
        let downloader = hostileDownloader(retries: 1) { $0.headerTimeout = .milliseconds(600) }
        await withTemporaryDirectory { dir in
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/endless-headers")), to: .directory(dir))
            #expect(error?.code == .headerTimeout)
            #expect(error?.code.exitStatus == 4)
            #expect(server.requests.count == 2, "a header timeout is a network failure: retried once")
            #expect(listFiles(dir) == [])
        }
    }
}
