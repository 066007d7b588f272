import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

/// Issue 4, "Time": servers that stall, trickle or never answer. A stall or a trickle is
/// dropped, retried and resumed from the bytes on disk. (Trickled heads, a silent server and a
/// refused port are in `FailureTests.timeouts` and `FailureTests.refused`; the CPU use while
/// waiting is measured on the real binary in `HostileWireCLITests`.)
///
/// Exclusive: servers trickle and stall against low-speed limits, and the waits are timed.
@Suite("Hostile timing", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct HostileTimeTests {
    /// 10 bytes, then silence: the stall timeout drops the connection, the retry asks for byte
    /// 10 onwards, and the file is whole. No byte is sent twice.
    @Test func tenBytesThenSilenceIsRetriedAndResumed() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 100_000) { $0 == 0 ? .stallAfter(10) : .serve }
        file.install(on: server, at: "/f.bin")
        let downloader = hostileDownloader { $0.stallTimeout = .milliseconds(400) }
        try await withTemporaryDirectory { dir async throws in
            let result = try await downloader.file(from: url(server, "/f.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == file.content)
            #expect(server.requests.map { $0.header("Range") } == ["bytes=0-", "bytes=10-99999"])
            #expect(file.bodyBytesSent == 100_000)
            #expect(listFiles(dir) == ["f.bin"])
        }
    }

    /// A byte every 50 ms never trips the stall timeout, but stays under the low-speed floor:
    /// after the period it is dropped as stalled, and the retry resumes after the bytes that came.
    @Test func aTrickleBelowTheLowSpeedLimitIsDroppedAndResumed() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 100_000) { $0 == 0 ? .trickle(interval: 0.05) : .serve }
        file.install(on: server, at: "/f.bin")
        let downloader = hostileDownloader {
            $0.stallTimeout = .seconds(5)
            $0.lowSpeedLimit = Downloader.LowSpeedLimit(bytesPerSecond: 1024, period: .seconds(1))
        }
        try await withTemporaryDirectory { dir async throws in
            let started = ContinuousClock.now
            let result = try await downloader.file(from: url(server, "/f.bin"), to: .directory(dir))
            #expect(ContinuousClock.now - started >= .seconds(1), "the trickle gets its whole period")
            #expect(try contents(result.fileURL) == file.content)
            let ranges = server.requests.map { requestedRange($0) }
            try #require(ranges.count == 2)
            let resumedAt = try #require(ranges[1]?.first)
            #expect((5...40).contains(resumedAt), "about 20 bytes trickled in before the drop, and were kept")
            #expect(ranges[1]?.last == 99_999)
        }
    }

    /// With retries off, the trickle fails as `stalled` (exit 4), naming the floor, and the
    /// bytes that came stay for a resume.
    @Test func aTrickleWithoutRetriesFailsAsStalledAndKeepsThePartial() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 100_000) { _ in .trickle(interval: 0.05) }
        file.install(on: server, at: "/f.bin")
        let downloader = hostileDownloader(retries: 0) {
            $0.lowSpeedLimit = Downloader.LowSpeedLimit(bytesPerSecond: 1024, period: .milliseconds(600))
        }
        await withTemporaryDirectory { dir in
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/f.bin")), to: .directory(dir))
            #expect(error?.code == .stalled)
            #expect(error?.code.exitStatus == 4)
            #expect(error?.message == "the body arrived slower than 1024 bytes/s for 0.6 s (stalled)")
            #expect(server.requests.count == 1)
            #expect(listFiles(dir) == ["f.bin.part", "f.bin.resume"])
        }
    }

    /// Without a floor, a trickle is slow but fine: it finishes.
    @Test func withoutALowSpeedLimitATrickleFinishes() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 30) { _ in .trickle(interval: 0.03) }
        file.install(on: server, at: "/t.bin")
        let downloader = hostileDownloader(retries: 0) { $0.lowSpeedLimit = nil }
        try await withTemporaryDirectory { dir async throws in
            let result = try await downloader.file(from: url(server, "/t.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == file.content)
            #expect(server.requests.count == 1)
        }
    }

    /// Haul's own rate limit below the floor is not the server's slowness: only time spent
    /// waiting for the server counts, so a download capped at 512 B/s still finishes.
    @Test func ourOwnRateLimitBelowTheFloorIsNotAStall() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 1_500) { _ in .serve }
        file.install(on: server, at: "/capped.bin")
        let downloader = hostileDownloader(retries: 0) {
            $0.rateLimit = 512
            $0.lowSpeedLimit = Downloader.LowSpeedLimit(bytesPerSecond: 1024, period: .milliseconds(500))
        }
        try await withTemporaryDirectory { dir async throws in
            let result = try await downloader.file(from: url(server, "/capped.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == file.content)
            #expect(server.requests.count == 1)
        }
    }

    /// The monitor alone: windows of waiting, compared with the floor.
    @Test(arguments: [
        // (reads as (bytes, waited ms), the index of the read that closes a slow window, or nil)
        ([(1, 100), (1, 100), (1, 100), (1, 800)], 3),            // 4 bytes in 1.1 s
        ([(2_000, 900), (1, 100), (1, 900)], nil),                 // 2001 bytes in 1 s: fine, window restarts
        ([(2_000, 1_000), (0, 0), (500, 1_000)], 2),               // second window: 500 bytes in 1 s
        ([(1_024, 1_000)], nil),                                   // exactly the floor
        ([(1_023, 1_000)], 0),                                     // one byte under
        ([(100, 0), (100, 0), (100, 0)], nil),                     // no waiting at all: never judged
    ] as [([(Int, Int64)], Int?)])
    func theMonitorJudgesWindowsOfWaiting(reads: [(Int, Int64)], slowAt: Int?) {
        var monitor = LowSpeedMonitor(LowSpeedMonitor.SpeedFloor(bytesPerSecond: 1024, period: .seconds(1)))
        let verdicts = reads.map { monitor.received($0.0, after: .milliseconds($0.1)) }
        #expect(verdicts.firstIndex(of: true) == slowAt)
    }

    /// Settings that cannot work are refused before any network I/O.
    @Test(arguments: [Downloader.LowSpeedLimit(bytesPerSecond: 0), Downloader.LowSpeedLimit(period: .zero)])
    func aLowSpeedLimitThatCannotWorkIsAUsageError(limit: Downloader.LowSpeedLimit) async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let downloader = hostileDownloader { $0.lowSpeedLimit = limit }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/bytes/10")), to: .directory(dir))
            #expect(error?.code == .invalidArgument)
            #expect(server.requests.isEmpty)
        }
    }
}
