import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// One file from several loopback servers standing in for mirrors: the bytes are the same
/// whichever server sent them, the servers share the ranges, and a server that fails (a 404,
/// another length, a connection that dies, a redirect to http, a stall) is set aside with a
/// warning while the others finish the file.
/// Serialized: each test runs several servers and a segmented download.
@Suite("Mirrors", .throttled, .serialized)
struct MirrorTests {
    static let size = 4 << 20

    /// A downloader with 2 connections per source, 64 KiB segments and quick retries.
    static func downloader(_ adjust: (inout Downloader.Configuration) -> Void = { _ in }) -> Downloader {
        testDownloader { configuration in
            configuration.connectionsPerDownload = 2
            configuration.minimumSegmentSize = 64 << 10
            configuration.retry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(20), maximumDelay: .milliseconds(50))
            configuration.tls = .init(extraCAFile: TestCertificates.shared.caFile)
            adjust(&configuration)
        }
    }

    /// The request for `path` on `primary`, with `mirrors` (each a server and its path).
    static func request(_ primary: URL, mirrors: [URL]) -> DownloadRequest {
        var request = DownloadRequest(url: primary)
        request.mirrors = mirrors.map { DownloadSource(url: $0) }
        return request
    }

    /// The warnings of a run.
    static func warnings(_ outcome: RunOutcome) -> [String] {
        outcome.events.compactMap { if case .warning(let text) = $0 { text } else { nil } }
    }

    /// Runs `request` into a new folder and checks the file is the served content, byte for byte.
    static func fetch(_ request: DownloadRequest, downloader: Downloader = downloader(),
                      sourceLocation: SourceLocation = #_sourceLocation) async throws -> RunOutcome {
        var outcome = RunOutcome(events: [])
        try await withTemporaryDirectory { dir async throws in
            outcome = await runToEnd(downloader, request, to: .directory(dir))
            #expect(outcome.error == nil, "\(outcome.error?.description ?? "")", sourceLocation: sourceLocation)
            #expect(listFiles(dir) == ["f.bin"], sourceLocation: sourceLocation)
            #expect(try contents(dir.appendingPathComponent("f.bin")) == expectedContent(size, seed: 7),
                    "the file is the served content", sourceLocation: sourceLocation)
        }
        return outcome
    }

    static let path = "/bytes/\(size)/f.bin?seed=7"

    @Test func threeServersShareTheRanges() async throws {
        let servers = try (0..<3).map { _ in try HaulServer() }
        let outcome = try await Self.fetch(Self.request(url(servers[0], Self.path), mirrors: servers.dropFirst().map { url($0, Self.path) }))
        for (index, server) in servers.enumerated() {
            #expect(server.bodyBytesSent > 0, "server \(index) sent none of the file")
            #expect(server.requests.allSatisfy { $0.header("Range") != nil }, "every request asks for a range")
        }
        #expect(Self.warnings(outcome).isEmpty, "\(Self.warnings(outcome))")
    }

    @Test func aMirrorAnswering404IsSetAsideAndTheOthersFinish() async throws {
        let (good, bad) = (try HaulServer(), try HaulServer())
        let outcome = try await Self.fetch(Self.request(url(good, Self.path), mirrors: [url(bad, Self.path + "&status=404")]))
        let warnings = Self.warnings(outcome)
        #expect(warnings.contains { $0.contains("source 2") && $0.contains("set aside") && $0.contains("404") }, "\(warnings)")
        #expect(bad.requests.count <= 2, "a 404 is not asked again (its two connections asked at once)")
    }

    @Test func aMirrorWithAnotherLengthIsSetAside() async throws {
        let (good, other) = (try HaulServer(), try HaulServer())
        // Other bytes too (another seed): the file's check below fails if any of them were written.
        let outcome = try await Self.fetch(Self.request(url(good, Self.path), mirrors: [url(other, "/bytes/\(Self.size + 1)/f.bin?seed=8")]))
        let warnings = Self.warnings(outcome)
        #expect(warnings.contains { $0.contains("source 2") && $0.contains("set aside") && $0.contains("\(Self.size + 1)") }, "\(warnings)")
    }

    @Test func aRequestURLThatIsDownLeavesTheFileToTheMirrors() async throws {
        let mirror = try HaulServer()
        let closed = try SwitchablePort()   // nothing listens on it
        let outcome = try await Self.fetch(Self.request(closed.url("/f.bin"), mirrors: [url(mirror, Self.path)]))
        #expect(Self.warnings(outcome).contains { $0.contains("source 1") && $0.contains("set aside") }, "\(Self.warnings(outcome))")
        #expect(mirror.bodyBytesSent >= Int64(Self.size))
    }

    @Test func anHTTPSMirrorRedirectingToHTTPIsSetAside() async throws {
        let (good, plain) = (try origin(tls: true), try HaulServer())
        let secure = try origin(tls: true)
        let downgrade = "/redirect-to?url=" + (url(plain, Self.path).absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let outcome = try await Self.fetch(Self.request(url(good, Self.path), mirrors: [url(secure, downgrade)]))
        #expect(Self.warnings(outcome).contains { $0.contains("source 2") && $0.contains("set aside") }, "\(Self.warnings(outcome))")
        #expect(plain.requests.isEmpty, "nothing goes to the http server")
    }

    /// A mirror that stops sending: the others take over its range and the download ends long
    /// before its stall timeout (five minutes here; the test's time limit is one).
    @Test(.timeLimit(.minutes(1)))
    func theEndNeverWaitsForAStalledMirrorsTail() async throws {
        let (good, stalling) = (try HaulServer(), try HaulServer())
        let downloader = Self.downloader { $0.stallTimeout = .seconds(300) }
        let outcome = try await Self.fetch(Self.request(url(good, Self.path), mirrors: [url(stalling, Self.path + "&stall-after=65536")]),
                                           downloader: downloader)
        #expect(outcome.error == nil)
        #expect(stalling.bodyBytesSent < Int64(Self.size) / 2)
    }

    @Test func whenEverySourceFailsTheDownloadFailsWithTheFirstSourcesError() async throws {
        let (first, second) = (try HaulServer(), try HaulServer())
        try await withTemporaryDirectory { dir async throws in
            let request = Self.request(url(first, Self.path + "&status=404"), mirrors: [url(second, Self.path + "&status=410")])
            let error = await expectFailure(Self.downloader(), request, to: .directory(dir))
            #expect(error?.httpStatus == 404)
            #expect(listFiles(dir) == [])
        }
    }

    /// `path` on `primary` with a `Link` field naming `mirror` as a duplicate (RFC 6249).
    static func linking(_ primary: HaulServer, to mirror: URL) -> URL {
        let field = "Link:<\(mirror.absoluteString)>; rel=duplicate; pri=1"
        return url(primary, Self.path + "&header=" + (field.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
    }

    @Test func mirrorsTheFirstResponseNamesBecomeSources() async throws {
        let (primary, mirror) = (try HaulServer(), try HaulServer())
        let outcome = try await Self.fetch(DownloadRequest(url: Self.linking(primary, to: url(mirror, Self.path))))
        #expect(mirror.bodyBytesSent > 0, "the linked mirror served part of the file")
        #expect(mirror.requests.allSatisfy { $0.header("Range") != nil })
        #expect(Self.warnings(outcome).isEmpty, "\(Self.warnings(outcome))")
        let off = Self.downloader { $0.usesLinkedMirrors = false }
        let (alone, unused) = (try HaulServer(), try HaulServer())
        _ = try await Self.fetch(DownloadRequest(url: Self.linking(alone, to: url(unused, Self.path))), downloader: off)
        #expect(unused.requests.isEmpty, "usesLinkedMirrors = false ignores them")
    }

    @Test func anHTTPSDownloadNeverTakesAnHTTPMirrorFromALink() async throws {
        let (primary, plain) = (try origin(tls: true), try HaulServer())
        let outcome = try await Self.fetch(DownloadRequest(url: Self.linking(primary, to: url(plain, Self.path))))
        #expect(plain.requests.isEmpty)
        #expect(Self.warnings(outcome).contains { $0.contains("never downgraded") }, "\(Self.warnings(outcome))")
    }

    @Test func maximumSourcesCapsTheServersAsked() async throws {
        let servers = try (0..<4).map { _ in try HaulServer() }
        let capped = Self.downloader { $0.maximumSources = 2 }
        _ = try await Self.fetch(Self.request(url(servers[0], Self.path), mirrors: servers.dropFirst().map { url($0, Self.path) }),
                                 downloader: capped)
        #expect(servers.filter { !$0.requests.isEmpty }.count == 2)
    }

    @Test func eachSourceGetsItsOwnHeadersOnly() async throws {
        let (first, second) = (try HaulServer(), try HaulServer())
        var request = DownloadRequest(url: url(first, Self.path), headers: [("X-First", "1")])
        request.mirrors = [DownloadSource(url: url(second, Self.path), headers: [("X-Second", "2")])]
        _ = try await Self.fetch(request)
        #expect(first.requests.allSatisfy { $0.header("X-First") == "1" && $0.header("X-Second") == nil })
        #expect(second.requests.allSatisfy { $0.header("X-Second") == "2" && $0.header("X-First") == nil })
        #expect(!second.requests.isEmpty)
    }
}

/// A mirror stopped while it serves: its connections fail, it is set aside after the retries,
/// and the other server finishes the file.
/// Exclusive: the servers are paced (2 MB/s a connection) so that the mirror stops mid-transfer.
@Suite("Mirrors, paced", .exclusive, .serialized)
struct MirrorPacedTests {
    @Test func aMirrorThatDiesMidTransferGivesItsRangesToTheOthers() async throws {
        let (good, dying) = (try HaulServer(), try HaulServer())
        let paced = MirrorTests.path + "&rate=2000000"
        let request = MirrorTests.request(url(good, paced), mirrors: [url(dying, paced)])
        try await withTemporaryDirectory { dir async throws in
            let download = MirrorTests.downloader().download(request, to: .directory(dir))
            let outcome = await collect(download) { event in
                if case .progress(let progress) = event, progress.completedBytes >= 1 << 20 { dying.stop() }
            }
            #expect(outcome.error == nil, "\(outcome.error?.description ?? "")")
            #expect(try contents(dir.appendingPathComponent("f.bin")) == expectedContent(MirrorTests.size, seed: 7))
            let warnings = MirrorTests.warnings(outcome)
            #expect(warnings.contains { $0.contains("source 2") && $0.contains("set aside") }, "\(warnings)")
            #expect(dying.bodyBytesSent > 0, "the mirror served part of the file before it died")
        }
    }

}
