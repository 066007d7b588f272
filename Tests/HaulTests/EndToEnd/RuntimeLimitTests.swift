import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore

/// Limits changed while downloads run (`Downloader.setRateLimit`) and a download's own
/// connections and cap (`DownloadRequest.connections`, `.rateLimit`). Only lower bounds on
/// time are asserted (a loaded machine may always be slower).
///
/// Exclusive: paces real transfers and checks how long they take.
@Suite("Runtime limits", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct RuntimeLimitTests {
    static let mib: Int64 = 1 << 20

    @Test func aCapSetWhileATransferRunsSlowsItAndLiftingItLetsItFinish() async throws {
        let server = try HaulServer()
        let resource = Validators.etag.resource(size: 8 * Self.mib, rate: 2 * Int(Self.mib))
        server.setResource("/runtime.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 1)
            #expect(downloader.rateLimit == nil)
            let download = downloader.download(url(server, "/runtime.bin"), to: .directory(dir))
            let completed = SharedStateLock<Int64>(0)
            async let outcome = collect(download) { event in
                if case .progress(let progress) = event { completed.withLock { $0 = progress.completedBytes } }
            }
            await eventually(timeout: .seconds(10)) { completed.withLock { $0 } >= Self.mib }
            downloader.setRateLimit(128 << 10)
            #expect(downloader.rateLimit == 128 << 10)
            try await Task.sleep(for: .milliseconds(500))   // the restart reconnects; the burst passes
            let before = completed.withLock { $0 }
            try await Task.sleep(for: .seconds(1))
            let during = completed.withLock { $0 } - before
            #expect(during < 400 << 10, "\(during) bytes in a second under a 128 KiB/s cap")
            downloader.setRateLimit(nil)
            let run = await outcome
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(!run.names.contains("paused"), "a restart sends no event: \(run.names)")
            #expect(try contents(dir.appendingPathComponent("runtime.bin")) == resource.bytes(0..<resource.size))
        }
    }

    @Test func aRequestsOwnConnectionsAndCapApply() async throws {
        let server = try HaulServer()
        let resource = Validators.etag.resource(size: 4 * Self.mib, rate: 0)
        server.setResource("/own.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 4)
            var request = DownloadRequest(url: url(server, "/own.bin"))
            request.connections = 2
            request.rateLimit = 2 * Self.mib
            let clock = ContinuousClock()
            let start = clock.now
            let run = await runToEnd(downloader, request, to: .directory(dir))
            let elapsed = clock.now - start
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 2)
            #expect(elapsed >= .milliseconds(1700), "4 MiB at 2 MiB/s took only \(elapsed)")
            #expect(try contents(dir.appendingPathComponent("own.bin")) == resource.bytes(0..<resource.size))
        }
    }

    @Test func aRequestWithSeventeenConnectionsIsAUsageError() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            var request = DownloadRequest(url: url(server, "/bytes/10"))
            request.connections = 17
            let error = await expectFailure(resumeDownloader(), request, to: .directory(dir))
            #expect(error?.code == .invalidArgument)
        }
    }

    @Test func aSegmentedTransferPublishesItsCompletedRanges() async throws {
        let server = try HaulServer()
        let resource = Validators.etag.resource(size: 6 * Self.mib, rate: 3 * Int(Self.mib))
        server.setResource("/ranges.bin", resource)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 2)
            let download = downloader.download(url(server, "/ranges.bin"), to: .directory(dir))
            await eventually(timeout: .seconds(10)) { (download.completedRanges ?? []).reduce(0) { $0 + $1.count } > 0 }
            let ranges = try #require(download.completedRanges)
            #expect(ranges.allSatisfy { $0.upperBound <= resource.size })
            #expect(ranges.count <= 2)
            download.cancel()
            _ = await collect(download)
        }
    }

}
