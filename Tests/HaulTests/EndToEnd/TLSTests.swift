import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Haul
import HaulServer
import HaulTestSupport
import Testing

@Suite("TLS verification", .throttled)
struct TLSTests {
    static func server(_ certificate: KeyPath<TestCertificates, String>, key: KeyPath<TestCertificates, String>) throws -> (HaulServer, TestCertificates) {
        let certificates = TestCertificates.shared
        let identity = HaulServer.TLSIdentity(certificateChainFile: certificates[keyPath: certificate], privateKeyFile: certificates[keyPath: key])
        return (try HaulServer(configuration: .init(tls: identity)), certificates)
    }

    @Test("a certificate signed by an extra CA is trusted with that CA")
    func trustedWithCA() async throws {
        let (server, certificates) = try Self.server(\.serverCertFile, key: \.serverKeyFile)
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.tls = .init(extraCAFile: certificates.caFile) }
            let result = try await downloader.file(from: url(server, "/bytes/300000/tls.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(300_000))
        }
    }

    @Test("an untrusted certificate fails with exit 5, and -k accepts it")
    func untrusted() async throws {
        let (server, _) = try Self.server(\.selfSignedCertFile, key: \.selfSignedKeyFile)
        try await withTemporaryDirectory { dir in
            let error = await expectFailure(testDownloader(), DownloadRequest(url: url(server, "/bytes/10")), to: .directory(dir))
            #expect(error?.code == .tlsCertificateUntrusted)
            #expect(error?.code.exitStatus == 5)
            #expect(listFiles(dir) == [])
            let insecure = testDownloader { $0.tls = .init(insecure: true) }
            let result = try await insecure.file(from: url(server, "/bytes/10/k.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(10))
        }
    }

    @Test("a certificate for another host name fails with tlsHostnameMismatch")
    func wrongHost() async throws {
        let (server, certificates) = try Self.server(\.wrongHostCertFile, key: \.wrongHostKeyFile)
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.tls = .init(extraCAFile: certificates.caFile) }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/bytes/10")), to: .directory(dir))
            #expect(error?.code == .tlsHostnameMismatch)
            #expect(error?.code.exitStatus == 5)
        }
    }

    @Test("a close-delimited body over TLS must end with close_notify")
    func closeNotify() async throws {
        let (server, certificates) = try Self.server(\.serverCertFile, key: \.serverKeyFile)
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.tls = .init(extraCAFile: certificates.caFile) }
            let whole = try await downloader.file(from: url(server, "/bytes/100000/whole.bin?no-length"), to: .directory(dir))
            #expect(try contents(whole.fileURL) == expectedContent(100_000))
            let cut = await expectFailure(downloader, DownloadRequest(url: url(server, "/bytes/100000/cut.bin?no-length&drop-after=5000")),
                                          to: .directory(dir))
            #expect(cut?.code == .truncatedBody)
            #expect(!listFiles(dir).contains("cut.bin"))
        }
    }

    @Test("a TLS handshake that gets no answer is a retryable timeout, not a TLS failure")
    func handshakeTimeout() async throws {
        let listener = try SilentListener()
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.connectTimeout = .milliseconds(500) }
            let error = await expectFailure(downloader, DownloadRequest(url: URL(string: "https://127.0.0.1:\(listener.port)/x")!),
                                            to: .directory(dir))
            #expect(error?.code == .connectTimeout)
            #expect(error?.code.exitStatus == 4)
            #expect(error?.isRetryable == true)
        }
    }

    @Test("https to http redirects are refused")
    func downgradeRefused() async throws {
        let (server, certificates) = try Self.server(\.serverCertFile, key: \.serverKeyFile)
        let plain = try HaulServer()
        let encoded = plain.url("/bytes/10").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.tls = .init(extraCAFile: certificates.caFile) }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/redirect-to?url=\(encoded)")), to: .directory(dir))
            #expect(error?.code == .redirectRefused)
            #expect(plain.requests.isEmpty)
        }
    }
}

/// A socket that listens but never accepts: the kernel completes TCP handshakes, nobody answers.
final class SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
