import Foundation
import HaulServer
import HaulTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Issue 4, the wire-side cases through the real `haul` binary: exact exit status, the files left
/// on disk and what the server received. (The library tests in `Tests/HaulTests/Hostile` cover
/// every case; these run representative ones end to end.)
@Suite(.throttled, .timeLimit(.minutes(1)))
struct HostileWireCLITests {
    /// Retries on but quick, so a test shows whether a failure was retried.
    static let retrying = ["--retries=3", "--retry-wait=0.05", "--connect-timeout=2", "--stall-timeout=1", "--header-timeout=2", "-x1"]

    @Test(arguments: [
        ("/bytes/100/f.bin?length=-1", "invalidContentLength"),
        ("/bytes/100/f.bin?length=99999999999999999999999", "invalidContentLength"),
        ("/bytes/100/f.bin?length=100,%20101", "invalidContentLength"),
        ("/chunked?mode=negative", "invalidChunk"),
        ("/chunked?mode=overflow", "invalidChunk"),
        ("/headers?size=1048576", "headersTooLarge"),
        ("/headers?count=100000", "headersTooLarge"),
        ("/garbage", "malformedResponse"),
    ])
    func framingErrorsExitSevenWithoutARetry(path: String, code: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            let url = server.url(path)
            let outcome = try await haul(Self.retrying + ["--json", "-d", dir.path, url], in: dir)
            #expect(outcome.status == 7)
            #expect(outcome.errorLines.count == 1, "\(outcome.standardError)")
            #expect(outcome.errorLines.first?.hasPrefix("haul: \(url): ") == true)
            let failed = try #require(outcome.jsonEvents().last)
            #expect((failed["error"] as? [String: Any])?["code"] as? String == code)
            #expect(server.requests.count == 1)
            #expect(listFiles(dir) == [])
        }
    }

    @Test(arguments: ["bytes 100-199/200000", "bytes 0-99/200000", "bytes 0-199999/300000", "bytes 0-99/*"])
    func aPartialAnswerForAnotherRangeExitsSeven(contentRange: String) async throws {
        let server = try HaulServer()
        ScriptedFile(size: 200_000) { _ in .partial(contentRange: contentRange) }.install(on: server, at: "/f.bin")
        try await withTemporaryDirectory { dir async throws in
            let url = server.url("/f.bin")
            let outcome = try await haul(Self.retrying + ["-d", dir.path, url], in: dir)
            #expect(outcome.status == 7)
            #expect(outcome.errorLines.count == 1, "\(outcome.standardError)")
            #expect(server.requests.count == 1)
            #expect(listFiles(dir) == [])
        }
    }

    /// A body cut short (Content-Length larger than what came), or 10 bytes then silence: the
    /// retry asks for the rest only, and the run exits 0 with the whole file.
    @Test(arguments: [ScriptedFile.Reply.closeAfter(50_000), .stallAfter(10)])
    func aCutOrStalledBodyIsRetriedResumedAndFinished(first: ScriptedFile.Reply) async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 200_000) { $0 == 0 ? first : .serve }
        file.install(on: server, at: "/f.bin")
        try await withTemporaryDirectory { dir async throws in
            let outcome = try await haul(Self.retrying + ["-q", "-d", dir.path, server.url("/f.bin")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir) == ["f.bin"])
            #expect(fileContents(dir.appendingPathComponent("f.bin")) == Data(file.content))
            let resumedAt = if case .closeAfter(let count) = first { count } else { 10 }
            #expect(server.requests.map { $0.header("Range") } == ["bytes=0-", "bytes=\(resumedAt)-199999"])
            #expect(file.bodyBytesSent == 200_000, "no byte sent twice")
        }
    }

    /// A run cut short leaves its partial and record; the next run asks for the rest with
    /// `If-Range`. A server that now ignores Range (200), or has a new file (another ETag),
    /// makes it start over: the result is the whole file of one version, never old bytes
    /// followed by new ones.
    @Test(arguments: ["ignores Range", "new ETag"])
    func aSecondRunStartsOverWhenTheServerCannotContinue(change: String) async throws {
        let server = try HaulServer()
        ScriptedFile(size: 200_000) { _ in .closeAfter(50_000) }.install(on: server, at: "/f.bin")
        try await withTemporaryDirectory { dir async throws in
            let arguments = Self.retrying.map { $0 == "--retries=3" ? "--retries=0" : $0 } + ["-q", "-d", dir.path, server.url("/f.bin")]
            let first = try await haul(arguments, in: dir)
            #expect(first.status == 4)
            #expect(listFiles(dir) == ["f.bin.part", "f.bin.resume"])

            let new = change == "new ETag"
                ? ScriptedFile(size: 300_000, seed: 8, etag: "\"v2\"") { _ in .serve }
                : ScriptedFile(size: 200_000) { _ in .ignoreRange }
            new.install(on: server, at: "/f.bin")
            let second = try await haul(arguments, in: dir)
            #expect(second.status == 0, "\(second.standardError)")
            #expect(server.requests[1].header("Range") == "bytes=50000-")
            #expect(server.requests[1].header("If-Range") == "\"v1\"")
            #expect(server.requests.count == (change == "new ETag" ? 3 : 2), "a new ETag in a 206 needs a fresh request")
            #expect(listFiles(dir) == ["f.bin"])
            #expect(fileContents(dir.appendingPathComponent("f.bin")) == Data(new.content))
        }
    }

    /// Chunked wins over a Content-Length; a gzip body nobody asked for is stored as sent.
    @Test func chunkedWithContentLengthAndAnUnaskedGzipBodyAreStoredAsSent() async throws {
        let server = try HaulServer()
        server.route("/te.txt") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                                 + "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        }
        try await withTemporaryDirectory { dir async throws in
            let outcome = try await haul(Self.retrying + ["-q", "-d", dir.path, server.url("/te.txt"),
                                                          server.url("/bytes/50000/z.bin?gzip")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            #expect(listFiles(dir) == ["te.txt", "z.bin"])
            #expect(fileContents(dir.appendingPathComponent("te.txt")) == Data("hello world".utf8))
            #expect(fileContents(dir.appendingPathComponent("z.bin")) == served(50_000))
            #expect(server.requests.allSatisfy { $0.header("Accept-Encoding") == "identity" })
        }
    }

    /// 503 with `Retry-After: 1`: the retry waits that second (`--json` says so), then succeeds.
    /// A 404 is never retried.
    @Test func retryAfterIsHonouredAndA404IsNotRetried() async throws {
        let server = try HaulServer()
        let busy = ScriptedFile(size: 1_000) { $0 == 0 ? .status(503, headers: "Retry-After: 1\r\n") : .serve }
        busy.install(on: server, at: "/busy.bin")
        try await withTemporaryDirectory { dir async throws in
            let outcome = try await haul(Self.retrying + ["--json", "-d", dir.path, server.url("/busy.bin")], in: dir)
            #expect(outcome.status == 0, "\(outcome.standardError)")
            let retrying = outcome.jsonEvents().filter { $0["event"] as? String == "retrying" }
            #expect(retrying.count == 1)
            #expect((retrying.first?["delay"] as? NSNumber)?.doubleValue == 1.0)
            #expect(listFiles(dir) == ["busy.bin"])

            let before = server.requests.count
            let missing = try await haul(Self.retrying + ["-d", dir.path, server.url("/status/404")], in: dir)
            #expect(missing.status == 8)
            #expect(server.requests.count - before == 1)
            #expect(listFiles(dir) == ["busy.bin"])
        }
    }

    /// Network failures exit 4 after one retry (`--retries=1`): a server that never answers,
    /// a head that never ends (the header deadline), a chunked body without its last chunk. (A
    /// head that trickles is in ``HostileWaitCLITests``.)
    @Test(arguments: [
        ("/silent", "headerTimeout", [String]()),
        ("/endless-headers", "headerTimeout", []),
        ("/chunked?size=3000&mode=missing-last", "truncatedBody", ["chunked.part"]),
    ])
    func networkFailuresAreRetriedOnceThenExitFour(path: String, code: String, files: [String]) async throws {
        try await Self.expectRetriedOnceThenExitFour(path: path, code: code, files: files)
    }

    /// Runs `haul --retries=1` on `path` of a new server, and expects exit 4 after one retry,
    /// ending with `code`, with `files` left in the folder.
    static func expectRetriedOnceThenExitFour(path: String, code: String, files: [String],
                                              sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir async throws in
            let url = server.url(path)
            let arguments = ["--retries=1", "--retry-wait=0.05", "--header-timeout=1", "--json", "-d", dir.path, url]
            let outcome = try await haul(arguments, in: dir, sourceLocation: sourceLocation)
            #expect(outcome.status == 4, sourceLocation: sourceLocation)
            let events = outcome.jsonEvents(sourceLocation: sourceLocation)
            #expect(eventNames(events).filter { $0 == "retrying" }.count == 1, sourceLocation: sourceLocation)
            #expect((events.last?["error"] as? [String: Any])?["code"] as? String == code, sourceLocation: sourceLocation)
            #expect(outcome.errorLines.last?.hasPrefix("haul: \(url): ") == true, "\(outcome.standardError)", sourceLocation: sourceLocation)
            #expect(server.requests.count == 2, sourceLocation: sourceLocation)
            #expect(listFiles(dir) == files, sourceLocation: sourceLocation)
        }
    }

    /// A local failure after the server answered (a length no disk can hold) exits 3 at once.
    @Test func aLocalFailureExitsThreeWithoutARetry() async throws {
        let server = try HaulServer()
        server.route("/huge.bin") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1152921504606846976\r\nETag: \"h\"\r\nAccept-Ranges: bytes\r\n\r\n")
            connection.waitUntilClosed()
        }
        try await withTemporaryDirectory { dir async throws in
            let outcome = try await haul(Self.retrying + ["-d", dir.path, server.url("/huge.bin")], in: dir)
            #expect(outcome.status == 3)
            #expect(outcome.errorLines.count == 1, "\(outcome.standardError)")
            #expect(server.requests.count == 1)
            #expect(!listFiles(dir).contains("huge.bin"))
        }
    }
}
