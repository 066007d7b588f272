import Foundation
import HaulTestSupport
import Synchronization
import Testing
@testable import Haul
import HaulCore
import HaulHTTP
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Once a download has failed to connect to an origin in more attempts in a row than it has
/// retries, the other downloads of that origin (same scheme, host and port) make their attempts
/// but do not retry that failure; a connection made to the origin makes them retry again.
@Suite("Hosts given up on", .throttled, .timeLimit(.minutes(1)))
struct UnreachableHostTests {
    static func retrying(_ download: Download) async -> (retries: Int, error: DownloadError?) {
        let outcome = await collect(download)
        return (outcome.names.filter { $0 == "retrying" }.count, outcome.error)
    }

    static let note = "(not retried: an earlier download gave up connecting to this host)"

    /// A wrong port or a host that is down fails at once; a server that is restarting is waited
    /// for when the policy says so, or once it has answered this download before.
    @Test func aRefusedFirstConnectionIsRetriedOnlyWhenAskedOrAfterAnAnswer() async throws {
        let port = try SwitchablePort()
        try await withTemporaryDirectory { dir in
            let plain = testDownloader { $0.retry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(20)) }
            let once = await Self.retrying(plain.download(port.url("/a.bin"), to: .directory(dir)))
            #expect(once.retries == 0)
            #expect(once.error?.code == .connectionRefused)

            let asked = testDownloader {
                $0.retry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(20), retriesRefusedConnections: true)
            }
            #expect(await Self.retrying(asked.download(port.url("/b.bin"), to: .directory(dir))).retries == 2)

