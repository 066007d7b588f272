#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import HaulTestSupport
import Synchronization
import Testing
@testable import Haul
@testable import HaulServer   // ContentResponse, and a connection's descriptor (has its client hung up?)

/// `maximumConnectionsPerHost` caps the connections to one host across every download of a
/// downloader: two segmented downloads that want four connections each share three.
///
/// Known issue: a download's first request (`bytes=0-`, opened by `DownloadAttempt` before the
/// transfer is planned) takes no host slot, so two downloads have 5 answers under way, not 3.
/// Once it does, `withKnownIssue` fails (no issue recorded): remove it, and the test asks for
/// exactly 3.
@Suite("The connections to one host", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct HostSlotTests {
    static let mib: Int64 = 1 << 20

    @Test func twoSegmentedDownloadsShareTheCapOfTheirHost() async throws {
        // Given two 8 MiB files on one server, each answer paced to 2 MiB/s (a segment of 2 MiB
        // lasts about a second), and a downloader that allows 3 connections to a host
        let server = try HaulServer()
        let size = 8 * Self.mib
        let probe = AnswersUnderWay()
        probe.install(on: server, path: "/a.bin", size: size, seed: 1, bytesPerSecond: 2 << 20)
        probe.install(on: server, path: "/b.bin", size: size, seed: 2, bytesPerSecond: 2 << 20)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 4) { $0.maximumConnectionsPerHost = 3 }

            // When both download at once, each planned on 4 connections
            let a = downloader.download(url(server, "/a.bin"), to: .directory(dir))
            let b = downloader.download(url(server, "/b.bin"), to: .directory(dir))
            async let first = collect(a)
            async let second = collect(b)
            let runs = await [first, second]

            // Then the server answers 3 requests at once at most, and at some moment exactly 3
            for run in runs {
                #expect(run.error == nil, "\(run.error?.description ?? "")")
                #expect(run.started?.connections == 4, "each download wants 4 connections")
            }
            #expect(probe.answered > 3, "more requests than the cap: \(probe.answered)")
            #expect(probe.maximum >= 3, "the cap is reached: \(probe.busiest)")
            #expect(probe.maximumOfLaterRequests <= 3, "the requests after each download's first stay within the cap")
            withKnownIssue("each download's first request (bytes=0-) is opened by DownloadAttempt without a host slot") {
                #expect(probe.maximum <= 3, "answers under way at the busiest arrival: \(probe.busiest)")
            }
            #expect(listFiles(dir) == ["a.bin", "b.bin"])
            #expect(try contents(dir.appendingPathComponent("a.bin")) == HaulServer.content(seed: 1).bytes(0..<size))
            #expect(try contents(dir.appendingPathComponent("b.bin")) == HaulServer.content(seed: 2).bytes(0..<size))
        }
    }
}

/// Serves files with ranges and a strong ETag, each answer paced, and counts the answers under
/// way at once: from the arrival of the request until the answer's last byte is written or its
/// client has hung up.
///
/// A client that stops reading early (another connection took over the end of its range)
/// closes the connection and may send its next request at once, before the paced answer's next
/// write fails. So each arrival first drops the answers whose client has hung up (their socket
/// reads as closed: a client sends nothing more on a connection whose answer says `Connection:
/// close`). The client closes a connection before it gives its host slot back, so the request
/// that takes the slot next always finds the previous one dropped. (Without this, answers the
/// client had left were counted: 4 or 5 segment requests under a cap of 3.)
final class AnswersUnderWay: Sendable {
    private struct Answer {
        var descriptor: Int32
        var label: String
        /// A download's first request (`Range: bytes=0-`), rather than one for a segment.
        var isFirst: Bool
    }

    private struct State {
        var underWay: [Int: Answer] = [:]
        var answered = 0
        var maximum = 0
        var maximumOfLaterRequests = 0
        var busiest: [String] = []
    }

    private let state = Mutex(State())

    /// The most answers under way when a request arrived.
    var maximum: Int { state.withLock { $0.maximum } }
    /// The same, not counting the downloads' first requests (`Range: bytes=0-`).
    var maximumOfLaterRequests: Int { state.withLock { $0.maximumOfLaterRequests } }
    /// The answers under way (path and `Range`) when `maximum` was first reached.
    var busiest: [String] { state.withLock { $0.busiest } }
    /// The requests received.
    var answered: Int { state.withLock { $0.answered } }

    /// Serves `size` bytes of `content(seed:)` at `path`, each answer paced to `bytesPerSecond`.
    func install(on server: HaulServer, path: String, size: Int64, seed: UInt64, bytesPerSecond: Int) {
        server.route(path) { [self] request, connection in
            let range = request.header("Range")
            let id = arrived(Answer(descriptor: connection.fd, label: "\(path) \(range ?? "whole")", isFirst: range == "bytes=0-"))
            defer { ended(id) }
            var response = ContentResponse(length: size, seed: seed)
            response.etag = "\"v1\""
            response.bytesPerSecond = bytesPerSecond
            response.extraHeaders = [("Connection", "close")]   // the route's end closes the connection
            _ = try response.respond(to: request, on: connection)
        }
    }

    /// Counts a new answer after dropping those whose client has gone; returns its id.
    ///
    /// Under the lock, every descriptor in `underWay` is still open: its handler removes it
    /// (`ended`) before the server closes it.
    private func arrived(_ answer: Answer) -> Int {
        state.withLock { state in
            for (id, answer) in state.underWay where Self.peerHasClosed(answer.descriptor) {
                state.underWay[id] = nil
            }
            let id = state.answered
            state.answered += 1
            state.underWay[id] = answer
            if state.underWay.count > state.maximum {
                state.maximum = state.underWay.count
                state.busiest = state.underWay.values.map(\.label).sorted()
            }
            state.maximumOfLaterRequests = max(state.maximumOfLaterRequests, state.underWay.values.count { !$0.isFirst })
            return id
        }
    }

    private func ended(_ id: Int) {
        state.withLock { _ = $0.underWay.removeValue(forKey: id) }
    }

    /// Whether the socket is readable: after its request, only its client's FIN or reset.
    private static func peerHasClosed(_ descriptor: Int32) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) > 0
    }
}
