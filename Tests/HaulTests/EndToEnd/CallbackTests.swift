import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing
import HaulCore

/// ``Downloader/start(_:to:onEvent:completion:)``: callbacks instead of `async`.
///
/// Exclusive: downloads paced by the server's rate limit are joined and cancelled while they run.
@Suite("Downloads with callbacks", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct CallbackTests {
    /// What one `start` call saw, in order.
    final class Log: Sendable {
        let entries = SharedStateLock<[String]>([])
        let results = SharedStateLock<[Result<DownloadResult, DownloadError>]>([])

        func event(_ event: DownloadEvent) {
            let text: String
            switch event {
            case .started(let start): text = "started \(start.fileURL.lastPathComponent)"
            case .progress(let progress): text = "progress \(progress.completedBytes)"
            case .finished(let url): text = "finished \(url.lastPathComponent)"
            default: text = "other"
            }
            entries.withLock { $0.append(text) }
        }

        func completion(_ result: Result<DownloadResult, DownloadError>) {
            entries.withLock { $0.append("completion") }
            results.withLock { $0.append(result) }
        }

        /// Starts `request` with this log's callbacks.
        @discardableResult
        func start(_ downloader: Downloader, _ request: DownloadRequest, into dir: URL) -> DownloadToken {
            downloader.start(request, to: .directory(dir), onEvent: { self.event($0) }, completion: { self.completion($0) })
        }

        var ended: Bool { results.withLock { !$0.isEmpty } }
    }

    @Test("events come in order, then the completion, once, with the file")
    func orderAndCompletion() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let log = Log()
            log.start(testDownloader(), DownloadRequest(url: url(server, "/bytes/300000/cb.bin")), into: dir)
            #expect(await eventually { log.ended })
            try await Task.sleep(for: .milliseconds(50))   // a second completion would come now
            let entries = log.entries.withLock { $0 }
            #expect(entries.first == "started cb.bin")
            #expect(Array(entries.suffix(3)) == ["progress 300000", "finished cb.bin", "completion"])
            #expect(entries.filter { $0 == "completion" }.count == 1)
            let result = try #require(log.results.withLock { $0.first })
            let done = try result.get()
            #expect(done.fileURL.lastPathComponent == "cb.bin")
            #expect(try contents(done.fileURL) == expectedContent(300_000))
        }
    }

    /// The first download is slowed to a few seconds; the join is checked, then the download
    /// is cancelled, which both starts see.
    @Test("starting a running key again replays what happened so far and ends with the same result")
    func joinRunningKey() async throws {
        let server = try HaulServer(configuration: .init(rateLimit: 100_000))
        await withTemporaryDirectory { dir in
            let downloader = testDownloader()
            let request = DownloadRequest(url: url(server, "/bytes/1000000/k.bin"), key: "same")
            let first = Log(), second = Log()
            let token = first.start(downloader, request, into: dir)
            #expect(await eventually { first.entries.withLock { $0.contains { $0.hasPrefix("progress") } } })
            second.start(downloader, request, into: dir)
            // Replayed at once on this thread, unless another thread was delivering an event then.
            #expect(await eventually { second.entries.withLock { $0.first } == "started k.bin" })
            token.cancel()
            #expect(await eventually { first.ended && second.ended })
            for log in [first, second] {
                #expect(log.entries.withLock { $0.last } == "completion")
                let result = log.results.withLock { $0.first }
                if case .failure(let error)? = result {
                    #expect(error.code == .cancelled)
                } else {
                    Issue.record("expected cancelled, got \(String(describing: result))")
                }
            }
            #expect(server.requests.count == 1)
        }
    }

    @Test("cancelling the token ends with cancelled and keeps the partial file")
    func cancel() async throws {
        let server = try HaulServer(configuration: .init(rateLimit: 200_000))
        try await withTemporaryDirectory { dir in
            let log = Log()
            let token = log.start(testDownloader(), DownloadRequest(url: url(server, "/bytes/2000000/c.bin")), into: dir)
            #expect(await eventually { log.entries.withLock { $0.contains { $0.hasPrefix("progress") } } })
            token.cancel()
            #expect(await eventually { log.ended })
            let result = try #require(log.results.withLock { $0.first })
            guard case .failure(let error) = result else {
                Issue.record("a cancelled download succeeded")
                return
            }
            #expect(error.code == .cancelled)
            #expect(log.entries.withLock { $0.last } == "completion")
            #expect(listFiles(dir).contains("c.bin.part"))
        }
    }
}
