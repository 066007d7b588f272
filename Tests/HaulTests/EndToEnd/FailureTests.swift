import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Exclusive: a head trickles in until the header deadline.
@Suite("Failures: exact codes, and no file but the expected ones", .exclusive, .serialized)
struct FailureTests {
    @Test("non-2xx statuses fail with their code and never save the body", arguments: [
        (404, "httpStatus", Int32(8)), (500, "httpStatus", 8), (410, "httpStatus", 8),
        (401, "authenticationRefused", 6), (403, "authenticationRefused", 6), (407, "authenticationRefused", 6),
        (300, "redirectRefused", 7), (304, "redirectRefused", 7),
    ])
    func statuses(status: Int, code: String, exit: Int32) async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let error = await expectFailure(testDownloader(), DownloadRequest(url: url(server, "/status/\(status)")), to: .directory(dir))
            #expect(error?.code.name == code)
            #expect(error?.code.exitStatus == exit)
            #expect(error?.httpStatus == status)
            #expect(listFiles(dir) == [])
        }
    }

    @Test("framing and protocol errors", arguments: [
        ("/bytes/100?length=-1", "invalidContentLength"),
        ("/bytes/100?length=abc", "invalidContentLength"),
        ("/bytes/100?length=99999999999999999999999", "invalidContentLength"),
        ("/bytes/100?length=100,%20101", "invalidContentLength"),
        ("/chunked?size=1000&mode=negative", "invalidChunk"),
        ("/chunked?size=1000&mode=overflow", "invalidChunk"),
        ("/chunked?size=1000&mode=nonhex", "invalidChunk"),
        ("/chunked?size=1000&mode=missing-last", "truncatedBody"),
        ("/garbage", "malformedResponse"),
        ("/headers?size=1048576", "headersTooLarge"),
        ("/headers?count=100000", "headersTooLarge"),
        ("/bytes/200000?drop-after=1000", "truncatedBody"),
        ("/loop", "tooManyRedirects"),
        ("/redirect/21", "tooManyRedirects"),
    ])
    func protocolErrors(path: String, code: String) async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let error = await expectFailure(testDownloader(), DownloadRequest(url: url(server, path)), to: .directory(dir))
            #expect(error?.code.name == code)
            // Only a resumable network failure keeps a partial file (and its resume record); nothing gets a final name.
            #expect(listFiles(dir).allSatisfy { $0.hasSuffix(".part") || $0.hasSuffix(".resume") })
            if error?.code.isRetryableNetwork == false { #expect(listFiles(dir) == []) }
        }
    }

    @Test("twenty redirects are followed")
    func twentyRedirects() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let result = try await testDownloader().file(from: url(server, "/redirect/20?to=%2Fbytes%2F10%2Fend.bin"), to: .directory(dir))
            #expect(result.fileURL.lastPathComponent == "20")
            #expect(try contents(result.fileURL) == expectedContent(10))
        }
    }

    @Test("timeouts: a stall, a silent server (a stall too), trickling headers (the header deadline)")
    func timeouts() async throws {
        let server = try HaulServer()
        let downloader = testDownloader {
            $0.stallTimeout = .milliseconds(500)
            $0.headerTimeout = .milliseconds(700)
        }
        await withTemporaryDirectory { dir in
            let stalled = await expectFailure(downloader, DownloadRequest(url: url(server, "/bytes/1000000/s.bin?stall-after=10")), to: .directory(dir))
            #expect(stalled?.code == .stalled)
            #expect(listFiles(dir) == ["s.bin.part", "s.bin.resume"])
            // No byte of the head for the stall timeout: a stall, before the header deadline.
            let silent = await expectFailure(downloader, DownloadRequest(url: url(server, "/silent")), to: .directory(dir))
            #expect(silent?.code == .stalled)
            let trickle = await expectFailure(downloader, DownloadRequest(url: url(server, "/trickle-headers?interval=100")), to: .directory(dir))
            #expect(trickle?.code == .headerTimeout)
        }
    }

    @Test("headers that never end hit the header deadline")
    func endlessHeaders() async throws {
        let server = try HaulServer()
        let downloader = testDownloader { $0.headerTimeout = .milliseconds(800) }
        await withTemporaryDirectory { dir in
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/endless-headers")), to: .directory(dir))
            #expect(error?.code == .headerTimeout)
            #expect(listFiles(dir) == [])
        }
    }

    @Test("a refused port fails with connectionRefused")
    func refused() async throws {
        let server = try HaulServer()
        let dead = server.url("/bytes/1")
        server.stop()
        await withTemporaryDirectory { dir in
            let error = await expectFailure(testDownloader(), DownloadRequest(url: URL(string: dead)!), to: .directory(dir))
            #expect(error?.code == .connectionRefused)
            #expect(error?.code.exitStatus == 4)
        }
    }

    @Test("retryable failures are retried, then succeed", .timeLimit(.minutes(1)))
    func retriesThenSucceeds() async throws {
        let server = try HaulServer()
        let failures = RequestCounter()
        server.route("/flaky") { _, connection in
            if failures.next() < 2 {
                try connection.write("HTTP/1.1 503 Busy\r\nContent-Length: 0\r\n\r\n")
            } else {
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            }
            connection.close()
        }
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.retry = RetryPolicy(maximumRetries: 3, initialDelay: .milliseconds(10)) }
            let download = downloader.download(url(server, "/flaky"), to: .directory(dir))
            var retries = 0
            for try await event in download.events {
                if case .retrying(_, _, let error) = event {
                    retries += 1
                    #expect(error.httpStatus == 503)
                }
            }
            #expect(retries == 2)
            #expect(try contents(dir.appendingPathComponent("flaky")) == Array("ok".utf8))
        }
    }

    @Test("bad URLs and headers fail before any network I/O", arguments: [
        "http://127.0.0.1:99999/x", "ftp://127.0.0.1/x", "http://[::1/x",
    ])
    func badInput(text: String) async throws {
        await withTemporaryDirectory { dir in
            guard let bad = URL(string: text) else { return }   // Foundation already refuses it: nothing to send
            let error = await expectFailure(testDownloader(), DownloadRequest(url: bad), to: .directory(dir))
            #expect(error?.code.exitStatus == 2)
        }
    }

    @Test("settings that cannot work are refused before any network I/O")
    func badConfiguration() async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            for adjust in [{ (c: inout Downloader.Configuration) in c.bufferSize = 0 },
                           { $0.stallTimeout = .zero }, { $0.progressInterval = .zero }] {
                let error = await expectFailure(testDownloader(adjust), DownloadRequest(url: url(server, "/bytes/10")), to: .directory(dir))
                #expect(error?.code == .invalidArgument)
            }
            #expect(server.requests.isEmpty)
        }
    }

    @Test("a header with a line break is refused before any request is sent")
    func badHeader() async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let request = DownloadRequest(url: url(server, "/bytes/10"), headers: [("X-Evil", "a\r\nInjected: yes")])
            let error = await expectFailure(testDownloader(), request, to: .directory(dir))
            #expect(error?.code == .invalidArgument)
            #expect(server.requests.isEmpty)
        }
    }

    @Test("a folder that cannot be created fails with exit 3 before any network I/O")
    func unwritableFolder() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let file = dir.appendingPathComponent("plain-file")
            try Data("x".utf8).write(to: file)
            let error = await expectFailure(testDownloader(), DownloadRequest(url: url(server, "/bytes/10")),
                                            to: .directory(file.appendingPathComponent("sub")))
            #expect(error?.code == .fileSystem)
            #expect(error?.code.exitStatus == 3)
            #expect(server.requests.isEmpty)
        }
    }
}

/// Counts calls across server threads.
final class RequestCounter: Sendable {
    private let count = SharedStateLock(0)
    func next() -> Int { count.withLock { value in defer { value += 1 }; return value } }
}

import HaulCore

extension DownloadError.Code {
    /// Network failures after which the partial file is kept for resume.
    var isRetryableNetwork: Bool { exitStatus == 4 }
}
