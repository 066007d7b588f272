import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulURLSession

#if os(Linux)
/// On Linux a `URLSession` task cannot be paused, so ranged requests go in windows of
/// ``SessionReader/rangeWindow`` bytes: the engine still sees one response, and a file that
/// changes between two windows is caught by `If-Range`.
///
/// Exclusive: a paced download is split into windows while the file changes.
@Suite("URLSession range windows (Linux)", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct SessionWindowTests {
    static let window = SessionReader.rangeWindow ?? 0

    @Test func aLargeFileOnOneConnectionIsAskedForWindowByWindow() async throws {
        let server = try HaulServer()
        let size = 2 * Self.window + 12_345
        let resource = Validators.etag.resource(size: size)
        server.setResource("/big.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 1) { $0.transport = .urlSession }
            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/big.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.totalBytes == size)
            let ranges = server.requests.map { $0.header("Range") }
            #expect(ranges == ["bytes=0-\(Self.window - 1)", "bytes=\(Self.window)-\(2 * Self.window - 1)",
                               "bytes=\(2 * Self.window)-\(size - 1)"])
            #expect(server.requests.dropFirst().allSatisfy { $0.header("If-Range") == "\"v1\"" })
            #expect(try contents(dir.appendingPathComponent("big.bin")) == resource.bytes(0..<size))
        }
    }

    @Test func aFileThatChangesBetweenWindowsStartsOver() async throws {
        let server = try HaulServer()
        let size = Self.window + 1_000_000
        let old = Validators.etag.resource(size: size, seed: 1, rate: 8 << 20)
        let new = Validators.etag.resource(size: size, seed: 2, etag: "\"v2\"")
        server.setResource("/file.bin", old)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 1) { $0.transport = .urlSession }
            let download = downloader.download(url(server, "/file.bin"), to: .directory(dir))
            let running = Task { await collect(download) }
            #expect(await eventually { server.bodyBytesSent >= 1_000_000 })
            server.setResource("/file.bin", new)
            let run = await running.value
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(!run.startingOver.isEmpty, "the change was noticed: \(run.names)")
            #expect(try contents(dir.appendingPathComponent("file.bin")) == new.bytes(0..<size))
        }
    }
}
#endif
