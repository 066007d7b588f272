import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulURLSession

/// Where the `URLSession` transport cannot behave like Haul's own client, and why.
///
/// - Header limits: Haul's parser refuses a head over 64 KiB or 200 lines (`headersTooLarge`);
///   URLSession parses heads itself with its own, larger limits.
/// - Raw framing errors (a bad `Content-Length`, broken chunks, bytes beyond the length): URLSession
///   (libcurl on Linux, CFNetwork on Apple platforms) reports or repairs them its own way, mostly as
///   a generic network error, so Haul's `invalidContentLength` / `invalidChunk` codes are native-only.
/// - TLS options: URLSession verifies certificates itself; FoundationNetworking has no
///   `SecTrust`, so an extra CA file or `insecure` cannot be honoured and is refused up front.
/// - Back-pressure on Linux: a suspended FoundationNetworking task sends its request again when
///   resumed, so ranged requests go in windows of 16 MiB instead (``SessionWindowTests``), and a
///   server that ignores `Range` streams at wire speed (more than 64 MiB ahead of the disk ends the
///   attempt, retryably).
/// - Keep-alive: URLSession pools its own connections (``KeepAliveTests`` are native-only).
@Suite("Where the transports differ", .throttled, .timeLimit(.minutes(1)))
struct TransportDifferenceTests {
    @Test func aHeadOverHaulsLineLimitFailsNativelyAndPassesThroughURLSession() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let request = DownloadRequest(url: url(server, "/headers?count=250"))
            let native = await expectFailure(testDownloader(), request, to: .directory(dir.appendingPathComponent("n")))
            #expect(native?.code == .headersTooLarge)
            let session = testDownloader { $0.transport = .urlSession }
            let result = try await session.file(from: request, to: .directory(dir.appendingPathComponent("u")))
            #expect(try contents(result.fileURL) == Array("headers\n".utf8))
        }
    }

    @Test(arguments: [Downloader.TLSOptions(insecure: true), Downloader.TLSOptions(extraCAFile: "/nonexistent/ca.pem")])
    func tlsOptionsAreRefusedBeforeAnyRequest(options: Downloader.TLSOptions) async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.transport = .urlSession; $0.tls = options }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/bytes/10/x.bin")), to: .directory(dir))
            #expect(error?.code == .notSupported)
            #expect(error?.code.exitStatus == 2)
            #expect(server.requests.isEmpty)
            #expect(listFiles(dir) == [])
        }
    }

}
