import Foundation
import Haul
import HaulServer
import HaulTestSupport
import Testing

/// Proxies that misbehave: nothing is saved, the error has the right exit status, and nothing
/// meant for the origin reached the proxy.
@Suite("hostile proxies", .throttled)
struct HostileProxyTests {
    func failure(_ behaviour: ProxyServer.Behaviour, kind: ProxyServer.Kind = .http, tlsOrigin: Bool = true,
                 credentials: String? = nil, user: String? = nil,
                 _ adjust: (inout Downloader.Configuration) -> Void = { _ in }) async throws -> (DownloadError?, ProxyServer, HaulServer) {
        let server = try origin(tls: tlsOrigin)
        let proxy = try proxy(kind, user: user, password: user == nil ? nil : "pp", behaviour: behaviour)
        var error: DownloadError?
        await withTemporaryDirectory { dir in
            var request = DownloadRequest(url: url(server, "/bytes/5000/f.bin"), headers: [("Cookie", "c=secret")])
            request.credentials = Credentials(user: "origin-user", password: "origin-pass")
            error = await expectFailure(proxiedDownloader(proxy, credentials: credentials, adjust), request, to: .directory(dir))
            #expect(listFiles(dir) == [], "nothing is saved")
        }
        #expect(server.requests.isEmpty, "nothing reached the origin")
        // A forwarded request is the origin's request; a CONNECT must carry nothing of it.
        for seen in proxy.requests where seen.method == "CONNECT" {
            let allowed: Set = ["host", "user-agent", "proxy-authorization"]
            #expect(seen.headerNames.allSatisfy { allowed.contains($0) }, "origin headers reached the proxy")
        }
        return (error, proxy, server)
    }

    @Test("a 200 to CONNECT followed by a body is not a tunnel (exit 7)")
    func connectWithBody() async throws {
        let (error, _, _) = try await failure(.connectAnsweredWithBody)
        #expect(error?.code == .tunnelRefused)
        #expect(error?.code.exitStatus == 7)
    }

    @Test("a CONNECT answered 502 with a body like the file is never saved (exit 7)")
    func connectRefusedWithBody() async throws {
        let (error, _, _) = try await failure(.connectRefusedWithBody(bytes: 5000))
        #expect(error?.code == .tunnelRefused)
        #expect(error?.message.contains("502") == true)
    }

    @Test("a 401 to CONNECT is exit 6, and the origin's credentials never go to the proxy")
    func unauthorizedOnConnect() async throws {
        let (error, proxy, _) = try await failure(.unauthorizedOnConnect)
        #expect(error?.code == .authenticationRefused)
        #expect(error?.code.exitStatus == 6)
        #expect(proxy.requests.count == 1)
    }

    @Test("407 without credentials, with refused credentials, and with only non-Basic schemes: one attempt, exit 6",
          arguments: [false, true])
    func proxyAuthentication(tlsOrigin: Bool) async throws {
        let (missing, first, _) = try await failure(.normal, tlsOrigin: tlsOrigin, user: "pu")
        #expect(missing?.code == .authenticationRefused)
        #expect(missing?.message.contains("requires authentication") == true)
        #expect(first.requests.count == 1)
        let (refused, second, _) = try await failure(.normal, tlsOrigin: tlsOrigin, credentials: "pu:wrong", user: "pu")
        #expect(refused?.message.contains("refused the credentials") == true)
        #expect(refused?.message.contains("wrong") == false)
        #expect(second.requests.count == 1, "a 407 is never a loop")
        let (negotiate, _, _) = try await failure(.alwaysRequireAuthentication(scheme: "Negotiate"), tlsOrigin: tlsOrigin,
                                                  credentials: "pu:pp")
        #expect(negotiate?.code == .authenticationRefused)
        #expect(negotiate?.message.contains("Negotiate") == true)
    }

    @Test("a SOCKS5 proxy that picks a method not offered fails (exit 4)")
    func unofferedMethod() async throws {
        let (error, _, _) = try await failure(.socksPicksUnofferedMethod, kind: .socks5)
        #expect(error?.code == .proxyFailure)
        #expect(error?.code.exitStatus == 4)
    }

    /// The error's code is the proof: only the connect timeout's deadline ends a handshake that
    /// waits for bytes the proxy never sends (no other failure reports `connectTimeout`).
    @Test("a truncated SOCKS5 reply ends at the connect timeout")
    func truncatedReply() async throws {
        let (error, _, _) = try await failure(.socksTruncatedReply, kind: .socks5) { $0.connectTimeout = .seconds(1) }
        #expect(error?.code == .connectTimeout)
        #expect(error?.code.exitStatus == 4)
    }

    @Test("SOCKS5 reply codes become clear errors (exit 4)", arguments: [UInt8(1), 2, 3, 4, 5])
    func replyCodes(_ code: UInt8) async throws {
        let (error, _, _) = try await failure(.socksReply(code), kind: .socks5)
        #expect(error?.code == .proxyFailure)
        #expect(error?.message.contains("(\(code))") == true)
    }

    @Test("SOCKS5 credentials refused: exit 6")
    func socksRefused() async throws {
        let (error, _, _) = try await failure(.normal, kind: .socks5, credentials: "pu:bad", user: "pu")
        #expect(error?.code == .authenticationRefused)
        #expect(error?.message.contains("bad") == false)
    }

    @Test("a bad proxy URL fails before any connection (exit 2)", arguments: ["ftp://127.0.0.1:1", "http://127.0.0.1:0", "http://h\r\n:1"])
    func badProxyURL(_ text: String) async throws {
        let server = try origin()
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.proxy = .url(text) }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/bytes/10")), to: .directory(dir))
            #expect(error?.code == .invalidArgument)
            #expect(error?.code.exitStatus == 2)
        }
        #expect(server.connectionCount == 0)
    }

    @Test("a bad proxy URL with its no-proxy list (a selector made once per downloader) fails every download")
    func badProxyURLMadeOnce() async throws {
        let server = try origin()
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.proxy = .url("ftp://127.0.0.1:1", noProxy: []) }
            for _ in 0..<2 {
                let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/bytes/10")), to: .directory(dir))
                #expect(error?.code == .invalidArgument)
            }
        }
        #expect(server.connectionCount == 0)
    }

    @Test("the proxy settings read the process environment at each download only when they need it")
    func readsProcessEnvironment() {
        typealias Options = Downloader.ProxyOptions
        #expect(Options.environment.readsProcessEnvironment)
        #expect(!Options(source: .environment(["http_proxy": "http://127.0.0.1:1"])).readsProcessEnvironment)
        #expect(Options.none.readsProcessEnvironment)   // no_proxy still comes from there
        #expect(!Options(source: .none, noProxy: []).readsProcessEnvironment)
        #expect(Options.url("http://127.0.0.1:1").readsProcessEnvironment)
        #expect(!Options.url("http://127.0.0.1:1", noProxy: ["example.com"]).readsProcessEnvironment)
    }

    @Test("an unreachable proxy is a network failure (exit 4)")
    func unreachable() async throws {
        let server = try origin()
        let closed = try ProxyServer()
        let port = closed.port
        closed.stop()
        await withTemporaryDirectory { dir in
            let downloader = testDownloader { $0.proxy = .url("http://127.0.0.1:\(port)") }
            let error = await expectFailure(downloader, DownloadRequest(url: url(server, "/bytes/10")), to: .directory(dir))
            #expect(error?.code.exitStatus == 4)
            #expect(error?.message.contains("proxy") == true)
        }
    }
}
