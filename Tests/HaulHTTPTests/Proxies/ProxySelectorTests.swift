import Testing
@testable import HaulHTTP

/// ``ProxySelector`` and ``NoProxyList``: curl's rules, case by case.
@Suite("proxy selection")
struct ProxySelectorTests {
    func chosen(_ url: String, _ environment: [String: String], proxy: String? = nil, noProxy: String? = nil) throws -> String? {
        let selector = try ProxySelector(environment: environment, proxy: proxy, noProxy: noProxy)
        return selector.proxy(for: try HTTPURL.parse(url)).map(\.description)
    }

    @Test("environment variables, in curl's order", arguments: [
        // (URL, environment, expected proxy)
        ("http://a.test/", ["http_proxy": "p1:1"], "http://p1:1"),
        ("http://a.test/", ["HTTP_PROXY": "p1:1"], nil),                                 // uppercase ignored (CGI)
        ("http://a.test/", ["HTTP_PROXY": "p1:1", "all_proxy": "p2:2"], "http://p2:2"),
        ("https://a.test/", ["http_proxy": "p1:1"], nil),
        ("https://a.test/", ["https_proxy": "p1:1"], "http://p1:1"),
        ("https://a.test/", ["HTTPS_PROXY": "p1:1"], "http://p1:1"),
        ("https://a.test/", ["https_proxy": "p1:1", "HTTPS_PROXY": "p2:2"], "http://p1:1"),
        ("https://a.test/", ["all_proxy": "socks5h://p3"], "socks5h://p3:1080"),
        ("http://a.test/", ["ALL_PROXY": "p3"], "http://p3:1080"),
        ("http://a.test/", ["all_proxy": "p3", "ALL_PROXY": "p4"], "http://p3:1080"),
        ("https://a.test/", ["https_proxy": "", "all_proxy": "p3"], nil),                // set but empty: none
        ("http://a.test/", ["http_proxy": "https://p5"], "https://p5:443"),
        ("http://a.test/", [:], nil),
    ] as [(String, [String: String], String?)])
    func environment(_ url: String, _ environment: [String: String], _ expected: String?) throws {
        #expect(try chosen(url, environment) == expected)
    }

    @Test("--proxy overrides the environment; --proxy= turns it off")
    func explicitProxy() throws {
        let environment = ["http_proxy": "env:1", "https_proxy": "env:2"]
        #expect(try chosen("http://a.test/", environment, proxy: "cli:3") == "http://cli:3")
        #expect(try chosen("https://a.test/", environment, proxy: "socks5://cli:4") == "socks5://cli:4")
        #expect(try chosen("http://a.test/", environment, proxy: "") == nil)
        #expect(try chosen("https://a.test/", environment, proxy: "") == nil)
    }

    @Test("no_proxy entries", arguments: [
        // (host, list, bypasses)
        ("example.com", "example.com", true),
        ("www.example.com", "example.com", true),
        ("a.b.example.com", ".example.com", true),
        ("notexample.com", "example.com", false),
        ("example.com.evil", "example.com", false),
        ("EXAMPLE.com", "Example.COM", true),
        ("example.com", "other.test, example.com", true),
        ("example.com", "other.test,,  example.com ", true),
        ("example.com", "*", true),
        ("127.0.0.1", "*", true),
        ("example.com", "other.test,*", false),          // '*' counts only alone
        ("example.com", "", false),
        ("example.com", "example.com:8080", false),       // no ports
        ("127.0.0.1", "127.0.0.1", true),
        ("127.0.0.2", "127.0.0.0/8", true),
        ("128.0.0.1", "127.0.0.0/8", false),
        ("10.1.2.3", "10.0.0.0/8", true),
        ("192.168.1.1", "192.168.0.0/16", true),
        ("192.169.1.1", "192.168.0.0/16", false),
        ("::1", "::1", true),
        ("::1", "[::1]", true),
        ("::2", "::1", false),
        ("fe80::1", "fe80::/10", true),
        ("fec0::1", "fe80::/10", false),
        ("127.0.0.1", "localhost", false),                // names are not resolved
        ("localhost", "127.0.0.1", false),
        ("1.2.3.4", "0.0.0.0/0", true),
        ("1.2.3.4", "1.2.3.4/33", false),                 // a bad prefix is ignored
        ("1.2.3.4", "::/0", false),                       // families never mix
    ] as [(String, String, Bool)])
    func noProxy(_ host: String, _ list: String, _ bypasses: Bool) {
        #expect(NoProxyList(list).matches(host: host) == bypasses)
    }

    @Test("no_proxy then NO_PROXY; --noproxy overrides, --noproxy= cancels")
    func noProxySources() throws {
        let proxy = ["http_proxy": "p:1"]
        #expect(try chosen("http://a.test/", proxy.merging(["no_proxy": "a.test"]) { $1 }) == nil)
        #expect(try chosen("http://a.test/", proxy.merging(["NO_PROXY": "a.test"]) { $1 }) == nil)
        #expect(try chosen("http://a.test/", proxy.merging(["no_proxy": "b.test", "NO_PROXY": "a.test"]) { $1 }) == "http://p:1")
        #expect(try chosen("http://a.test/", proxy.merging(["no_proxy": "a.test"]) { $1 }, noProxy: "") == "http://p:1")
        #expect(try chosen("http://a.test/", proxy, noProxy: "a.test") == nil)
        #expect(try chosen("http://[::1]:8/", proxy, noProxy: "::1") == nil)
        #expect(try chosen("http://a.test/", [:], proxy: "p:2", noProxy: "*") == nil)
    }

    @Test("a bad proxy URL in a variable that is read fails the whole selection")
    func badEnvironmentProxy() {
        #expect(throws: HTTPClientError.self) { try ProxySelector(environment: ["http_proxy": "ftp://p"], proxy: nil, noProxy: nil) }
        #expect(throws: HTTPClientError.self) { try ProxySelector(environment: ["all_proxy": "p:99999"], proxy: nil, noProxy: nil) }
        // --proxy replaces the environment: its variables are not read at all.
        #expect(throws: Never.self) { try ProxySelector(environment: ["http_proxy": "ftp://p"], proxy: "p:1", noProxy: nil) }
    }
}
