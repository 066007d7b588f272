#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import HaulTestSupport
import Testing
@testable import Haul
import HaulCore
import HaulHTTP
@testable import HaulServer   // ContentResponse, and a connection's descriptor (has its client hung up?)

/// `maximumConnectionsPerHost` caps the connections to one server across every download of a
/// downloader, each download's first request included: two segmented downloads that want four
/// connections each share three; every slot comes back, whatever way a download ends.
///
/// Exclusive: paced downloads hold the host's connections while others wait for them.
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
            #expect(probe.maximum <= 3, "answers under way at the busiest arrival: \(probe.busiest)")
            #expect(listFiles(dir) == ["a.bin", "b.bin"])
            #expect(try contents(dir.appendingPathComponent("a.bin")) == HaulServer.content(seed: 1).bytes(0..<size))
            #expect(try contents(dir.appendingPathComponent("b.bin")) == HaulServer.content(seed: 2).bytes(0..<size))
            #expect(downloader.resources.hostSlots.taken(for: try HTTPURL.parse(url(server, "/a.bin").absoluteString)) == 0,
                    "every slot is given back")
        }
    }

    @Test func oneDownloadWithMoreConnectionsThanTheCapKeepsToIt() async throws {
        // Given one 8 MiB file paced to 2 MiB/s per answer, 4 connections wanted, 2 allowed
        let server = try HaulServer()
        let size = 8 * Self.mib
        let probe = AnswersUnderWay()
        probe.install(on: server, path: "/one.bin", size: size, seed: 3, bytesPerSecond: 2 << 20)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 4) { $0.maximumConnectionsPerHost = 2 }

            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/one.bin")), to: .directory(dir))

            // Then its first request and its segments together never exceed 2
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(probe.answered > 2, "more requests than the cap: \(probe.answered)")
            #expect(probe.maximum == 2, "answers under way at the busiest arrival: \(probe.busiest)")
            #expect(try contents(dir.appendingPathComponent("one.bin")) == HaulServer.content(seed: 3).bytes(0..<size))
        }
    }

    @Test func aConnectionThatWaitedForASlotAsksOnlyForWhatIsStillItsOwn() async throws {
        // Given one 8 MiB file, 2 connections wanted and 1 allowed: the first connection takes
        // over the back of the second's range, again and again, while the second waits
        let server = try HaulServer()
        let size = 8 * Self.mib
        let probe = AnswersUnderWay()
        probe.install(on: server, path: "/two.bin", size: size, seed: 6, bytesPerSecond: 16 << 20)
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 2) { $0.maximumConnectionsPerHost = 1 }

            let run = await runToEnd(downloader, DownloadRequest(url: url(server, "/two.bin")), to: .directory(dir))

            // Then no two requests for a bounded range overlap: the waiting connection asked for
            // its range as it was once it had the slot, not as it was planned
            #expect(run.error == nil, "\(run.error?.description ?? "")")
            #expect(probe.maximum == 1, "\(probe.busiest)")
            let ranges = server.requests.compactMap(requestedRange).compactMap { range in range.last.map { range.first...$0 } }
            #expect(ranges.count >= 2, "\(server.requests.map { $0.header("Range") ?? "none" })")
            for (index, one) in ranges.enumerated() {
                for other in ranges[(index + 1)...] {
                    #expect(!one.overlaps(other), "\(one) and \(other) overlap")
                }
            }
            #expect(try contents(dir.appendingPathComponent("two.bin")) == HaulServer.content(seed: 6).bytes(0..<size))
        }
    }

    @Test func slotsComeBackAfterFailuresCancelsAndSmallFiles() async throws {
        // Given a cap of 2 and downloads that fail (a status, a segment answered for another
        // range), are cancelled, are small enough to come whole with their head, or were
        // finished before
        let server = try HaulServer()
        server.setResource("/slow.bin", Validators.etag.resource(size: 4_000_000, seed: 5, rate: 500_000))
        ScriptedFile(size: 4_000_000) { $0 == 1 ? .partial(contentRange: "bytes 0-99/4000000") : .serve }
            .install(on: server, at: "/wrong.bin")
        try await withTemporaryDirectory { (dir) async throws in
            let downloader = resumeDownloader(connections: 4) {
                $0.maximumConnectionsPerHost = 2
                $0.retry = RetryPolicy(maximumRetries: 0)
            }
            let failed = await runToEnd(downloader, DownloadRequest(url: url(server, "/status/404")), to: .directory(dir))
            #expect(failed.error?.code == .httpStatus, "\(failed.error?.description ?? "finished")")
            _ = await interrupted(downloader, DownloadRequest(url: url(server, "/slow.bin")), to: .directory(dir), after: 300_000)
            let mismatch = await runToEnd(downloader, DownloadRequest(url: url(server, "/wrong.bin")), to: .directory(dir))
            #expect(mismatch.error?.code == .rangeMismatch, "\(mismatch.error?.description ?? "finished")")
            for index in 1...5 {
                let small = await runToEnd(downloader, DownloadRequest(url: url(server, "/bytes/20000/s\(index).bin")), to: .directory(dir))
                #expect(small.error == nil, "\(small.error?.description ?? "")")
            }
            let again = try await downloader.file(from: url(server, "/bytes/20000/s1.bin"), to: .directory(dir))
            #expect(again.alreadyComplete, "the finished file is recognised")

            // Then none is still taken, and two more downloads at once (the cap) both finish
            let address = try HTTPURL.parse(url(server, "/slow.bin").absoluteString)
            #expect(await eventually { downloader.resources.hostSlots.taken(for: address) == 0 },
                    "slots still taken: \(downloader.resources.hostSlots.taken(for: address))")
            async let one = runToEnd(downloader, DownloadRequest(url: url(server, "/bytes/3000000/t1.bin")), to: .directory(dir))
            async let two = runToEnd(downloader, DownloadRequest(url: url(server, "/bytes/3000000/t2.bin")), to: .directory(dir))
            let both = await [one, two]
            #expect(both.allSatisfy { $0.error == nil }, "\(both.map { $0.error?.description ?? "ok" })")
            #expect(downloader.resources.hostSlots.taken(for: address) == 0)
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
    }

    private struct State {
        var underWay: [Int: Answer] = [:]
        var answered = 0
        var maximum = 0
        var busiest: [String] = []
    }

    private let state = SharedStateLock(State())

    /// The most answers under way when a request arrived.
    var maximum: Int { state.withLock { $0.maximum } }
    /// The answers under way (path and `Range`) when `maximum` was first reached.
    var busiest: [String] { state.withLock { $0.busiest } }
    /// The requests received.
    var answered: Int { state.withLock { $0.answered } }

    /// Serves `size` bytes of `content(seed:)` at `path`, each answer paced to `bytesPerSecond`.
    func install(on server: HaulServer, path: String, size: Int64, seed: UInt64, bytesPerSecond: Int) {
        server.route(path) { [self] request, connection in
            let range = request.header("Range")
            let id = arrived(Answer(descriptor: connection.fd, label: "\(path) \(range ?? "whole")"))
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
