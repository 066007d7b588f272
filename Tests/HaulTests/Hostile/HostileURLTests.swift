import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Issue 4, "URLs and TLS": invalid URLs, IPv6 literals and certificates, through the library.
@Suite("Hostile URLs and certificates", .throttled, .timeLimit(.minutes(1)))
struct HostileURLTests {
    @Test("invalid URL text is refused by the check every download makes (exit 2)", arguments: [
        "http://127.0.0.1:0/x", "http://127.0.0.1:65536/x", "http://127.0.0.1:99999999999/x", "http://127.0.0.1:8o/x",
        "http://127.0.0.1:80:81/x", "http://127.0.0.1/a b", "http://127.0.0.1/a\r\nX-Injected: 1", "http://127.0.0.1/a\n",
        "http://127.0.0.1/\t", "http://[::1/x", "http://[::1", "http://[zz::1]/x", "http://[fe80::1%25eth0]/x",
        "http://host!/x", "http:///x", "http://:80/x", "http://127.0.0.1/%zz", "http://127.0.0.1/%4",
        "http://alice:pw-secret-userinfo@ho st/?token=token-secret", "http://alice:pw/secret@host:x/",
        "http://b\u{FC}cher.example/%zz", "http://b\u{FC}cher.example:0/", "http://b\u{FC}cher!.example/",
    ])
    func invalidText(text: String) {
        do {
            _ = try DownloadRequest.validatedURL(text)
            Issue.record("accepted \(text.debugDescription)")
        } catch {
            #expect(error.code == .invalidURL)
            #expect(error.code.exitStatus == 2)
            #expect(error.message.hasPrefix("invalid URL: "), "\(error.message)")
            #expect(PlantedSecret.leaked(in: error.message).isEmpty && !error.message.contains("pw/secret"), "\(error.message)")
        }
    }

    @Test("valid URL text passes the check, an international host name included (Foundation converts it to xn--)", arguments: [
        ("http://b\u{FC}cher.example/x", "xn--bcher-kva.example"), ("HTTP://Host.Example/x", "host.example"),
        ("http://[::1]:8080/f", "::1"), ("http://h/\u{E4}.zip", "h"), ("http://alice:pw@b\u{FC}cher.example:8080/\u{E4}?q=1", "xn--bcher-kva.example"),
    ])
    func validText(text: String, host: String) throws {
        let url = try DownloadRequest.validatedURL(text)
        #expect(url.host?.lowercased() == host)
    }

    @Test("a scheme other than http(s) is unsupported (exit 2)", arguments: ["ftp://127.0.0.1/x", "file:///etc/passwd", "ws://127.0.0.1/"])
    func unsupportedScheme(text: String) {
        #expect(throws: DownloadError.self) { try DownloadRequest.validatedURL(text) }
        do {
            _ = try DownloadRequest.validatedURL(text)
        } catch {
            #expect(error.code == .unsupportedScheme)
            #expect(error.code.exitStatus == 2)
        }
    }

    @Test("URLs Foundation accepts but HTTP cannot use fail with exit 2 before any network I/O", arguments: [
        "http://127.0.0.1:0/x", "http://127.0.0.1:65536/x", "http://host!/x", "http://[zz::1]/x", "http:///x", "http://:80/x",
    ])
    func refusedBeforeNetworkIO(text: String) async throws {
        let url = try #require(URL(string: text), "Foundation refuses \(text); the case no longer applies")
        await withTemporaryDirectory { dir in
            let error = await expectFailure(testDownloader(), DownloadRequest(url: url), to: .directory(dir))
            #expect(error?.code == .invalidURL)
            #expect(error?.code.exitStatus == 2)
            #expect(listFiles(dir) == [])
        }
    }

    @Test("CR and LF in a URL never reach the wire as a header line")
    func noHeaderInjection() async throws {
        let server = try HaulServer()
        let text = server.url("/bytes/10/a\r\nX-Injected: 1")
        #expect(throws: DownloadError.self) { try DownloadRequest.validatedURL(text) }
        guard let url = URL(string: text) else { return }  // Foundation refuses it too: nothing can be sent
        await withTemporaryDirectory { dir in
            do {
                _ = try await testDownloader().file(from: url, to: .directory(dir))
            } catch let error as DownloadError {
                #expect(error.code == .invalidURL || error.code == .httpStatus, "\(error)")
            } catch {
                Issue.record("unexpected error \(error)")
            }
            for request in server.requests {
                #expect(request.header("X-Injected") == nil)
                #expect(!request.target.contains("\r") && !request.target.contains("\n"))
            }
        }
    }

