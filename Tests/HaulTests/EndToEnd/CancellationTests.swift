import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Exclusive: downloads paced at 100 kB/s are cancelled while they run.
@Suite("Cancellation keeps the partial file", .exclusive, .serialized)
struct CancellationTests {
    @Test("cancel() ends the download with cancelled and keeps NAME.part", .timeLimit(.minutes(1)))
    func cancelHandle() async throws {
        let server = try HaulServer(configuration: .init(rateLimit: 100_000))
        await withTemporaryDirectory { dir in
            let download = testDownloader().download(url(server, "/bytes/5000000/slow.bin"), to: .directory(dir))
            var cancelled = false
            do throws(DownloadError) {
                for try await event in download.events {
                    if case .progress(let p) = event, p.completedBytes > 0, !cancelled {
                        cancelled = true
                        download.cancel()
                    }
                }
                Issue.record("expected cancellation")
            } catch {
                #expect(error.code == .cancelled)
                #expect(error.code.exitStatus == 130)
            }
            #expect(listFiles(dir) == ["slow.bin.part", "slow.bin.resume"])
        }
    }

    @Test("cancelling the awaiting task cancels the download", .timeLimit(.minutes(1)))
    func cancelTask() async throws {
        let server = try HaulServer(configuration: .init(rateLimit: 100_000))
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader()
            let task = Task { try await downloader.file(from: url(server, "/bytes/5000000/t.bin"), to: .directory(dir)) }
            // Cancel once bytes are flowing (bounded wait: the test's time limit).
            while (try? FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("t.bin.part").path)[.size] as? Int) ?? 0 == 0 {
                try await Task.sleep(for: .milliseconds(20))
            }
            task.cancel()
            let outcome = await task.result
            #expect(throws: DownloadError.self) { try outcome.get() }
            #expect(listFiles(dir) == ["t.bin.part", "t.bin.resume"])
        }
    }
}
