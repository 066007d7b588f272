import Foundation
import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// Strict parsing of user-given URLs by ``HTTPURL/parse(_:)``.
@Suite struct HTTPURLTests {
    struct Expected: Sendable, CustomStringConvertible {
        var input: String
        var scheme: HTTPURL.Scheme
        var host: String
        var port: Int
        var target: String
        var hostHeader: String
        var isIPv6 = false
        var description: String { input }
    }

    static let valid: [Expected] = [
        Expected(input: "http://example.com", scheme: .http, host: "example.com", port: 80, target: "/", hostHeader: "example.com"),
        Expected(input: "HTTPS://Example.COM:8443/a/b?x=1#frag", scheme: .https, host: "example.com", port: 8443,
                 target: "/a/b?x=1", hostHeader: "example.com:8443"),
        Expected(input: "https://example.com:443/f", scheme: .https, host: "example.com", port: 443, target: "/f", hostHeader: "example.com"),
        Expected(input: "http://example.com:80/", scheme: .http, host: "example.com", port: 80, target: "/", hostHeader: "example.com"),
        Expected(input: "http://example.com:443/", scheme: .http, host: "example.com", port: 443, target: "/", hostHeader: "example.com:443"),
        Expected(input: "http://example.com:/x", scheme: .http, host: "example.com", port: 80, target: "/x", hostHeader: "example.com"),
        Expected(input: "http://example.com:08080/", scheme: .http, host: "example.com", port: 8080, target: "/", hostHeader: "example.com:8080"),
        Expected(input: "http://127.0.0.1:65535/", scheme: .http, host: "127.0.0.1", port: 65535, target: "/", hostHeader: "127.0.0.1:65535"),
        Expected(input: "http://[::1]:8080/x", scheme: .http, host: "::1", port: 8080, target: "/x", hostHeader: "[::1]:8080", isIPv6: true),
        Expected(input: "https://[2001:DB8::1]/", scheme: .https, host: "2001:db8::1", port: 443, target: "/", hostHeader: "[2001:db8::1]", isIPv6: true),
        Expected(input: "http://[::ffff:192.0.2.1]:1/", scheme: .http, host: "::ffff:192.0.2.1", port: 1, target: "/",
                 hostHeader: "[::ffff:192.0.2.1]:1", isIPv6: true),
        Expected(input: "http://host/caf\u{E9}?q=\u{E9}&r=\u{1F600}", scheme: .http, host: "host", port: 80,
                 target: "/caf%C3%A9?q=%C3%A9&r=%F0%9F%98%80", hostHeader: "host"),
        Expected(input: "http://host/a%2Fb%2f?x=%41", scheme: .http, host: "host", port: 80, target: "/a%2Fb%2f?x=%41", hostHeader: "host"),
        Expected(input: "http://host/a/./b/../c/", scheme: .http, host: "host", port: 80, target: "/a/c/", hostHeader: "host"),
        Expected(input: "http://host/../../x", scheme: .http, host: "host", port: 80, target: "/x", hostHeader: "host"),
        Expected(input: "http://host/a/%2E%2E/b", scheme: .http, host: "host", port: 80, target: "/a/%2E%2E/b", hostHeader: "host"),
        Expected(input: "http://host/caf\u{E9}/../c?d=\u{E9}", scheme: .http, host: "host", port: 80, target: "/c?d=%C3%A9",
                 hostHeader: "host"),
        Expected(input: "http://host?x", scheme: .http, host: "host", port: 80, target: "/?x", hostHeader: "host"),
        Expected(input: "http://host/?", scheme: .http, host: "host", port: 80, target: "/?", hostHeader: "host"),
        Expected(input: "http://host#only-fragment", scheme: .http, host: "host", port: 80, target: "/", hostHeader: "host"),
        Expected(input: "http://host/a\"b<c>d^e`f{g}h|i\\j[k]", scheme: .http, host: "host", port: 80,
                 target: "/a%22b%3Cc%3Ed%5Ee%60f%7Bg%7Dh%7Ci%5Cj%5Bk%5D", hostHeader: "host"),
        Expected(input: "http://host/p?a=b?c/d:e@f", scheme: .http, host: "host", port: 80, target: "/p?a=b?c/d:e@f", hostHeader: "host"),
        Expected(input: "http://my-host_1.example./", scheme: .http, host: "my-host_1.example.", port: 80, target: "/",
                 hostHeader: "my-host_1.example."),
    ]

    @Test(arguments: valid)
    func parsesValidURLs(_ expected: Expected) throws {
        let url = try HTTPURL.parse(expected.input)
        #expect(url.scheme == expected.scheme)
        #expect(url.host == expected.host)
        #expect(url.port == expected.port)
        #expect(url.target == expected.target)
        #expect(url.hostHeader == expected.hostHeader)
        #expect(url.isIPv6Literal == expected.isIPv6)
        #expect(url.origin == HTTPURL.Origin(scheme: expected.scheme, host: expected.host, port: expected.port))
        #expect(url.stringWithoutUserinfo == "\(expected.scheme.rawValue)://\(expected.hostHeader)\(expected.target)")
        #expect(try HTTPURL.parse(url.stringWithoutUserinfo) == url, "normalised form parses to itself")
    }

