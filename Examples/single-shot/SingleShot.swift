#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ExampleSupport
import Haul
import HaulServer

/// The reactive `download(request:)` of many apps (an Rx `Single` or a Combine `Future` that
/// fails on a non-2xx status and cancels the transfer when disposed), as one `async` call:
/// ``Downloader/file(from:to:)`` throws ``DownloadError`` for any non-2xx answer, and cancelling
/// the task that awaits it cancels the download, keeping the partial file so that the next call
/// continues it.
@main
struct SingleShot {
    static func main() async {
        let server = Example.startServer()
        defer { server.stop() }
        let folder = Example.makeFolder("single-shot")
        defer { Example.removeFolder(folder) }
        let downloader = Downloader()

        // 1. Success: one call, one verified file.
        let report = HaulServer.Resource(size: 2 << 20, seed: 3, etag: "\"report\"")
        server.setResource("/report.pdf", report)
        let request = DownloadRequest(url: URL(string: server.url("/report.pdf"))!)
        do {
            let result = try await downloader.file(from: request, to: .directory(folder))
            Example.say("1. \(result.response.status): \(result.byteCount) bytes -> \(result.fileURL.lastPathComponent)")
            Example.verify(result.fileURL, report)
        } catch {
            Example.fail("the download failed: \(error)")
        }

        // 2. Validation: a 404 throws, with the status, and creates no file.
        do {
            let result = try await downloader.file(from: URL(string: server.url("/missing.pdf"))!, to: .directory(folder))
            Example.fail("a 404 was accepted: \(result.fileURL.path)")
        } catch {
            Example.check(error.code == .httpStatus && error.httpStatus == 404, "expected a 404, got \(error)")
            Example.say("2. rejected: \(error.message) (code \(error.code), exit status \(error.code.exitStatus))")
        }
        Example.check(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("missing.pdf").path),
                      "the 404 created a file")

        // 3. Cancellation: cancelling the awaiting task cancels the download and keeps the partial.
        let movie = HaulServer.Resource(size: 8 << 20, seed: 4, etag: "\"movie\"", rate: 1 << 20)
        server.setResource("/movie.mkv", movie)
        let movieURL = URL(string: server.url("/movie.mkv"))!
        let task = Task { try await downloader.file(from: movieURL, to: .directory(folder)) }
        let sentBefore = server.bodyBytesSent
        while server.bodyBytesSent - sentBefore < 1 << 20 { try? await Task.sleep(for: .milliseconds(20)) }
        task.cancel()
        switch await task.result {
        case .success: Example.fail("the cancelled download finished")
        case .failure(let error as DownloadError):
            Example.check(error.code == .cancelled, "expected cancelled, got \(error)")
        case .failure(let error): Example.fail("unexpected \(error)")
        }
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()) ?? []
        Example.check(kept.contains("movie.mkv.part") && kept.contains("movie.mkv.resume"), "partial not kept: \(kept)")
        Example.say("3. cancelled after about \((server.bodyBytesSent - sentBefore) >> 20) MiB; kept \(kept.filter { $0.hasPrefix("movie") })")

        // The same call again continues from the partial file (here at full speed).
        server.setResource("/movie.mkv", HaulServer.Resource(size: movie.size, seed: movie.seed, etag: movie.etag, rate: 0))
        let requestsBefore = server.requests.count
        do {
            let result = try await downloader.file(from: movieURL, to: .directory(folder))
            let ranges = server.requests.dropFirst(requestsBefore).compactMap { $0.header("Range") }
            Example.say("   called again: resumed with Range: \(ranges.first ?? "?") -> \(result.fileURL.lastPathComponent)")
            Example.check(!ranges.isEmpty && !ranges.contains("bytes=0-"), "the second call started over: \(ranges)")
            Example.verify(result.fileURL, movie)
        } catch {
            Example.fail("the resumed download failed: \(error)")
        }
        Example.say("single-shot: OK")
    }
}
