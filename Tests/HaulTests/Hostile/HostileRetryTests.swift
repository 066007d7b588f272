import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP

/// Issue 4, "Retry": which failures are retried, how long Haul waits (`Retry-After` honoured up
/// to the cap), and that a retry resumes from the bytes on disk.
///
/// Exclusive: it asserts that retries wait the announced delays.
@Suite("Hostile retries", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct HostileRetryTests {
    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func retryableStatusesAreRetried(status: Int) async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 10_000) { $0 == 0 ? .status(status, headers: "") : .serve }
        file.install(on: server, at: "/f.bin")
        try await withTemporaryDirectory { dir async throws in
            let run = await runToEnd(hostileDownloader(), DownloadRequest(url: url(server, "/f.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(retries(run).map { $0.error.httpStatus } == [status])
            #expect(server.requests.count == 2)
            #expect(listFiles(dir) == ["f.bin"])
            #expect(try contents(dir.appendingPathComponent("f.bin")) == file.content)
        }
    }

    /// A connection closed before any answer (a network error) is retried too.
    @Test func aHangUpIsRetried() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 10_000) { $0 < 2 ? .hangUp : .serve }
        file.install(on: server, at: "/f.bin")
        try await withTemporaryDirectory { dir async throws in
            let run = await runToEnd(hostileDownloader(), DownloadRequest(url: url(server, "/f.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(retries(run).map(\.error.code) == [.connectionReset, .connectionReset])
            #expect(retries(run).map(\.attempt) == [1, 2])
            let delays = retries(run).map(\.delay)
            #expect((0.01...0.02).contains(delays[0]) && (0.02...0.04).contains(delays[1]), "exponential, jittered: \(delays)")
            #expect(server.requests.count == 3)
            #expect(try contents(dir.appendingPathComponent("f.bin")) == file.content)
        }
    }

    /// 404 and the other 4xx are answers, not accidents: never retried.
    @Test(arguments: [(400, Int32(8)), (404, 8), (405, 8), (410, 8), (451, 8), (401, 6), (403, 6)])
    func otherClientErrorsAreNotRetried(status: Int, exit: Int32) async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 10_000) { _ in .status(status, headers: "Retry-After: 0\r\n") }
        file.install(on: server, at: "/f.bin")
        await withTemporaryDirectory { dir in
            let error = await expectFailure(hostileDownloader(retries: 5), DownloadRequest(url: url(server, "/f.bin")), to: .directory(dir))
            #expect(error?.httpStatus == status)
            #expect(error?.code.exitStatus == exit)
            #expect(server.requests.count == 1)
            #expect(listFiles(dir) == [])
        }
    }

    /// A local failure after the server answered is never retried: a disk too small for the
    /// announced length, a destination that exists under `--on-conflict=fail`.
    @Test func localFailuresAreNotRetried() async throws {
        let server = try HaulServer()
        server.route("/huge.bin") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1152921504606846976\r\nETag: \"h\"\r\nAccept-Ranges: bytes\r\n\r\n")
            connection.waitUntilClosed()
        }
        try await withTemporaryDirectory { dir async throws in
            let full = await expectFailure(hostileDownloader(retries: 5), DownloadRequest(url: url(server, "/huge.bin")), to: .directory(dir))
            #expect(full?.code == .diskFull)
            #expect(full?.code.exitStatus == 3)
            #expect(server.requests.count == 1)
            #expect(!listFiles(dir).contains("huge.bin"))

            try Data("mine".utf8).write(to: dir.appendingPathComponent("taken.bin"))
            let before = server.requests.count
            let request = DownloadRequest(url: url(server, "/bytes/100/taken.bin"), conflictPolicy: .fail)
            let exists = await expectFailure(hostileDownloader(retries: 5), request, to: .directory(dir))
            #expect(exists?.code == .destinationExists)
            #expect(exists?.code.exitStatus == 10)
            #expect(server.requests.count - before == 1)
            #expect(try contents(dir.appendingPathComponent("taken.bin")) == Array("mine".utf8))
        }
    }

    /// When the transfer itself gives up (its connection failed more than the retries allow),
    /// the next attempt of the download asks for the first byte not on disk, not for byte 0.
    @Test func aRetriedAttemptResumesFromTheBytesOnDisk() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 200_000) { $0 < 2 ? .closeAfter(50_000) : .serve }
        file.install(on: server, at: "/f.bin")
        try await withTemporaryDirectory { dir async throws in
            let run = await runToEnd(hostileDownloader(retries: 1), DownloadRequest(url: url(server, "/f.bin")), to: .directory(dir))
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(retries(run).map(\.error.code) == [.truncatedBody])
            #expect(server.requests.map { $0.header("Range") } == ["bytes=0-", "bytes=50000-199999", "bytes=100000-"])
            #expect(server.requests.last?.header("If-Range") == "\"v1\"")
            #expect(file.bodyBytesSent == 200_000, "no byte sent twice")
            #expect(listFiles(dir) == ["f.bin"])
            #expect(try contents(dir.appendingPathComponent("f.bin")) == file.content)
        }
    }

    /// `Retry-After` lengthens the delay up to the cap: seconds, an HTTP date, a huge value
    /// (clamped); a date in the past or garbage leaves the backoff alone.
    @Test(arguments: [
        ("1", 1.0...1.0, Duration.seconds(60)),
        ("99999999999999999999999", 0.4...0.4, .milliseconds(400)),
        ("Fri, 01 Jan 2100 00:00:00 GMT", 0.4...0.4, .milliseconds(400)),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0.01...0.02, .seconds(60)),
        ("soon", 0.01...0.02, .seconds(60)),
        ("in 2 seconds", 0.9...2.0, .seconds(60)),   // replaced by a date 2 s ahead, when the answer is sent
    ] as [(String, ClosedRange<Double>, Duration)])
    func retryAfterIsHonouredUpToTheCap(value: String, delay: ClosedRange<Double>, cap: Duration) async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 1_000) { index in
            let header = value == "in 2 seconds" ? httpDate(Date().addingTimeInterval(2)) : value
            return index == 0 ? .status(503, headers: "Retry-After: \(header)\r\n") : .serve
        }
        file.install(on: server, at: "/f.bin")
        let downloader = hostileDownloader {
            $0.retry = RetryPolicy(maximumRetries: 1, initialDelay: .milliseconds(20), maximumDelay: cap)
        }
        try await withTemporaryDirectory { dir async throws in
            let started = ContinuousClock.now
            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/f.bin")), to: .directory(dir))
            let elapsed = (ContinuousClock.now - started).seconds
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            let waited = try #require(retries(run).first?.delay)
            #expect(delay.contains(waited), "waited \(waited) s")
            #expect(elapsed >= waited, "the retry came after the delay it announced")
            #expect(server.requests.count == 2)
        }
    }

    @Test(arguments: [
        ("120", 120.0), ("0", 0), (" 7 ", 7), ("Sun, 06 Nov 1994 08:49:47 GMT", 10), ("Sunday, 06-Nov-94 08:49:57 GMT", 20),
        ("Sun Nov  6 08:50:37 1994", 60), ("Sun, 06 Nov 1994 08:49:00 GMT", 0),
    ] as [(String, Double)])
    func retryAfterParsesSecondsAndTheThreeDateForms(value: String, seconds: Double) throws {
        let now = Double(try #require(RetryAfter.httpDate("Sun, 06 Nov 1994 08:49:37 GMT")))
        #expect(now == 784_111_777)
        #expect(RetryAfter.delay(value, now: now) == .milliseconds(Int64(seconds * 1000)))
    }

    @Test(arguments: [nil, "", "-5", "1.5", "soon", "Sun, 06 Nov 1994 25:00:00 GMT", "Sun, 32 Nov 1994 08:49:37 GMT",
                      "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST", "06 Nov 1994 08:49:37"])
    func unreadableRetryAfterIsIgnored(value: String?) {
        #expect(RetryAfter.delay(value, now: 0) == nil)
    }

    /// Exponential backoff: doubling from the first delay, capped, then jittered to 50-100%.
    @Test(arguments: [(1, 1.0), (2, 2), (3, 4), (4, 8), (5, 16), (6, 32), (7, 60), (40, 60)] as [(Int, Double)])
    func backoffDoublesUpToTheCapWithJitter(attempt: Int, seconds: Double) {
        let policy = RetryPolicy(maximumRetries: 50, initialDelay: .seconds(1), maximumDelay: .seconds(60))
        #expect(policy.delay(beforeRetry: attempt, jitter: 1) == .milliseconds(Int64(seconds * 1000)))
        #expect(policy.delay(beforeRetry: attempt, jitter: 0) == .milliseconds(Int64(seconds * 500)))
        let jittered = policy.delay(beforeRetry: attempt, jitter: 0.3).seconds
        #expect(jittered > seconds * 0.5 && jittered < seconds)
    }

    @Test func aHugeRetryAfterIsClampedToTheCap() {
        let policy = RetryPolicy(maximumRetries: 3, initialDelay: .seconds(1), maximumDelay: .seconds(60))
        #expect(policy.delay(beforeRetry: 1, jitter: 1, retryAfter: RetryAfter.delay("99999999999999999999", now: 0)) == .seconds(60))
        #expect(policy.delay(beforeRetry: 1, jitter: 1, retryAfter: .seconds(30)) == .seconds(30))
        #expect(policy.delay(beforeRetry: 3, jitter: 1, retryAfter: .seconds(2)) == .seconds(4), "the backoff when it is longer")
        #expect(policy.delay(beforeRetry: 1, jitter: 1, retryAfter: nil) == .seconds(1))
    }
}