    @Test func splitsPathAndQuery() throws {
        let url = try HTTPURL.parse("http://h/a/b?c=d&e")
        #expect(url.path == "/a/b")
        #expect(url.query == "c=d&e")
        #expect(try HTTPURL.parse("http://h/a").query == nil)
        #expect(try HTTPURL.parse("http://h").path == "/")
    }

    @Test(arguments: [
        ("http://user:p%40ss@host/", "user", "p@ss"),
        ("http://user@host/", "user", nil),
        ("http://:pw@host/", "", "pw"),
        ("http://us%20er:a:b@host/", "us er", "a:b"),
        ("http://a@b:c@host/", "a@b", "c"),
        ("http://caf\u{E9}:pw@host/", "caf\u{E9}", "pw"),
    ] as [(String, String, String?)])
    func decodesUserinfo(_ input: String, user: String, password: String?) throws {
        let url = try HTTPURL.parse(input)
        #expect(url.user == user)
        #expect(url.password == password)
        #expect(url.host == "host")
        #expect(!url.description.contains("@"))
        #expect(!url.stringWithoutUserinfo.contains("@"))
    }

    @Test func noUserinfoMeansNil() throws {
        let url = try HTTPURL.parse("http://host/")
        #expect(url.user == nil && url.password == nil)
        #expect(try HTTPURL.parse("http://@host/").user == nil)
    }

    @Test(arguments: [
        "", "http://", "http:///path", "http://:80/", "http://@/x", "http://?x", "http://#f",
        "http://ho st/", "http://host/a b", " http://host/", "http://host/ ", "http://host/\t",
        "http://host/\r\nX-Injected: 1", "http://host/\n", "http://host/\u{7F}", "http://host/\0",
        "http://host/%", "http://host/%zz", "http://host/%4", "http://host/a%4g", "http://host?q=%g1", "http://host/?q=%",
        "http://host:abc/", "http://host:65536/", "http://host:0/", "http://host:-1/", "http://host:+80/",
        "http://host:99999999999999999999/", "http://host:8080:90/", "http://host: 80/",
        "http://[::1/", "http://[::1", "http://[/", "http://[]/", "http://[zz::1]/", "http://[1.2.3.4]/",
        "http://[::1]x/", "http://[::1]:x/", "http://[fe80::1%25eth0]/", "http://::1/", "http://]/",
        "http://b\u{FC}cher.de/", "http://host!/", "http://ho%73t/", "http://host\\evil/",
        "example.com/file", "http:example.com", "http:/example.com", "://host/", "1http://host/",
        "http://u%zz@host/", "http://user:p%@host/",
    ])
    func rejectsInvalidURLs(_ input: String) {
        let error = #expect(throws: HTTPClientError.self) { try HTTPURL.parse(input) }
        #expect(error?.kind == .invalidURL)
        #expect(error.map { !$0.message.contains("\r") && !$0.message.contains("\n") } == true, "one line")
    }

    @Test(arguments: ["ftp://host/file", "FTP://host/", "file:///etc/passwd", "data:text/plain,hi", "ws://host/", "localhost:8080/x"])
    func rejectsOtherSchemes(_ input: String) {
        let error = #expect(throws: HTTPClientError.self) { try HTTPURL.parse(input) }
        #expect(error?.kind == .unsupportedScheme)
    }

    @Test func unsupportedSchemeMessage() {
        let error = #expect(throws: HTTPClientError.self) { try HTTPURL.parse("FTP://host/") }
        #expect(error?.message == "unsupported scheme 'ftp' (only http and https)")
        #expect(error?.kind == .unsupportedScheme)
    }

    @Test func nonASCIIHostMessageMentionsIDNA() {
        let error = #expect(throws: HTTPClientError.self) { try HTTPURL.parse("http://b\u{FC}cher.de/") }
        #expect(error?.message.contains("IDNA") == true)
    }

    @Test(arguments: [
        "http://user:hunter2@ho st/?token=hunter2",
        "http://user:hunter2@host:abc/",
        "http://user:hun/ter2@host/",
        "http://user:hunter2@host/%zz?sig=hunter2",
        "https://host/\r\n?X-Amz-Signature=hunter2",
    ])
    func errorMessagesNeverContainSecrets(_ input: String) {
        let error = #expect(throws: HTTPClientError.self) { try HTTPURL.parse(input) }
        #expect(error?.message.contains("hunter2") == false)
        #expect(error?.message.contains("ter2") == false)
    }

    @Test func descriptionIsRedacted() throws {
        let url = try HTTPURL.parse("https://user:pw@host/p?X-Amz-Signature=abc&a=1")
        #expect(url.description == "https://host/p?X-Amz-Signature=REDACTED&a=1")
        #expect("\(url)" == url.description)
        #expect(url.stringWithoutUserinfo == "https://host/p?X-Amz-Signature=abc&a=1")
    }

    @Test func equalityAndHashingUseTheNormalisedForm() throws {
        let a = try HTTPURL.parse("HTTP://Host:80/a/./b")
        let b = try HTTPURL.parse("http://host/a/b")
        #expect(a == b)
        #expect(Set([a, b]).count == 1)
        #expect(try HTTPURL.parse("http://host/a?") != HTTPURL.parse("http://host/a"))
    }

    @Test func pathCharactersAreRFC3986sUnreservedSubDelimsColonAtAndSlash() {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(isPathCharacter(byte) == allowed.contains(byte), "byte \(byte)")
        }
    }

}
