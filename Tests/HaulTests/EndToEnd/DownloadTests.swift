import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Exclusive: one download is paced at 200 kB/s so that its key is still running when asked again.
@Suite("Downloads end to end", .exclusive, .serialized)
struct DownloadTests {
    @Test("a file is downloaded byte for byte and named from the URL", arguments: [0, 1, 65_537, 3 * 1024 * 1024 + 11])
    func downloadsExactBytes(size: Int) async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let result = try await testDownloader().file(from: url(server, "/bytes/\(size)/data.bin"), to: .directory(dir))
            #expect(result.fileURL.lastPathComponent == "data.bin")
            // haul asks for bytes=0- to learn about ranges: 206 (or 416 for an empty file), or 200 without ranges
            #expect((size == 0 ? [416] : [200, 206]).contains(result.response.status))
            #expect(result.byteCount == Int64(size))
            #expect(try contents(result.fileURL) == expectedContent(size))
            #expect(listFiles(dir) == ["data.bin"])
        }
    }

    @Test("the event stream reports started, progress up to the total, then finished")
    func eventStream() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let download = testDownloader().download(url(server, "/bytes/2000000/stream.bin"), to: .directory(dir))
            var sawStarted = false
            var lastProgress: DownloadProgress?
            var finished: URL?
            for try await event in download.events {
                switch event {
                case .started(let start):
                    sawStarted = true
                    #expect(start.totalBytes == 2_000_000)
                    #expect(start.fileURL.lastPathComponent == "stream.bin")
                case .progress(let progress):
                    #expect(sawStarted)
                    lastProgress = progress
                case .finished(let file):
                    finished = file
                default:
                    break
                }
            }
            #expect(sawStarted)
            #expect(lastProgress?.completedBytes == 2_000_000)
            #expect(lastProgress?.fractionCompleted == 1)
            #expect(finished?.lastPathComponent == "stream.bin")
            #expect(listFiles(dir) == ["stream.bin"])
        }
    }

    @Test("a chunked body is reassembled exactly")
    func chunked() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let result = try await testDownloader().file(from: url(server, "/bytes/300001/c.bin?chunked"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(300_001))
        }
    }

    @Test("a body without Content-Length ends at close")
    func closeDelimited() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let result = try await testDownloader().file(from: url(server, "/bytes/123457/c.bin?no-length"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(123_457))
        }
    }

    @Test("bytes beyond Content-Length are ignored")
    func excessIgnored() async throws {
        let server = try HaulServer()
        server.route("/excess") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhelloEXTRA-BYTES")
            connection.close()
        }
        try await withTemporaryDirectory { dir in
            let result = try await testDownloader().file(from: url(server, "/excess"), to: .directory(dir))
            #expect(try contents(result.fileURL) == Array("hello".utf8))
            #expect(result.fileURL.lastPathComponent == "excess.txt")
        }
    }

    @Test("downloads over IPv6 loopback")
    func ipv6() async throws {
        let server = try HaulServer(configuration: .init(host: "::1"))
        try await withTemporaryDirectory { dir in
            let result = try await testDownloader().file(from: url(server, "/bytes/4096/v6.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(4096))
        }
    }

    @Test("an exact file destination is replaced only when the download succeeds")
    func fileDestination() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let target = dir.appendingPathComponent("out.bin")
            try Data("old".utf8).write(to: target)
            let failed = await expectFailure(testDownloader(), DownloadRequest(url: url(server, "/status/404")), to: .file(target))
            #expect(failed?.code == .httpStatus)
            #expect(try contents(target) == Array("old".utf8))
            _ = try await testDownloader().file(from: url(server, "/bytes/1000"), to: .file(target))
            #expect(try contents(target) == expectedContent(1000))
            #expect(listFiles(dir) == ["out.bin"])
        }
    }

    @Test("two concurrent downloads keep their own events and files")
    func concurrentDownloads() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader()
            let first = downloader.download(url(server, "/bytes/500000/one.bin"), to: .directory(dir))
            let second = downloader.download(url(server, "/bytes/700000/two.bin?seed=7"), to: .directory(dir))
            async let a = lastProgressAndFile(first)
            async let b = lastProgressAndFile(second)
            let (one, two) = try await (a, b)
            #expect(one.bytes == 500_000 && one.file?.lastPathComponent == "one.bin")
            #expect(two.bytes == 700_000 && two.file?.lastPathComponent == "two.bin")
            #expect(try contents(dir.appendingPathComponent("two.bin")) == expectedContent(700_000, seed: 7))
        }
    }

    private func lastProgressAndFile(_ download: Download) async throws -> (bytes: Int64, file: URL?) {
        var bytes: Int64 = -1
        var file: URL?
        for try await event in download.events {
            if case .progress(let p) = event { bytes = p.completedBytes }
            if case .finished(let url) = event { file = url }
        }
        return (bytes, file)
    }

    @Test("starting a key that is running returns the running download")
    func keyedDownloads() async throws {
        let server = try HaulServer(configuration: .init(rateLimit: 200_000))
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader()
            let request = DownloadRequest(url: url(server, "/bytes/100000/k.bin"), key: "same")
            let first = downloader.download(request, to: .directory(dir))
            let second = downloader.download(request, to: .directory(dir))
            #expect(first === second)
            _ = try await first.result()
            #expect(server.requests.count == 1)
        }
    }

    /// A small file's commit runs on the batch committer's thread, after the download gave its
    /// running slot back; its key is held until the file has its name.
    @Test("a key is free again once the result is known, after a commit on the committer's thread")
    func keyFreeAfterBatchedCommit() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = testDownloader()
            let request = DownloadRequest(url: url(server, "/bytes/100000/k.bin"), key: "same")
            let first = downloader.download(request, to: .directory(dir))
            #expect(try await first.result().fileURL.lastPathComponent == "k.bin")
            let again = downloader.download(request, to: .directory(dir))
            #expect(again !== first)
            let second = try await again.result()
            #expect(second.fileURL.lastPathComponent == "k.bin")
            #expect(second.alreadyComplete, "the same file, finished already")
            #expect(server.requests.count == 2)
            #expect(listFiles(dir) == ["k.bin"])
        }
    }

    @Test("the callback form reports events and the result")
    func callbackForm() async throws {
        let server = try HaulServer()
        await withTemporaryDirectory { dir in
            let result: Result<DownloadResult, DownloadError> = await withCheckedContinuation { continuation in
                testDownloader().start(DownloadRequest(url: url(server, "/bytes/10000/cb.bin")), to: .directory(dir)) { result in
                    continuation.resume(returning: result)
                }
            }
            #expect((try? result.get())?.fileURL.lastPathComponent == "cb.bin")
        }
    }
}
