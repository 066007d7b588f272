import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore

/// Downloads beyond `maximumActiveDownloads` wait in a queue, in order; a queued download that
/// is cancelled ends at once without a request.
///
/// Exclusive: a route paced by pauses holds the slots while the queue is checked.
@Suite("The download queue", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct QueueTests {
    static let size: Int64 = 500_000

    @Test func atMostTwoDownloadsRunAtOnce() async throws {
        let server = try HaulServer()
        let files = CountingFiles(size: Self.size, bytesPerSecond: 1_000_000)
        for index in 0..<4 {
            server.route("/q\(index).bin") { request, connection in try files.respond(to: request, on: connection) }
        }
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader { $0.maximumActiveDownloads = 2 }
            let downloads = (0..<4).map { downloader.download(url(server, "/q\($0).bin"), to: .directory(dir)) }
            for download in downloads {
                let outcome = await collect(download)
                #expect(outcome.error == nil, "\(outcome.error?.description ?? "")")
            }
            #expect(files.mostAtOnce == 2, "bodies served at once: \(files.mostAtOnce)")
            // Started in order: the first two before the last two.
            let order = server.requests.map(\.path)
            #expect(Set(order.prefix(2)) == ["/q0.bin", "/q1.bin"], "\(order)")
            #expect(order.count == 4)
            #expect(listFiles(dir) == ["q0.bin", "q1.bin", "q2.bin", "q3.bin"])
            for index in 0..<4 {
                #expect(try contents(dir.appendingPathComponent("q\(index).bin")) == HaulServer.content(seed: 7).bytes(0..<Self.size))
            }
        }
    }

    @Test func cancellingAQueuedDownloadEndsItAtOnceWithoutARequest() async throws {
        let server = try HaulServer()
        let files = CountingFiles(size: Self.size, bytesPerSecond: 1_000_000, holdingLastBytes: true)
        for index in 0..<4 {
            server.route("/q\(index).bin") { request, connection in try files.respond(to: request, on: connection) }
        }
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader { $0.maximumActiveDownloads = 2 }
            let running = (0..<2).map { downloader.download(url(server, "/q\($0).bin"), to: .directory(dir)) }
            let queued = downloader.download(url(server, "/q2.bin"), to: .directory(dir))
            let next = downloader.download(url(server, "/q3.bin"), to: .directory(dir))
            #expect(await eventually { files.active == 2 })

            queued.cancel()
            let error: DownloadError? = await { () async -> DownloadError? in
                do throws(DownloadError) {
                    _ = try await queued.result()
                    return nil
                } catch {
                    return error
                }
            }()

            #expect(error?.code == .cancelled)
            #expect(files.active == 2 && files.finished == 0, "the cancelled download waited for a running one")
            files.releaseLastBytes()
            for download in running + [next] {
                let outcome = await collect(download)
                #expect(outcome.error == nil, "\(outcome.error?.description ?? "")")
            }
            #expect(!server.requests.contains { $0.path == "/q2.bin" })
            #expect(server.requests.contains { $0.path == "/q3.bin" }, "the download queued after it still ran")
            #expect(listFiles(dir) == ["q0.bin", "q1.bin", "q3.bin"])
        }
    }

    @Test("a download cancelled right after it got the only slot gives the slot back (checked 50 times)")
    func cancellingAtOnceNeverKeepsTheSlot() async throws {
        let server = try HaulServer()
        server.setResource("/small.bin", .init(size: 1_000))
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader { $0.maximumActiveDownloads = 1 }
            for round in 0..<50 {
                // Cancelled at once: before or after its thread claims the slot, whichever comes first.
                let cancelled = downloader.download(url(server, "/small.bin"), to: .file(dir.appendingPathComponent("c\(round)")))
                cancelled.cancel()
                _ = await collect(cancelled)
                // With the slot leaked, this one would wait in the queue forever (the time limit fails it).
                let after = await collect(downloader.download(url(server, "/small.bin"),
                                                              to: .file(dir.appendingPathComponent("d\(round)"))))
                #expect(after.error == nil, "round \(round): \(after.error?.description ?? "")")
            }
        }
    }
}

/// A route serving `size` bytes of `content(seed: 7)` paced per connection, without validators
/// (so each download uses one connection), that counts the bodies being served at once. With
/// `holdingLastBytes`, every body stops before its last chunk until ``releaseLastBytes()``.
final class CountingFiles: Sendable {
    let size: Int64
    let bytesPerSecond: Int
    private struct Counts { var active = 0, most = 0, finished = 0 }
    private let counts = SharedStateLock(Counts())
    private let holdingLastBytes: Bool
    private let released = SharedStateLock(false)

    init(size: Int64, bytesPerSecond: Int, holdingLastBytes: Bool = false) {
        self.size = size
        self.bytesPerSecond = bytesPerSecond
        self.holdingLastBytes = holdingLastBytes
    }

    /// Lets the bodies held before their last chunk go on (and every later one through).
    func releaseLastBytes() {
        released.withLock { $0 = true }
    }

    /// Bodies being sent now.
    var active: Int { counts.withLock { $0.active } }
    /// The most bodies sent at once so far.
    var mostAtOnce: Int { counts.withLock { $0.most } }
    /// Bodies sent completely.
    var finished: Int { counts.withLock { $0.finished } }

    func respond(to request: RecordedRequest, on connection: ServerConnection) throws {
        counts.withLock { counts in
            counts.active += 1
            counts.most = max(counts.most, counts.active)
        }
        var ended = false
        func end(completed: Bool) {
            guard !ended else { return }
            ended = true
            counts.withLock { counts in
                counts.active -= 1
                if completed { counts.finished += 1 }
            }
        }
        defer { end(completed: false) }
        try connection.write("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\nConnection: close\r\n\r\n")
        let content = HaulServer.content(seed: 7)
        let chunk = Int64(max(1, bytesPerSecond / 20))
        var offset: Int64 = 0
        while offset < size {
            let next = min(size, offset + chunk)
            if next == size {
                // Held (at most 30 s) until the test lets the bodies end: no download can end
                // while the test looks, however late the test's task runs.
                let deadline = ContinuousClock.now + .seconds(30)
                while holdingLastBytes, !released.withLock({ $0 }), ContinuousClock.now < deadline {
                    connection.sleep(seconds: 0.01)
                }
                // Counted as ended before the last bytes go out, so the client cannot finish first.
                end(completed: true)
            }
            try connection.write(content.bytes(offset..<next))
            offset = next
            if offset < size { connection.sleep(seconds: 0.05) }
        }
    }
}
