import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP
@testable import HaulURLSession

/// The shared end-to-end behaviours, run with both transports: Haul's own HTTP/1.1 client and a
/// `URLSession` data task. The engine (storage, resume, segments, naming, status and
/// `Content-Range` checks, redirect policy) is the same, so the outcomes must be too.
///
/// What cannot match is listed in ``TransportDifferenceTests``.
@Suite("Both transports behave alike", .throttled, .timeLimit(.minutes(1)))
struct TransportParityTests {
    typealias Transport = Downloader.Transport
    static let transports: [Transport] = [.native, .urlSession]

    /// The `Range` of a request for everything from `first`: open-ended, except where the
    /// URLSession transport asks in windows (Linux; the engine still sees one response).
    static func openRange(from first: Int64, _ transport: Transport) -> String {
        if transport == .urlSession, let window = SessionReader.rangeWindow { return "bytes=\(first)-\(first + window - 1)" }
        return "bytes=\(first)-"
    }

    @Test(arguments: transports, [0, 1, 3 * 1024 * 1024 + 11])
    func aWholeFileArrivesByteForByteWithHaulsRequestHeaders(transport: Transport, size: Int) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = transport; $0.connectionsPerDownload = 1 }
            let result = try await downloader.file(from: url(server, "/bytes/\(size)/data.bin"), to: .directory(dir))
            #expect(result.fileURL.lastPathComponent == "data.bin")
            #expect(result.response.status == (size == 0 ? 416 : 206))
            #expect(result.byteCount == Int64(size))
            #expect(try contents(result.fileURL) == expectedContent(size))
            #expect(listFiles(dir) == ["data.bin"])
            let request = try #require(server.requests.first)
            #expect(request.header("Accept-Encoding") == "identity")
            #expect(request.header("User-Agent") == "haul/\(HaulInfo.version)")
            #expect(request.header("Range") == Self.openRange(from: 0, transport))
        }
    }

    @Test(arguments: transports, ["chunked", "no-length"])
    func aBodyWithoutContentLengthIsReassembled(transport: Transport, framing: String) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = transport }
            let result = try await downloader.file(from: url(server, "/bytes/300001/c.bin?\(framing)"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(300_001))
        }
    }

    @Test(arguments: transports, [(404, DownloadError.Code.httpStatus), (403, .authenticationRefused), (503, .httpStatus)])
    func anErrorStatusFailsWithItsCodeAndSavesNothing(transport: Transport, expected: (status: Int, code: DownloadError.Code)) async throws {
        let (status, code) = expected
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = transport }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/status/\(status)")), to: .directory(dir))
            #expect(error?.code == code)
            #expect(error?.httpStatus == status)
            #expect(listFiles(dir) == [])
        }
    }

    @Test(arguments: transports, [302, 307, 308])
    func aRedirectToAnotherOriginDropsCredentialsAndUserHeaders(transport: Transport, status: Int) async throws {
        let origin = try HaulServer()
        let other = try HaulServer()
        let target = other.url("/bytes/100/file.bin").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        var components = URLComponents(string: origin.url("/redirect-to?url=\(target)&status=\(status)"))!
        components.user = "alice"
        components.password = "pw-secret"
        let secrets = [(name: "Authorization", value: "Bearer secret-token"), (name: "X-Api-Key", value: "secret-key")]
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = transport }
            let result = try await downloader.file(from: DownloadRequest(url: components.url!, headers: secrets), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(100))
            let first = try #require(origin.requests.first)
            #expect(first.header("Authorization") == "Bearer secret-token")
            #expect(first.header("X-Api-Key") == "secret-key")
            let second = try #require(other.requests.first)
            #expect(second.header("Authorization") == nil)
            #expect(second.header("X-Api-Key") == nil)
            #expect(second.headers.allSatisfy { !$0.value.contains("secret") })
        }
    }

    @Test(arguments: transports, ["file:///etc/passwd", "ftp://127.0.0.1/x"])
    func aRedirectToAnotherSchemeIsRefused(transport: Transport, location: String) async throws {
        let server = try HaulServer()
        let encoded = location.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = transport }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/redirect-to?url=\(encoded)")), to: .directory(dir))
            #expect(error?.code == .redirectRefused)
            #expect(error?.code.exitStatus == 7)
            #expect(listFiles(dir) == [])
        }
    }

    @Test(arguments: transports, [(20, true), (21, false)])
    func twentyRedirectsAreFollowedAndTheTwentyFirstIsRefused(transport: Transport, chain: (hops: Int, succeeds: Bool)) async throws {
        let (hops, succeeds) = chain
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = transport }
            let request = DownloadRequest(url: url(server, "/redirect/\(hops)?to=%2Fbytes%2F100"))
            if succeeds {
                let result = try await downloader.file(from: request, to: .directory(dir))
                #expect(try contents(result.fileURL) == expectedContent(100))
            } else {
                let error = await expectFailure(downloader, request, to: .directory(dir))
                #expect(error?.code == .tooManyRedirects)
                #expect(listFiles(dir) == [])
            }
        }
    }

    @Test(arguments: transports)
    func aServerThatGoesSilentStallsAndThePartialIsKept(transport: Transport) async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = transport; $0.stallTimeout = .milliseconds(500) }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/bytes/1000000/s.bin?stall-after=10")),
                                            to: .directory(dir))
            #expect(error?.code == .stalled)
            #expect(listFiles(dir) == ["s.bin.part", "s.bin.resume"])
        }
    }

    @Test(arguments: transports)
    func aSilentServerHitsTheHeaderTimeout(transport: Transport) async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = transport; $0.headerTimeout = .milliseconds(700) }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/silent")), to: .directory(dir))
            #expect(error?.code == .headerTimeout)
            #expect(listFiles(dir) == [])
        }
    }

    @Test(arguments: transports)
    func aBodyCutShortIsRetriedAndResumed(transport: Transport) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader(connections: 1) { $0.transport = transport }
            // Every answer drops after 400,000 bytes: two retries, each asking for the rest.
            let result = try await downloader.file(from: url(server, "/bytes/1000000/cut.bin?drop-after=400000"),
                                                   to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(1_000_000))
        }
    }
}