            // The server answers (503, retryable), then refuses while it restarts: retried.
            try port.serveOnce(status: 503, body: "restarting")
            let restarting = testDownloader { $0.retry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(20)) }
            let after = await Self.retrying(restarting.download(port.url("/c.bin"), to: .directory(dir)))
            #expect(after.retries == 2)
            #expect(after.error?.code == .connectionRefused)
            #expect(listFiles(dir).isEmpty)
        }
    }

    @Test func theDownloadsAfterOneThatGaveUpDoNotRetryARefusedConnection() async throws {
        let port = try SwitchablePort()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.retry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(20), retriesRefusedConnections: true) }
            let first = await Self.retrying(downloader.download(port.url("/a.bin"), to: .directory(dir)))
            #expect(first.retries == 2)
            #expect(first.error?.code == .connectionRefused)
            #expect(first.error?.message.contains("not retried") == false)
            for name in ["b", "c"] {
                let later = await Self.retrying(downloader.download(port.url("/\(name).bin"), to: .directory(dir)))
                #expect(later.retries == 0, "\(name)")
                #expect(later.error?.code == .connectionRefused)
                #expect(later.error?.message.hasSuffix(Self.note) == true, "\(later.error?.message ?? "no error")")
            }
            // Another port of the same host is another origin: retried as usual.
            let other = try SwitchablePort()
            let elsewhere = await Self.retrying(downloader.download(other.url("/d.bin"), to: .directory(dir)))
            #expect(elsewhere.retries == 2)

            // The host answers again: the next download works, and afterwards refusals are retried again.
            try port.serveOnce(status: 200, body: "hello")
            let back = await collect(downloader.download(port.url("/e.bin"), to: .directory(dir)))
            #expect(back.finished, "\(back.error?.description ?? "")")
            #expect(try contents(dir.appendingPathComponent("e.bin")) == Array("hello".utf8))
            let again = await Self.retrying(downloader.download(port.url("/f.bin"), to: .directory(dir)))
            #expect(again.retries == 2)
            #expect(again.error?.code == .connectionRefused)
            #expect(listFiles(dir) == ["e.bin"])
        }
    }

    /// A download that gave up after failures of several kinds (the server answered 503, then
    /// could not be reached) does not mark the host: the next download keeps its retries.
    @Test func onlyConnectFailuresInARowMarkAHost() async throws {
        let port = try SwitchablePort()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.retry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(20), retriesRefusedConnections: true) }
            try port.serveOnce(status: 503, body: "")
            let mixed = await Self.retrying(downloader.download(port.url("/a.bin"), to: .directory(dir)))
            #expect(mixed.retries == 2)
            #expect(mixed.error?.code == .connectionRefused)
            let next = await Self.retrying(downloader.download(port.url("/b.bin"), to: .directory(dir)))
            #expect(next.retries == 2, "\(next.error?.message ?? "")")
            // That one failed to connect three times in a row: now the host is given up on.
            let third = await Self.retrying(downloader.download(port.url("/c.bin"), to: .directory(dir)))
            #expect(third.retries == 0)
        }
    }

    /// A download cancelled during its backoff has not given up: the next one keeps its retries.
    @Test func aCancelledDownloadDoesNotMarkTheHost() async throws {
        let port = try SwitchablePort()
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.retry = RetryPolicy(maximumRetries: 2, initialDelay: .seconds(5), retriesRefusedConnections: true) }
            let download = downloader.download(port.url("/a.bin"), to: .directory(dir))
            let cancelled = await collect(download) { event in
                if case .retrying = event { download.cancel() }
            }
            #expect(cancelled.error?.code == .cancelled)
            let quick = downloader.download(port.url("/b.bin"), to: .directory(dir))
            var retries = 0
            let next = await collect(quick) { event in
                if case .retrying = event {
                    retries += 1
                    quick.cancel()   // one retry is enough to tell; do not wait out the 5 s backoff
                }
            }
            #expect(retries == 1)
            #expect(next.error?.code == .cancelled)
        }
    }

    @Test func anotherDownloaderKeepsItsOwnRetries() async throws {
        let port = try SwitchablePort()
        await withTemporaryDirectory { dir in
            let policy = RetryPolicy(maximumRetries: 1, initialDelay: .milliseconds(20), retriesRefusedConnections: true)
            let one = testDownloader { $0.retry = policy }, two = testDownloader { $0.retry = policy }
            #expect(await Self.retrying(one.download(port.url("/a.bin"), to: .directory(dir))).retries == 1)
            #expect(await Self.retrying(two.download(port.url("/b.bin"), to: .directory(dir))).retries == 1)
        }
    }

    /// Only a failure to make the TCP connection names the origin it could not reach.
    @Test func aRefusedConnectionNamesItsOrigin() throws {
        let port = try SwitchablePort()
        let url = try HTTPURL.parse(port.url("/x").absoluteString)
        let tls = TLSContextCache(options: TLSSettings())
        let error = #expect(throws: HTTPClientError.self) {
            _ = try Connection(to: url, tls: try tls.get(), connectTimeout: .seconds(2), cancellation: CancellationSignal(),
                               threads: ThreadPool())
        }
        #expect(error?.kind == .connectionRefused)
        #expect(error?.unreachableOrigin == url.origin)
        #expect(error.map(DownloadError.init)?.unreachableOrigin == url.origin, "the download's error keeps the origin")
        #expect(DownloadError(.connectTimeout, "the TLS handshake timed out").unreachableOrigin == nil)
    }

    @Test func theSetIsPerOriginAndEmptiesWhenReached() throws {
        let hosts = UnreachableHosts()
        let a = try HTTPURL.parse("http://127.0.0.1:81/x").origin, b = try HTTPURL.parse("http://127.0.0.1:82/x").origin
        let c = try HTTPURL.parse("https://127.0.0.1:81/x").origin
        #expect(!hosts.contains(a))
        hosts.gaveUp(on: a)
        hosts.gaveUp(on: a)
        #expect(hosts.contains(a) && !hosts.contains(b) && !hosts.contains(c))
        hosts.gaveUp(on: b)
        hosts.reached(a)
        #expect(!hosts.contains(a) && hosts.contains(b))
        hosts.reached(b)
        #expect(!hosts.contains(b))
    }
}
