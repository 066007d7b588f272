import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import Haul
import HaulCrypto

/// A small file whose whole body comes in one write with its head: the download streams it from
/// the receive buffer (``ResponseReaderBufferedTests`` pins when that is). Whatever the path, a
/// user sees the same download: its events, its file, its checksum; and a 206 whose body is
/// longer than its range is read as the range says.
@Suite("A body that came whole with its head", .throttled, .timeLimit(.minutes(1)))
struct WholeBodyTests {
    static let body = expectedContent(6_000, seed: 7)

    /// Answers every request with `head` and `body` in one write, then hangs up.
    static func serveWhole(_ server: HaulServer, _ path: String, status: String = "200 OK", fields: String = "",
                           body: [UInt8] = WholeBodyTests.body) {
        server.route(path) { _, connection in
            let head = "HTTP/1.1 \(status)\r\nContent-Length: \(body.count)\r\nETag: \"w1\"\r\nAccept-Ranges: bytes\r\n\(fields)\r\n"
            try connection.write(Array(head.utf8) + body)
        }
    }

    @Test func itsEventsFileAndChecksumAreThoseOfAnyDownload() async throws {
        let server = try HaulServer()
        Self.serveWhole(server, "/whole.bin")
        try await withTemporaryDirectory { dir in
            var request = DownloadRequest(url: url(server, "/whole.bin"))
            let sha256 = SHA256.hex(Self.body)
            request.checksum = try Checksum(parsing: "sha256=\(sha256)")
            let download = testDownloader().download(request, to: .directory(dir))
            var events: [DownloadEvent] = []
            for try await event in download.events { events.append(event) }
            let result = try await download.result()

            guard case .started(let start)? = events.first else { Issue.record("first event: \(String(describing: events.first))"); return }
            #expect(start.totalBytes == Int64(Self.body.count))
            #expect(start.connections == 1)
            let progress = events.compactMap { if case .progress(let p) = $0 { p } else { nil } }
            #expect(progress.last?.completedBytes == Int64(Self.body.count), "the final state is always sent")
            #expect(progress.last?.totalBytes == Int64(Self.body.count))
            guard case .finished(let finished)? = events.last else { Issue.record("last event: \(String(describing: events.last))"); return }
            #expect(finished == result.fileURL)
            #expect(result.sha256 == sha256)
            #expect(try contents(result.fileURL) == Self.body)
            #expect(listFiles(dir) == ["whole.bin"], "no partial file and no resume record left")
        }
    }

    /// A 206 whose `Content-Length` says more than its `Content-Range` (1,500 body bytes for
    /// bytes 0-999 of 1,000), all of it in the first read: the range decides, as on the segments'
    /// path, and the file is its 1,000 bytes (not 1,500, and not a length error).
    @Test func aPartialAnswerLongerThanItsRangeKeepsTheRange() async throws {
        let server = try HaulServer()
        let whole = expectedContent(1_000, seed: 9)
        Self.serveWhole(server, "/longer.bin", status: "206 Partial Content", fields: "Content-Range: bytes 0-999/1000\r\n",
                        body: whole + expectedContent(500, seed: 10))
        try await withTemporaryDirectory { dir in
            let result = try await testDownloader().file(from: url(server, "/longer.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == whole)
            #expect(listFiles(dir) == ["longer.bin"])
        }
    }
}
