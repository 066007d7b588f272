import Foundation
import HaulTestSupport
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

    @Test func theDownloadsAfterOneThatGaveUpDoNotRetryARefusedConnection() async throws {
        let port = try SwitchablePort()
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.retry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(20)) }
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
            let downloader = testDownloader { $0.retry = RetryPolicy(maximumRetries: 2, initialDelay: .milliseconds(20)) }
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
            let downloader = testDownloader { $0.retry = RetryPolicy(maximumRetries: 2, initialDelay: .seconds(5)) }
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
            let policy = RetryPolicy(maximumRetries: 1, initialDelay: .milliseconds(20))
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

/// A port of 127.0.0.1 that refuses connections (bound, not listening), and can answer one
/// request before it refuses again (the listening socket shut, still holding the port).
final class SwitchablePort: Sendable {
    let port: Int
    private let descriptor: Int32

    init() throws {
        let (fd, port) = try Self.socket(boundTo: 0)
        self.port = port
        descriptor = fd
    }

    deinit { close(descriptor) }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Listens, answers the first connection's request with `status` and `body` (then closes it),
    /// and refuses again before that answer's client can connect anew.
    func serveOnce(status: Int, body: String) throws {
        let listener = descriptor
        try #require(listen(listener, 1) == 0)
        Thread {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            var request = [UInt8](repeating: 0, count: 4096)
            var received = 0
            while received < request.count {
                let n = request.withUnsafeMutableBytes { recv(connection, $0.baseAddress! + received, $0.count - received, 0) }
                if n <= 0 { break }
                received += n
                if String(decoding: request[..<received], as: UTF8.self).contains("\r\n\r\n") { break }
            }
            // Refuse again first: the client's next attempt comes once it has read this answer.
            // Shut, not closed: the socket keeps the port, which another test's server could
            // take in the moment between a close and a new bind.
            _ = shutdown(listener, Int32(SHUT_RD))
            let reason = status == 200 ? "OK" : "Service Unavailable"
            let response = Array("HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
            _ = response.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Self.noSignal) }
            close(connection)
        }.start()
    }

    #if canImport(Glibc)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    private static let noSignal: Int32 = 0
    #endif

    private static func socket(boundTo port: Int) throws -> (Int32, Int) {
        #if canImport(Glibc)
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        try #require(fd >= 0)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        if !bound { close(fd) }
        try #require(bound, "cannot bind 127.0.0.1:\(port)")
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }
}
