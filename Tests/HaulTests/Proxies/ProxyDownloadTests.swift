import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Downloads through the test proxy: forwarding, CONNECT, an https proxy, SOCKS5, several
/// connections, keep-alive keys, and what reached the proxy and the origin (leak checks on both logs).
@Suite("downloads through proxies", .throttled)
struct ProxyDownloadTests {
    @Test("http origin: absolute form to the proxy, Proxy-Authorization to the proxy only")
    func forwarding() async throws {
        let server = try origin()
        let proxy = try proxy(user: "pu", password: "pp")
        try await withTemporaryDirectory { dir in
            let result = try await proxiedDownloader(proxy, credentials: "pu:pp")
                .file(from: url(server, "/bytes/300000/f.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(300_000))
            let seen = try #require(proxy.requests.first)
            #expect(seen.method == "GET")
            #expect(seen.target == server.url("/bytes/300000/f.bin"))
            #expect(seen.header("proxy-authorization") == "Basic " + Data("pu:pp".utf8).base64EncodedString())
            #expect(server.requests.allSatisfy { $0.header("proxy-authorization") == nil })
        }
    }

    @Test("https origin: CONNECT carries only Host, User-Agent and Proxy-Authorization; the origin gets its own headers",
          arguments: [false, true])
    func tunnel(viaHTTPSProxy: Bool) async throws {
        let server = try origin(tls: true)
        let proxy = try proxy(user: "pu", password: "pp", tls: viaHTTPSProxy)
        try await withTemporaryDirectory { dir in
            let downloader = proxiedDownloader(proxy, credentials: "pu:pp") {
                $0.cookies = CookieFile(parsing: "localhost\tFALSE\t/\tTRUE\t0\tsession\tc00kie")
            }
            var request = DownloadRequest(url: url(server, "/bytes/200000/t.bin"), headers: [("X-Secret", "h3ader")])
            request.credentials = Credentials(user: "ou", password: "op")
            let result = try await downloader.file(from: request, to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(200_000))
            let connect = try #require(proxy.requests.first)
            #expect(connect.method == "CONNECT")
            #expect(connect.target == "localhost:\(server.port)")
            #expect(connect.headerNames == ["host", "user-agent", "proxy-authorization"])
            let atOrigin = try #require(server.requests.first)
            #expect(atOrigin.header("authorization") == "Basic " + Data("ou:op".utf8).base64EncodedString())
            #expect(atOrigin.header("cookie") == "session=c00kie")
            #expect(atOrigin.header("x-secret") == "h3ader")
            #expect(atOrigin.header("proxy-authorization") == nil)
        }
    }

    @Test("an https proxy is verified against its own name, apart from the origins")
    func httpsProxyTrust() async throws {
        let server = try origin()
        let proxy = try proxy(tls: true)
        try await withTemporaryDirectory { dir in
            let untrusted = proxiedDownloader(proxy) { $0.proxy.tls = .init() }
            let error = await expectFailure(untrusted, DownloadRequest(url: url(server, "/bytes/10")), to: .directory(dir))
            #expect(error?.code == .tlsCertificateUntrusted)
            #expect(error?.message.contains("proxy") == true)
            let insecure = proxiedDownloader(proxy) { $0.proxy.tls = .init(insecure: true) }
            let result = try await insecure.file(from: url(server, "/bytes/10/i.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(10))
            // An insecure proxy never makes the origin trusted.
            let tlsOrigin = try origin(tls: true)
            let noOriginTrust = proxiedDownloader(proxy) { $0.proxy.tls = .init(insecure: true); $0.tls = .init() }
            let originError = await expectFailure(noOriginTrust, DownloadRequest(url: url(tlsOrigin, "/bytes/10")), to: .directory(dir))
            #expect(originError?.code == .tlsCertificateUntrusted)
            #expect(listFiles(dir) == ["i.bin"])
        }
    }

    @Test("SOCKS5: socks5h sends the name, socks5 the address; credentials by RFC 1929; TLS inside", arguments: [false, true])
    func socks(tls: Bool) async throws {
        let server = try origin(tls: tls)
        let proxy = try proxy(.socks5, user: "su", password: "sp")
        try await withTemporaryDirectory { dir in
            let named = proxiedDownloader(proxy, credentials: "su:sp")
            let first = try await named.file(from: url(server, "/bytes/100000/a.bin"), to: .directory(dir))
            #expect(try contents(first.fileURL) == expectedContent(100_000))
            let local = proxiedDownloader(proxy) {
                $0.proxy = .url(proxyURL(proxy, credentials: "su:sp").replacingOccurrences(of: "socks5h", with: "socks5"), noProxy: [])
            }
            let second = try await local.file(from: URL(string: "\(tls ? "https" : "http")://localhost:\(server.port)/bytes/1000/b.bin")!,
                                               to: .directory(dir))
            #expect(try contents(second.fileURL) == expectedContent(1000))
            let exchanges = proxy.socksRequests
            #expect(exchanges.count == 2)
            #expect(exchanges.allSatisfy { $0.methods == [0, 2] && $0.user == "su" && $0.password == "sp" })
            let addressTypes = exchanges.map(\.addressType)
            #expect(addressTypes.first == (tls ? 3 : 1))   // TLS origins are named localhost; plain ones 127.0.0.1
            #expect(exchanges.last?.addressType == 1)
            #expect(exchanges.last?.host == "127.0.0.1")
        }
    }

    @Test("four connections go through the same proxy, each asking its range through the tunnel")
    func segmented() async throws {
        let server = try origin(tls: true)
        let proxy = try proxy(user: "pu", password: "pp")
        try await withTemporaryDirectory { dir in
            let downloader = proxiedDownloader(proxy, credentials: "pu:pp") {
                $0.connectionsPerDownload = 4
                $0.minimumSegmentSize = 1 << 20
            }
            let size = 8 << 20
            let result = try await downloader.file(from: url(server, "/bytes/\(size)/big.bin?rate=8000000"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(size))
            let connects = proxy.requests.filter { $0.method == "CONNECT" }
            #expect(connects.count >= 2)
            #expect(connects.allSatisfy { $0.header("proxy-authorization") != nil })
            #expect(server.requests.filter { $0.header("range") != nil }.count >= 2)
            #expect(server.requests.allSatisfy { $0.header("proxy-authorization") == nil })
        }
    }

    @Test("a tunnel is reused for its origin only; forwarding connections for any origin")
    func keepAliveKeys() async throws {
        let first = try origin(tls: true), second = try origin(tls: true)
        let proxy = try proxy()
        try await withTemporaryDirectory { dir in
            let downloader = proxiedDownloader(proxy) { $0.connectionsPerDownload = 1 }
            for name in ["a", "b"] {
                _ = try await downloader.file(from: url(first, "/bytes/1000/\(name).bin"), to: .directory(dir))
            }
            #expect(proxy.requests.filter { $0.method == "CONNECT" }.count == 1)
            _ = try await downloader.file(from: url(second, "/bytes/1000/c.bin"), to: .directory(dir))
            let targets = proxy.requests.filter { $0.method == "CONNECT" }.map(\.target)
            #expect(targets == ["localhost:\(first.port)", "localhost:\(second.port)"])
        }
    }

    @Test("each redirect hop chooses its proxy again, and -u stays with the first origin")
    func redirectReselects() async throws {
        let target = try origin()
        let start = try origin()
        let proxy = try proxy()
        try await withTemporaryDirectory { dir in
            // 127.0.0.1 bypasses the proxy; the redirect's target is named localhost and does not.
            let downloader = proxiedDownloader(proxy) { $0.proxy.noProxy = ["127.0.0.0/8"] }
            let next = "http://localhost:\(target.port)/bytes/500/r.bin"
            var request = DownloadRequest(url: url(start, "/redirect-to?url=\(next)"))
            request.credentials = Credentials(user: "ou", password: "op")
            let result = try await downloader.file(from: request, to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(500))
            #expect(proxy.requests.map(\.target) == [next])
            #expect(start.requests.first?.header("authorization") != nil)
            #expect(target.requests.allSatisfy { $0.header("authorization") == nil })
            #expect(proxy.requests.allSatisfy { $0.header("authorization") == nil })
        }
    }
}

/// Range and If-Range through a forwarding proxy, and a proxy that drops them.
@Suite("ranges through proxies", .throttled)
struct ProxyRangeTests {
    @Test("a resume through a proxy sends Range and If-Range on to the origin")
    func resumeThroughProxy() async throws {
        let server = try origin()
        let proxy = try proxy()
        try await withTemporaryDirectory { dir in
            let downloader = proxiedDownloader(proxy) { $0.connectionsPerDownload = 1 }
            let cut = DownloadRequest(url: url(server, "/bytes/400000/r.bin?drop-after=150000"))
            _ = await expectFailure(downloader, cut, to: .directory(dir))
            let result = try await downloader.file(from: url(server, "/bytes/400000/r.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(400_000))
            let resumed = try #require(server.requests.last)
            #expect(resumed.header("range")?.hasPrefix("bytes=") == true && resumed.header("range") != "bytes=0-")
            #expect(resumed.header("if-range") != nil)
            #expect(proxy.requests.last?.header("range") == resumed.header("range"))
        }
    }

    @Test("a proxy that answers a ranged request with the whole file: the resume rules start over")
    func proxyIgnoringRanges() async throws {
        let server = try origin()
        let proxy = try proxy(behaviour: .stripsRange)
        try await withTemporaryDirectory { dir in
            let downloader = proxiedDownloader(proxy) { $0.connectionsPerDownload = 1 }
            let cut = DownloadRequest(url: url(server, "/bytes/400000/s.bin?drop-after=150000"))
            _ = await expectFailure(downloader, cut, to: .directory(dir))
            #expect(listFiles(dir).contains("s.bin.part"))
            let result = try await downloader.file(from: url(server, "/bytes/400000/s.bin"), to: .directory(dir))
            #expect(try contents(result.fileURL) == expectedContent(400_000))
            #expect(server.requests.allSatisfy { $0.header("range") == nil })
            #expect(listFiles(dir) == ["s.bin"])
        }
    }
}
