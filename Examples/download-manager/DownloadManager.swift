#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ExampleSupport
import Haul
import HaulServer

/// Several downloads keyed by their row index, with pause, resume and cancel per row, and URLs
/// signed just before they are used: the `Download` objects many apps build over
/// `URLSessionDownloadTask` and `cancel(byProducingResumeData:)`, done with Haul.
///
/// With `URLSession` the resume data is the only handle on the bytes so far (and Linux has
/// none); here the partial file and its resume record stay on disk, so pause, cancel, a crash or
/// a relaunch all continue from the first missing byte. Signing: each request carries the
/// manager's ``URLSigner``; Haul asks it for a fresh URL for every attempt and every connection
/// (and again when the server says a signature expired), and a re-signed URL resumes the same
/// partial file.
@MainActor
final class DownloadManager {
    private let downloader: Downloader
    private let signer: any URLSigner
    private let folder: URL
    private var downloads: [Int: Download] = [:]

    init(folder: URL, signer: any URLSigner, downloader: Downloader = Downloader()) {
        self.folder = folder
        self.signer = signer
        self.downloader = downloader
    }

    /// Starts (or restarts) row `index`; Haul signs its URL for each request.
    func start(_ index: Int, _ url: URL) async throws {
        let request = DownloadRequest(url: url, key: "row-\(index)", signer: signer)
        downloads[index] = downloader.download(request, to: .directory(folder))
    }

    func pause(_ index: Int) { downloads[index]?.pause() }
    func resume(_ index: Int) { downloads[index]?.resume() }
    func cancel(_ index: Int) { downloads[index]?.cancel() }

    /// Row `index`'s download, to follow its events or await its result.
    func download(_ index: Int) -> Download? { downloads[index] }
}

@main
struct DownloadManagerExample {
    @MainActor
    static func main() async {
        let server = Example.startServer()
        defer { server.stop() }
        let folder = Example.makeFolder("download-manager")
        defer { Example.removeFolder(folder) }

        // A signer for a made-up scheme: an expiring token in the query, minted per start.
        let secret = "example-secret"
        let signer = ClosureURLSigner { url, now in
            let expires = Int(now.timeIntervalSince1970) + 300
            var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)!
            parts.queryItems = [URLQueryItem(name: "expires", value: "\(expires)"),
                                URLQueryItem(name: "token", value: "\(secret.count)-\(expires)")]
            return SignedRequest(url: parts.url!, signedAt: now, expiresAt: now.addingTimeInterval(300))
        }
        let manager = DownloadManager(folder: folder, signer: signer)

        let rows = (0..<3).map { index in
            ("/episode-\(index).bin", HaulServer.Resource(size: 6 << 20, seed: UInt64(10 + index), etag: "\"e\(index)\"",
                                                          rate: 1 << 20))
        }
        for (path, resource) in rows { server.setResource(path, resource) }
        do {
            for (index, (path, _)) in rows.enumerated() { try await manager.start(index, URL(string: server.url(path))!) }
        } catch {
            Example.fail("signing failed: \(error)")
        }
        Example.say("download-manager: rows 0, 1, 2 started from \(server.baseURL)")

        // Row 2: cancel; its partial file stays. Restart it later with a fresh signature.
        await waitFor(manager, 2) { if case .progress(let p) = $0 { p.completedBytes >= 512 << 10 } else { false } }
        manager.cancel(2)
        let cancelled = await result(manager, 2)
        Example.check(cancelled.error?.code == .cancelled, "row 2: expected cancelled, got \(cancelled)")
        Example.say("row 2 cancelled; kept \(partials(folder).filter { $0.hasPrefix("episode-2") })")
        Example.check(partials(folder).contains("episode-2.bin.part"), "row 2's partial file is gone")

        // Row 1: pause once bytes flow, check nothing arrives while paused, then resume.
        await waitFor(manager, 1) { if case .progress(let p) = $0 { p.completedBytes >= 512 << 10 } else { false } }
        manager.pause(1)
        await waitFor(manager, 1) { if case .paused = $0 { true } else { false } }
        let whilePaused = requestCount(server, rows[1].0)
        try? await Task.sleep(for: .milliseconds(500))
        Example.check(requestCount(server, rows[1].0) == whilePaused, "row 1 sent requests while paused")
        Example.say("row 1 paused")
        manager.resume(1)
        Example.say("row 1 resumed")

        do {
            try await manager.start(2, URL(string: server.url(rows[2].0))!)
        } catch {
            Example.fail("signing failed: \(error)")
        }
        Example.say("row 2 restarted with a new signature")

        for (index, (path, resource)) in rows.enumerated() {
            let outcome = await result(manager, index)
            guard let done = outcome.value else { Example.fail("row \(index): \(outcome.error!)") }
            Example.say("row \(index) finished: \(done.fileURL.lastPathComponent)")
            Example.verify(done.fileURL, resource)
            let requests = server.requests.filter { $0.path == path }
            Example.check(requests.allSatisfy { $0.queryValue("token") != nil }, "row \(index): a request was not signed")
        }
        let rangesOfRow2 = server.requests.filter { $0.path == rows[2].0 }.compactMap { $0.header("Range") }
        Example.check(rangesOfRow2.filter { $0 == "bytes=0-" }.count == 1, "row 2 started over after the restart: \(rangesOfRow2)")
        Example.check(partials(folder).isEmpty, "left behind: \(partials(folder))")
        Example.say("download-manager: OK")
    }

    /// Follows row `index`'s events until one satisfies `condition` (the download goes on).
    @MainActor
    static func waitFor(_ manager: DownloadManager, _ index: Int, _ condition: (DownloadEvent) -> Bool) async {
        guard let download = manager.download(index) else { Example.fail("row \(index) was never started") }
        do {
            for try await event in download.events where condition(event) { return }
        } catch {
            Example.fail("row \(index): \(error)")
        }
        Example.fail("row \(index) ended before the awaited event")
    }

    static func requestCount(_ server: HaulServer, _ path: String) -> Int {
        server.requests.filter { $0.path == path }.count
    }

    /// Waits for row `index` to end.
    @MainActor
    static func result(_ manager: DownloadManager, _ index: Int) async -> (value: DownloadResult?, error: DownloadError?) {
        guard let download = manager.download(index) else { Example.fail("row \(index) was never started") }
        do {
            return (try await download.result(), nil)
        } catch {
            return (nil, error)
        }
    }

    /// The partial files and resume records in `folder`.
    static func partials(_ folder: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".part") || $0.hasSuffix(".resume") }.sorted()
    }
}
