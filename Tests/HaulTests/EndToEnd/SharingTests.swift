import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Exclusive: downloads paced by the server's rate limit are still running when others meet them.
@Suite("Downloads that meet: same names, same keys, several readers", .exclusive, .serialized)
struct SharingTests {
    @Test("two downloads naming the same file in one folder get distinct names, both intact", .timeLimit(.minutes(1)))
    func sameNameSameFolder() async throws {
        let server = try HaulServer(configuration: .init(rateLimit: 2_000_000))
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader()
            async let first = downloader.file(from: url(server, "/bytes/400000/same.bin?seed=1"), to: .directory(dir))
            async let second = downloader.file(from: url(server, "/bytes/300000/same.bin?seed=2"), to: .directory(dir))
            let (a, b) = try await (first, second)
            #expect(Set([a.fileURL.lastPathComponent, b.fileURL.lastPathComponent]) == ["same.bin", "same.1.bin"])
            #expect(try contents(a.fileURL) == expectedContent(400_000, seed: 1))
            #expect(try contents(b.fileURL) == expectedContent(300_000, seed: 2))
            #expect(listFiles(dir) == ["same.1.bin", "same.bin"])
        }
    }

    @Test("a second download to an exact file that is being written fails with locked (exit 11)", .timeLimit(.minutes(1)))
    func sameExactFile() async throws {
        // 20 MB at 500 kB/s per connection: about ten seconds even over four connections, so the
        // first download is still writing when the second one starts, however loaded the machine.
        let server = try HaulServer(configuration: .init(rateLimit: 500_000))
        try await withTemporaryDirectory { dir in
            let target = dir.appendingPathComponent("one.bin")
            let downloader = testDownloader()
            let first = downloader.download(DownloadRequest(url: url(server, "/bytes/20000000?seed=1")), to: .file(target))
            for try await event in first.events { if case .started = event { break } }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/bytes/10?seed=2")), to: .file(target))
            #expect(error?.code == .locked)
            #expect(error?.code.exitStatus == 11)
            #expect(!server.requests.contains { $0.path == "/bytes/10" }, "the second download sent a request")
            // Done asserting: stop the first, then finish it unpaced (the same file, resumed).
            first.cancel()
            _ = try? await first.result()
            _ = try await downloader.file(from: url(server, "/bytes/20000000?seed=1&rate=0"), to: .file(target))
            #expect(try contents(target) == expectedContent(20_000_000, seed: 1))
            #expect(listFiles(dir) == ["one.bin"])
        }
    }

    @Test("every reader of one download sees every event; a late reader catches up", .timeLimit(.minutes(1)))
    func severalReaders() async throws {
        let server = try HaulServer(configuration: .init(rateLimit: 1_000_000))
        try await withTemporaryDirectory { dir in
            let download = testDownloader().download(url(server, "/bytes/300000/r.bin"), to: .directory(dir))
            async let a = names(download)
            async let b = names(download)
            let (first, second) = try await (a, b)
            let late = try await names(download)
            for seen in [first, second, late] {
                #expect(seen.first == "started")
                #expect(seen.last == "finished")
                #expect(seen.contains("progress"))
            }
        }
    }

    private func names(_ download: Download) async throws -> [String] {
        var seen: [String] = []
        for try await event in download.events {
            switch event {
            case .started: seen.append("started")
            case .progress: if seen.last != "progress" { seen.append("progress") }
            case .finished: seen.append("finished")
            default: seen.append("other")
            }
        }
        return seen
    }

    @Test("one URL into two destinations is two downloads")
    func oneURLTwoPlaces() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader()
            let a = downloader.download(url(server, "/bytes/1000/u.bin"), to: .directory(dir.appendingPathComponent("a")))
            let b = downloader.download(url(server, "/bytes/1000/u.bin"), to: .directory(dir.appendingPathComponent("b")))
            #expect(a !== b)
            _ = try await (a.result(), b.result())
            #expect(listFiles(dir.appendingPathComponent("a")) == ["u.bin"])
            #expect(listFiles(dir.appendingPathComponent("b")) == ["u.bin"])
        }
    }
}