    @Test("an IPv6 literal works, keeps its userinfo, and a redirect from 127.0.0.1 to [::1] is another origin")
    func ipv6Literal() async throws {
        let v4 = try HaulServer()
        let v6 = try HaulServer(configuration: .init(host: "::1"))
        #expect(v6.baseURL == "http://[::1]:\(v6.port)")
        var components = URLComponents(string: v6.url("/bytes/1000/six.bin"))!
        components.user = "alice"
        components.password = PlantedSecret.password
        try await withTemporaryDirectory { dir in
            let direct = try await testDownloader().file(from: components.url!, to: .directory(dir))
            #expect(try contents(direct.fileURL) == expectedContent(1000))
            #expect(v6.requests.first?.header("Host") == "[::1]:\(v6.port)")
            #expect(v6.requests.first?.header("Authorization") == "Basic " + Data("alice:\(PlantedSecret.password)".utf8).base64EncodedString())

            var start = URLComponents(string: v4.url("/redirect-to?url=\(encodedQueryValue(v6.url("/bytes/1000/moved.bin")))"))!
            start.user = "alice"
            start.password = PlantedSecret.password
            let moved = try await testDownloader().file(from: DownloadRequest(url: start.url!, headers: PlantedSecret.headers),
                                                        to: .directory(dir))
            #expect(try contents(moved.fileURL) == expectedContent(1000))
            #expect(v6.requests.count == 2)
            expectNoSecrets(in: Array(v6.requests.dropFirst()), "[::1]")
            #expect(listFiles(dir) == ["redirect-to", "six.bin"])
        }
    }

    /// A certificate the server presents and what the client trusts.
    enum TLSCase: String, CaseIterable, Sendable {
        case selfSigned, selfSignedInsecure, caSignedWithoutCA, caSignedWithCA, wrongHostWithCA, wrongHostInsecure

        var identity: HaulServer.TLSIdentity {
            let certificates = TestCertificates.shared
            switch self {
            case .selfSigned, .selfSignedInsecure: return certificates.selfSignedIdentity
            case .caSignedWithoutCA, .caSignedWithCA: return certificates.serverIdentity
            case .wrongHostWithCA, .wrongHostInsecure: return certificates.wrongHostIdentity
            }
        }

        var options: Downloader.TLSOptions {
            switch self {
            case .selfSigned, .caSignedWithoutCA: return .init()
            case .caSignedWithCA, .wrongHostWithCA: return .init(extraCAFile: TestCertificates.shared.caFile)
            case .selfSignedInsecure, .wrongHostInsecure: return .init(insecure: true)
            }
        }

        /// The error code, or `nil` when the download succeeds.
        var failure: DownloadError.Code? {
            switch self {
            case .selfSigned, .caSignedWithoutCA: return .tlsCertificateUntrusted
            case .wrongHostWithCA: return .tlsHostnameMismatch
            case .selfSignedInsecure, .caSignedWithCA, .wrongHostInsecure: return nil
            }
        }
    }

    @Test("untrusted and wrong-host certificates fail with exit 5 before any request; --cacert or -k accept them",
          arguments: TLSCase.allCases)
    func certificates(tlsCase: TLSCase) async throws {
        let server = try HaulServer(configuration: .init(tls: tlsCase.identity))
        try await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.tls = tlsCase.options }
            let request = DownloadRequest(url: url(server, "/bytes/5000/tls.bin"), headers: PlantedSecret.headers)
            if let code = tlsCase.failure {
                let error = await expectFailure(downloader, request, to: .directory(dir))
                #expect(error?.code == code)
                #expect(error?.code.exitStatus == 5)
                #expect(error?.isRetryable == false)
                #expect(server.requests.isEmpty, "a request (and its headers) went to an unverified server")
                #expect(listFiles(dir) == [])
            } else {
                let result = try await downloader.file(from: request, to: .directory(dir))
                #expect(try contents(result.fileURL) == expectedContent(5000))
                #expect(listFiles(dir) == ["tls.bin"])
            }
        }
    }
}