/// The shared behaviours that need a paced server: a download split, cancelled or paused while
/// it runs, and the downloader's rate limit, with both transports.
///
/// Exclusive: paced downloads are split, cancelled and paused mid-way.
@Suite("Both transports behave alike on paced transfers", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct TransportParityPacedTests {
    typealias Transport = Downloader.Transport
    @Test(arguments: TransportParityTests.transports)
    func aLargeFileIsSplitIntoRangedRequestsThatCoverIt(transport: Transport) async throws {
        let server = try HaulServer()
        let size: Int64 = 10 << 20
        let resource = Validators.etag.resource(size: size, rate: 4 << 20)
        server.setResource("/big.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 4) { $0.transport = transport }
            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/big.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 4)
            let ranges = server.requests.compactMap(requestedRange)
            #expect(ranges.count == server.requests.count, "every request is ranged")
            #expect(Set(ranges.map(\.first)).count >= 4, "at least four segments: \(ranges)")
            #expect(server.requests.dropFirst().allSatisfy { $0.header("If-Range") == "\"v1\"" })
            // A segment that ends early (its tail was taken over) stops reading at once with Haul's
            // client; URLSession has read ahead by then (up to a window, more on a loaded machine),
            // so the server sends more. Still far from a second copy of the file.
            let slack = transport == .native ? size / 10 : size / 2
            #expect(server.bodyBytesSent < size + slack, "segments overlapped: \(server.bodyBytesSent) bytes sent for \(size)")
            #expect(listFiles(dir) == ["big.bin"])
            #expect(try contents(dir.appendingPathComponent("big.bin")) == resource.bytes(0..<size))
        }
    }

    @Test(arguments: TransportParityTests.transports, [1, 4])
    func aCancelledDownloadResumesFromTheFirstMissingByte(transport: Transport, connections: Int) async throws {
        let server = try HaulServer()
        let size: Int64 = 4_000_000
        try await withTemporaryDirectory { dir in
            let downloader = resumeDownloader(connections: connections) { $0.transport = transport }
            let slow = Validators.etag.resource(size: size, rate: 400_000 / connections)
            let record = try await interruptFirstRun(server, slow, downloader, in: dir, after: 300_000)
            let resumeAt = firstMissingByte(record)

            server.setResource("/file.bin", Validators.etag.resource(size: size, rate: nil))
            let before = server.requests.count
            let second = await runToEnd(downloader, DownloadRequest(url: url(server, "/file.bin")), to: .directory(dir))

            #expect(second.error == nil, "\(second.error?.description ?? "")")
            let seen = requests(of: server, after: before)
            #expect(seen.first?.header("Range") == TransportParityTests.openRange(from: resumeAt, transport))
            #expect(seen.allSatisfy { $0.header("If-Range") == "\"v1\"" && (requestedRange($0)?.first ?? 0) >= resumeAt })
            #expect((second.started?.resumedFrom ?? 0) > 0)
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == slow.bytes(0..<size))
        }
    }

    @Test(arguments: TransportParityTests.transports)
    func pauseClosesTheRequestsAndResumeContinuesFromTheRecord(transport: Transport) async throws {
        let server = try HaulServer()
        let size: Int64 = 6_000_000
        let resource = Validators.etag.resource(size: size, rate: 600_000)
        server.setResource("/file.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 3) { $0.transport = transport }
            let download = downloader.download(url(server, "/file.bin"), to: .directory(dir))
            let log = EventLog()
            let running = Task { await collect(download) { log.append($0) } }
            #expect(await eventually { server.bodyBytesSent >= 300_000 })
            download.pause()
            #expect(await eventually { log.contains { if case .paused = $0 { true } else { false } } }, "no .paused event")
            #expect(await waitForIdle(server), "the requests stay open while paused")
            let requestsWhenPaused = server.requests.count
            let record = try #require(loadResumeRecord("file.bin", in: dir))

            server.setResource("/file.bin", Validators.etag.resource(size: size, rate: nil))
            download.resume()
            let outcome = await running.value
            #expect(outcome.error == nil, "\(outcome.error?.description ?? "")")
            let afterResume = requests(of: server, after: requestsWhenPaused)
            #expect(afterResume.first?.header("Range") == TransportParityTests.openRange(from: firstMissingByte(record), transport))
            #expect(listFiles(dir) == ["file.bin"])
            #expect(try contents(dir.appendingPathComponent("file.bin")) == resource.bytes(0..<size))
        }
    }

    @Test(arguments: TransportParityTests.transports)
    func cancellingKeepsThePartialFileAndItsRecord(transport: Transport) async throws {
        let server = try HaulServer(configuration: .init(rateLimit: 100_000))
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = transport }
            let download = downloader.download(url(server, "/bytes/5000000/slow.bin"), to: .directory(dir))
            let run = await collect(download) { event in
                if case .progress(let p) = event, p.completedBytes > 0 { download.cancel() }
            }
            #expect(run.error?.code == .cancelled)
            #expect(listFiles(dir) == ["slow.bin.part", "slow.bin.resume"])
        }
    }

    @Test(arguments: TransportParityTests.transports)
    func aRateLimitedDownloadCompletes(transport: Transport) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = transport; $0.rateLimit = 4 << 20 }
            let result = try await downloader.file(from: url(server, "/bytes/3000000/r.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(3_000_000))
        }
    }
}
