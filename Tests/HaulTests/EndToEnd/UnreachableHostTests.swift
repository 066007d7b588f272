import Foundation
import HaulTestSupport
import Synchronization
import Testing
@testable import Haul
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Once a download has used its retries on a host it could not connect to, the other downloads
/// of that host (same scheme, host and port) make their attempt but do not retry that failure;
/// an attempt that reaches the host makes the others retry again.
@Suite("Hosts given up on", .exclusive, .serialized, .timeLimit(.minutes(1)))
struct UnreachableHostTests {
    static func retrying(_ download: Download) async -> (retries: Int, error: DownloadError?) {
        let outcome = await collect(download)
        return (outcome.names.filter { $0 == "retrying" }.count, outcome.error)
    }

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
                #expect(later.error?.message.hasSuffix("(not retried: an earlier download from this host gave up after its retries)") == true,
                        "\(later.error?.message ?? "no error")")
            }
            // Another port of the same host is another origin: retried as usual.
            let other = try SwitchablePort()
            let elsewhere = await Self.retrying(downloader.download(other.url("/d.bin"), to: .directory(dir)))
            #expect(elsewhere.retries == 2)

            // The host answers again: the next download works, and afterwards refusals are retried again.
            try port.serveOnce(body: "hello")
            let back = await collect(downloader.download(port.url("/e.bin"), to: .directory(dir)))
            #expect(back.finished, "\(back.error?.description ?? "")")
            #expect(try contents(dir.appendingPathComponent("e.bin")) == Array("hello".utf8))
            try port.refuseAgain()
            let again = await Self.retrying(downloader.download(port.url("/f.bin"), to: .directory(dir)))
            #expect(again.retries == 2)
            #expect(again.error?.code == .connectionRefused)
            #expect(listFiles(dir) == ["e.bin"])
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
        for code in [DownloadError.Code.connectionRefused, .dnsFailure, .connectTimeout] {
            #expect(UnreachableHosts.means(DownloadError(code, "x")))
        }
        for code in [DownloadError.Code.connectionReset, .headerTimeout, .stalled, .httpStatus, .tlsHandshakeFailed] {
            #expect(!UnreachableHosts.means(DownloadError(code, "x")))
        }
    }
}

/// A port of 127.0.0.1 that refuses connections (bound, not listening), can answer one request,
/// and can refuse again (the listening socket closed, the port bound again).
final class SwitchablePort: @unchecked Sendable {   // descriptor changes only on the test's thread
    let port: Int
    private var descriptor: Int32

    init() throws {
        (descriptor, port) = try Self.socket(boundTo: 0)
    }

    deinit { close(descriptor) }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Listens, and answers the first connection's request with `body` (then closes it).
    func serveOnce(body: String) throws {
        try #require(listen(descriptor, 1) == 0)
        let listener = descriptor
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
            let response = Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
            _ = response.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
            close(connection)
        }.start()
    }

    /// Closes the listening socket and binds the port again without listening.
    func refuseAgain() throws {
        close(descriptor)
        (descriptor, _) = try Self.socket(boundTo: port)
    }

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
