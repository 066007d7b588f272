import Testing
@testable import HaulHTTP

/// What goes into a request through a proxy, which credentials each hop gets, and the pool's keys.
@Suite("proxy requests, credentials and routes")
struct ProxyRequestTests {
    func text(_ head: RequestHead) -> String { String(decoding: head.serialized(), as: UTF8.self) }

    @Test("a forwarded request is in absolute form, without userinfo or fragment, with Proxy-Authorization")
    func absoluteForm() throws {
        let url = try HTTPURL.parse("http://user:pw@Origin.test:8080/a%20b?q=1#frag")
        let head = try RequestHead.make(method: .get, url: url, userAgent: "ua", userHeaders: [("Proxy-Authorization", "mine")],
                                        sendUserinfo: false, range: ByteRangeRequest(first: 5, last: nil), ifRange: "\"e\"",
                                        proxyAuthorization: "Basic cHJveHk=", absoluteForm: true)
        #expect(text(head) == "GET http://origin.test:8080/a%20b?q=1 HTTP/1.1\r\nHost: origin.test:8080\r\nUser-Agent: ua\r\n"
                + "Accept: */*\r\nAccept-Encoding: identity\r\nProxy-Authorization: Basic cHJveHk=\r\nRange: bytes=5-\r\n"
                + "If-Range: \"e\"\r\n\r\n")
    }

    @Test("Authorization and Cookie from the hop's choice; a user's Authorization wins, a user's Cookie comes first")
    func authorizationAndCookie() throws {
        let url = try HTTPURL.parse("http://a.test/")
        let head = try RequestHead.make(method: .get, url: url, userAgent: "ua", userHeaders: [("Cookie", "u=1")], sendUserinfo: false,
                                        range: nil, ifRange: nil, authorization: "Basic eA==", cookie: "j=2")
        #expect(head.headers["Authorization"] == "Basic eA==")
        #expect(head.headers.values(for: "Cookie") == ["u=1; j=2"])
        let user = try RequestHead.make(method: .get, url: url, userAgent: "ua", userHeaders: [("Authorization", "Bearer t")],
                                        sendUserinfo: false, range: nil, ifRange: nil, authorization: "Basic eA==")
        #expect(user.headers.values(for: "Authorization") == ["Bearer t"])
        #expect(throws: HTTPClientError.self) {
            try RequestHead.make(method: .get, url: url, userAgent: "ua", userHeaders: [], sendUserinfo: false, range: nil,
                                 ifRange: nil, cookie: "a=1\r\nX: y")
        }
    }

    @Test("credentials per hop: userinfo, then -u, then netrc; after leaving the origin, netrc for the new host only")
    func credentialsPerHop() throws {
        let netrc = Netrc(parsing: "machine a.test login na password np\nmachine b.test login nb password bp")
        let explicit = BasicCredentials(user: "u", password: "p")
        func chosen(_ url: String, original: Bool, explicit: BasicCredentials? = nil, netrc: Netrc? = netrc) throws -> String? {
            BasicCredentials.forRequest(to: try HTTPURL.parse(url), onOriginalOrigin: original, explicit: explicit, netrc: netrc)
                .map { "\($0.user):\($0.password)" }
        }
        #expect(try chosen("http://x:y@a.test/", original: true, explicit: explicit) == "x:y")
        #expect(try chosen("http://na@a.test/", original: true) == "na:np")          // the user's password from netrc
        #expect(try chosen("http://zz@a.test/", original: true) == "zz:")            // not that user's entry
        #expect(try chosen("http://a.test/", original: true, explicit: explicit) == "u:p")
        #expect(try chosen("http://a.test/", original: true) == "na:np")
        #expect(try chosen("http://b.test/", original: false, explicit: explicit) == "nb:bp")
        #expect(try chosen("http://c.test/", original: false, explicit: explicit) == nil)
        #expect(try chosen("http://c.test/", original: true, explicit: nil, netrc: nil) == nil)
    }

    @Test("routes: forwarding is keyed by proxy and credentials; tunnels by target and TLS settings too")
    func routes() throws {
        let tls = TLSSettings(), other = TLSSettings(insecure: true)
        let proxy = try ProxyURL.parse("http://u:p@p:1"), otherUser = try ProxyURL.parse("http://v:p@p:1")
        func route(_ url: String, _ proxy: ProxyURL?, _ tls: TLSSettings = TLSSettings()) throws -> ConnectionRoute {
            ConnectionRoute(url: try HTTPURL.parse(url), proxy: proxy, tls: tls, proxyTLS: TLSSettings())
        }
        #expect(try route("http://a.test/", proxy) == route("http://b.test:8080/", proxy))
        #expect(try route("http://a.test/", proxy) != route("http://a.test/", otherUser))
        #expect(try route("https://a.test/", proxy) != route("https://b.test/", proxy))
        #expect(try route("https://a.test/", proxy) != route("https://a.test:444/", proxy))
        #expect(try route("https://a.test/", proxy, tls) != route("https://a.test/", proxy, other))
        #expect(try route("https://a.test/", proxy) != route("https://a.test/", otherUser))
        #expect(try route("https://a.test/", proxy) != route("https://a.test/", nil))
        #expect(try route("http://a.test/", proxy).isForwarding)
        #expect(try !route("https://a.test/", proxy).isForwarding)
        let socks = try ProxyURL.parse("socks5h://p:1")
        #expect(try route("http://a.test/", socks) != route("http://b.test/", socks))
        #expect(try !route("http://a.test/", socks).isForwarding)
    }
}
