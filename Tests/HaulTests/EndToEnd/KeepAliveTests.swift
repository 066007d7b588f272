import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

@Suite("Keep-alive: one downloader reuses its idle connections", .throttled)
struct KeepAliveTests {
    @Test("five downloads one after another from one server use one connection", .timeLimit(.minutes(1)))
    func sequentialDownloadsShareAConnection() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader()
            for index in 0..<5 {
                let result = try await downloader.file(from: url(server, "/bytes/100000/f\(index).bin?seed=\(index)"), to: .directory(dir))
                #expect(try contents(result.fileURL) == expectedContent(100_000, seed: UInt64(index)))
            }
            #expect(server.connectionCount == 1)
            #expect(server.requests.count == 5)
        }
    }

    @Test("separate downloaders do not share connections", .timeLimit(.minutes(1)))
    func downloadersDoNotShare() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            _ = try await testDownloader().file(from: url(server, "/bytes/1000/a.bin"), to: .directory(dir))
            _ = try await testDownloader().file(from: url(server, "/bytes/1000/b.bin"), to: .directory(dir))
            #expect(server.connectionCount == 2)
        }
    }

    @Test("a response with Connection: close, or from HTTP/1.0, is never followed by another request on its connection",
          .timeLimit(.minutes(1)), arguments: ["HTTP/1.1 200 OK\r\nConnection: close", "HTTP/1.0 200 OK"])
    func closingResponses(_ statusAndFields: String) async throws {
        let server = try HaulServer()
        server.route("/once") { _, connection in
            try connection.write("\(statusAndFields)\r\nContent-Length: 5\r\n\r\nhello")
            connection.waitUntilClosed()   // a second request here would hang: the client must hang up
        }
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader()
            for name in ["a", "b"] {
                let result = try await downloader.file(from: url(server, "/once"), to: .file(dir.appendingPathComponent(name)))
                #expect(try contents(result.fileURL) == Array("hello".utf8))
            }
            #expect(server.connectionCount == 2)
        }
    }

    @Test("a server that closes an idle connection costs nothing: the next download connects again", .timeLimit(.minutes(1)))
    func serverClosesIdleConnection() async throws {
        let server = try HaulServer()
        // Keep-alive in its head, but the server hangs up right after the body (as on an idle timeout).
        server.route("/hangs-up") { _, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        }
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader()
            for name in ["a", "b", "c"] {
                let result = try await downloader.file(from: url(server, "/hangs-up"), to: .file(dir.appendingPathComponent(name)))
                #expect(try contents(result.fileURL) == Array("hello".utf8))
            }
            #expect(listFiles(dir) == ["a", "b", "c"])
            #expect(server.requests.count == 3)
        }
    }

    @Test("a connection stopped in the middle of a body is not reused", .timeLimit(.minutes(1)))
    func partlyReadConnectionIsNotReused() async throws {
        let server = try HaulServer()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader()
            // Asked for 3 MB, gets a 404 page for the first (read whole: reusable) ...
            _ = await expectFailure(downloader, DownloadRequest(url: url(server, "/status/404")), to: .directory(dir))
            // ... then a file in four segments, then another file: every byte right, whatever was reused.
            let big = try await downloader.file(from: url(server, "/bytes/3000000/big.bin?seed=7"), to: .directory(dir))
            #expect(try contents(big.fileURL) == expectedContent(3_000_000, seed: 7))
            let small = try await downloader.file(from: url(server, "/bytes/1000/small.bin?seed=8"), to: .directory(dir))
            #expect(try contents(small.fileURL) == expectedContent(1000, seed: 8))
            #expect(listFiles(dir) == ["big.bin", "small.bin"])
        }
    }
}