/// The `.retrying` events of a run.
private func retries(_ run: RunOutcome) -> [(attempt: Int, delay: Double, error: DownloadError)] {
    run.events.compactMap { if case .retrying(let attempt, let delay, let error) = $0 { (attempt, delay, error) } else { nil } }
}

/// `date` as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
private func httpDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}

/// `Retry-After` on a segment's request (the second connection).
///
/// Exclusive: it asserts that a download does not wait for a sleeping connection.
@Suite("Hostile retries of a segment", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct HostileSegmentRetryTests {
    /// The failing connection waits as asked while the other one takes its bytes over; the
    /// download ends when every byte is on disk, without waiting out the sleeping connection.
    @Test func aSegmentToldToWaitDoesNotHoldUpAFinishedDownload() async throws {
        let server = try HaulServer()
        let file = ScriptedFile(size: 1_000_000) { $0 == 1 ? .status(503, headers: "Retry-After: 20\r\n") : .serve }
        file.install(on: server, at: "/f.bin")
        let downloader = hostileDownloader {
            $0.connectionsPerDownload = 2
            $0.minimumSegmentSize = 64 << 10
            $0.retry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(20), maximumDelay: .seconds(60))
        }
        try await withTemporaryDirectory { dir async throws in
            let started = ContinuousClock.now
            let result = try await downloader.file(from: url(server, "/f.bin"), to: .directory(dir))
            #expect(ContinuousClock.now - started < .seconds(10), "the download waited for the sleeping connection")
            #expect(try contents(result.fileURL) == file.content)
            #expect(listFiles(dir) == ["f.bin"])
            #expect(server.requests.filter { $0.header("Range") == "bytes=0-" }.count == 1, "no start over")
        }
    }
}
