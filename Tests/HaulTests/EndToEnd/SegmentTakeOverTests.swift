import Foundation
import HaulTestSupport
import Testing
@testable import Haul
@testable import HaulServer   // ContentResponse: its body bytes count in bodyBytesSent

/// A connection that finishes its segment takes over the second half of the largest range still
/// in flight: a slow connection's range is finished by the fast ones, each byte fetched once.
///
/// Exclusive: one connection's answers trickle while the others take its range over.
@Suite("A slow connection's range taken over", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct SegmentTakeOverTests {
    static let mib: Int64 = 1 << 20

    @Test func fastConnectionsTakeOverTheSlowConnectionsRange() async throws {
        // Given a 16 MiB file with ranges whose answers from byte 0 trickle at 256 KiB/s (its
        // first segment, 4 MiB, would take 16 s) while every other answer runs at 8 MiB/s
        let server = try HaulServer()
        let size = 16 * Self.mib
        let slowEnd = size / 4
        server.route("/slow-start.bin") { request, connection in
            var response = ContentResponse(length: size, seed: 7)
            response.etag = "\"v1\""
            response.bytesPerSecond = requestedRange(request)?.first == 0 ? 256 << 10 : 8 << 20
            response.extraHeaders = [("Connection", "close")]   // the route's end closes the connection
            _ = try response.respond(to: request, on: connection)
        }
        try await withTemporaryDirectory { (dir) async throws in
            // When it is downloaded on 4 connections
            let run = await runToEnd(resumeDownloader(connections: 4), DownloadRequest(url: url(server, "/slow-start.bin")),
                                     to: .directory(dir))

            // Then it is complete and intact
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(run.started?.connections == 4)
            #expect(listFiles(dir) == ["slow-start.bin"])
            #expect(try contents(dir.appendingPathComponent("slow-start.bin")) == HaulServer.content(seed: 7).bytes(0..<size))
            // and the slow connection's segment, [0, 4 MiB), was taken over from its second half on
            let ranges = server.requests.compactMap(requestedRange)
            #expect(ranges.count == server.requests.count, "every request is ranged: \(ranges)")
            #expect(ranges.first.map { $0.first == 0 && $0.last == nil } == true, "the slow one asks from byte 0: \(ranges)")
            let firstSegments = Set(ranges.dropFirst().prefix(3).map(\.first))
            #expect(firstSegments == [slowEnd, 2 * slowEnd, 3 * slowEnd], "the file is split in 4: \(ranges)")
            // The first take-over asks for the back half, to the segment's end; later ones split
            // that again (the same end, a later start) or the front half the slow one kept.
            let takenOver = ranges.filter { $0.first > 0 && $0.first < slowEnd }
            let backHalf = try #require(takenOver.filter { $0.last == slowEnd - 1 }.map(\.first).min(),
                                        "no request for the back of the slow connection's range: \(ranges)")
            #expect(backHalf >= slowEnd / 2 - SegmentPlanner.alignment, "it starts at the middle or after: \(ranges)")
            // and no byte was sent twice beyond the small overlap of a take-over
            #expect(await waitForIdle(server), "the server still serves")
            #expect(server.bodyBytesSent >= size)
            #expect(server.bodyBytesSent < size * 11 / 10, "\(server.bodyBytesSent) bytes sent for \(size)")
        }
    }
}
