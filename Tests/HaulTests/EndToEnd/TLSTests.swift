import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

@Suite("TLS verification")
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
