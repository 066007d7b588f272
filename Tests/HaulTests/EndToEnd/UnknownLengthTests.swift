import Foundation
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulServer   // ContentResponse and its framings

/// A body whose length the first answer does not tell (chunked, or ended by closing the
/// connection) cannot be split: it comes over one connection, whatever `connectionsPerDownload`
/// says, though the server has a strong ETag and `Accept-Ranges: bytes`. The same answer with a
/// `Content-Length` is split, so the length alone decides.
@Suite("Bodies of unknown length", .throttled, .timeLimit(.minutes(1)))
struct UnknownLengthTests {
    static let size: Int64 = 6 << 20

    /// How the first answer frames the body.
    enum Framing: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case chunked, closeDelimited

        var server: ContentResponse.Framing {
            switch self {
            case .chunked: .chunked
            case .closeDelimited: .untilClose
            }
        }

        var testDescription: String { rawValue }
    }

    @Test(arguments: Framing.allCases)
    func aBodyOfUnknownLengthComesOverOneConnection(framing: Framing) async throws {
        // Given a 6 MiB file whose answer to a request from byte 0 is a 200 without a length
        let server = try HaulServer()
        serveWholeFromStart("/stream.bin", on: server, framing: framing.server)
        try await withTemporaryDirectory { (dir) async throws in
            // When it is downloaded with 4 connections allowed
            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: url(server, "/stream.bin")),
                                     to: .directory(dir))

            // Then one request on one connection brought it, complete and intact
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 1)
            #expect(run.started.map { $0.totalBytes == nil } == true, "the length is unknown when it starts")
            #expect(server.requests.count == 1, "\(server.requests.map { $0.header("Range") ?? "no Range" })")
            #expect(server.connectionCount == 1)
            #expect(await waitForIdle(server), "the server still serves")
            #expect(server.bodyBytesSent == Self.size)
            #expect(listFiles(dir) == ["stream.bin"])
            #expect(try contents(dir.appendingPathComponent("stream.bin")) == HaulServer.content(seed: 9).bytes(0..<Self.size))
        }
    }

    @Test func theSameBodyWithALengthIsSplit() async throws {
        // Given the same server, but its 200 carries a Content-Length
        let server = try HaulServer()
        serveWholeFromStart("/sized.bin", on: server, framing: .contentLength)
        try await withTemporaryDirectory { (dir) async throws in
            // When it is downloaded with 4 connections allowed
            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: url(server, "/sized.bin")),
                                     to: .directory(dir))

            // Then the other three segments are asked with ranges
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 4)
            let later = server.requests.dropFirst().compactMap(requestedRange).map(\.first)
            #expect(Set(later).isSuperset(of: [Self.size / 4, Self.size / 2, 3 * Self.size / 4]), "\(later)")
            #expect(try contents(dir.appendingPathComponent("sized.bin")) == HaulServer.content(seed: 9).bytes(0..<Self.size))
        }
    }

    /// Serves `size` bytes of `content(seed: 9)` at `path` with a strong ETag and `Accept-Ranges:
    /// bytes`: a request from byte 0 gets a 200 with everything, framed as `framing`; a range
    /// from further on gets its 206 (with a `Content-Length`).
    private func serveWholeFromStart(_ path: String, on server: HaulServer, framing: ContentResponse.Framing) {
        server.route(path) { request, connection in
            var response = ContentResponse(length: Self.size, seed: 9)
            response.etag = "\"v1\""
            var asked = request
            if requestedRange(request)?.first == 0 {
                asked.headers.removeAll { $0.name.lowercased() == "range" }
                response.framing = framing
            }
            // The route's end closes the connection (an answer ended by the close says so itself).
            if case .untilClose = response.framing {} else { response.extraHeaders = [("Connection", "close")] }
            _ = try response.respond(to: asked, on: connection)
        }
    }
}
