import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul

/// `rateLimit` caps the whole downloader: every connection of every download shares it.
/// Only lower bounds on the time are asserted (a loaded machine may always be slower).
///
/// Exclusive: it times downloads under the downloader's rate limit.
@Suite("The downloader's rate limit", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct QueueRateLimitTests {
    static let mib: Int64 = 1 << 20

    /// At least (4 MiB - a tenth of a second of burst) / 2 MiB/s = 1.9 s (1.8 s asked); 4 MiB
    /// is split over the four connections.
    @Test func fourMebibytesAtTwoMebibytesPerSecondTakeAtLeastOnePointEightSeconds() async throws {
        let server = try HaulServer()
        let resource = Validators.etag.resource(size: 4 * Self.mib, rate: 0)
        server.setResource("/limited.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 4) { $0.rateLimit = 2 * Self.mib }
            let clock = ContinuousClock()
            let start = clock.now
            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/limited.bin")), to: .directory(dir))
            let elapsed = clock.now - start

            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 4)
            #expect(elapsed >= .milliseconds(1800), "4 MiB at 2 MiB/s took only \(elapsed)")
            #expect(try contents(dir.appendingPathComponent("limited.bin")) == resource.bytes(0..<resource.size))
        }
    }

    /// Together at least 1.4 s, as one of 3 MiB; one alone would need half of that.
    @Test func twoDownloadsShareOneLimit() async throws {
        let server = try HaulServer()
        let resource = Validators.etag.resource(size: 3 * Self.mib / 2, rate: 0)
        server.setResource("/a.bin", resource)
        server.setResource("/b.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 2) { $0.rateLimit = 2 * Self.mib }
            let clock = ContinuousClock()
            let start = clock.now
            let a = downloader.download(url(server, "/a.bin"), to: .directory(dir))
            let b = downloader.download(url(server, "/b.bin"), to: .directory(dir))
            let (first, second) = await (collect(a), collect(b))
            let elapsed = clock.now - start

            #expect(first.error == nil && second.error == nil)
            #expect(elapsed >= .milliseconds(1300), "2 x 1.5 MiB at 2 MiB/s in all took only \(elapsed)")
            #expect(try contents(dir.appendingPathComponent("a.bin")) == resource.bytes(0..<resource.size))
            #expect(try contents(dir.appendingPathComponent("b.bin")) == resource.bytes(0..<resource.size))
        }
    }
}
