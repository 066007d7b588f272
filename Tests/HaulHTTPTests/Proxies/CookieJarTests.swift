import Testing
@testable import HaulHTTP

/// ``CookieJar``: the Netscape cookies.txt format and where each cookie goes.
@Suite("cookies.txt")
struct CookieJarTests {
    static let now: Int64 = 1_800_000_000

    func header(_ text: String, _ url: String) throws -> String? {
        try CookieJar(parsing: text, now: Self.now).header(for: HTTPURL.parse(url))
    }

    func line(_ domain: String, _ sub: String = "FALSE", _ path: String = "/", _ secure: String = "FALSE",
              _ expiry: String = "0", _ name: String = "n", _ value: String = "v") -> String {
        [domain, sub, path, secure, expiry, name, value].joined(separator: "\t")
    }

    @Test("domain: exact, or subdomains at a label boundary when TRUE", arguments: [
        ("a.test", "FALSE", "http://a.test/", true),
        ("a.test", "FALSE", "http://www.a.test/", false),
        ("a.test", "TRUE", "http://www.a.test/", true),
        (".a.test", "TRUE", "http://x.y.a.test/", true),
        ("a.test", "TRUE", "http://nota.test/", false),
        ("a.test", "TRUE", "http://a.test.evil/", false),
        ("A.TEST", "FALSE", "http://a.test:8080/", true),
        ("127.0.0.1", "TRUE", "http://127.0.0.1/", true),
        ("0.0.1", "TRUE", "http://127.0.0.1/", false),        // never a suffix of an IP address
    ] as [(String, String, String, Bool)])
    func domains(_ domain: String, _ sub: String, _ url: String, _ sent: Bool) throws {
        #expect(try header(line(domain, sub), url) == (sent ? "n=v" : nil))
    }

    @Test("path matching (RFC 6265 §5.1.4)", arguments: [
        ("/", "/anything", true), ("/docs", "/docs", true), ("/docs", "/docs/a", true), ("/docs", "/docsx", false),
        ("/docs/", "/docs/a", true), ("/docs/", "/docs", false), ("/a/b", "/a", false),
    ])
    func paths(_ cookiePath: String, _ requestPath: String, _ sent: Bool) throws {
        #expect(try header(line("a.test", "FALSE", cookiePath), "http://a.test" + requestPath) == (sent ? "n=v" : nil))
    }

    @Test("secure cookies go over https, or to loopback as curl allows")
    func secure() throws {
        let text = line("a.test", "FALSE", "/", "TRUE") + "\n" + line("127.0.0.1", "FALSE", "/", "TRUE") + "\n"
            + line("localhost", "FALSE", "/", "TRUE")
        #expect(try header(text, "http://a.test/") == nil)
        #expect(try header(text, "https://a.test/") == "n=v")
        #expect(try header(text, "http://127.0.0.1:8080/") == "n=v")
        #expect(try header(text, "http://localhost:8080/") == "n=v")
    }

    @Test("expired cookies are dropped; 0 is a session cookie")
    func expiry() throws {
        let text = line("a.test", "FALSE", "/", "FALSE", "0", "session") + "\n"
            + line("a.test", "FALSE", "/", "FALSE", String(Self.now - 1), "old") + "\n"
            + line("a.test", "FALSE", "/", "FALSE", String(Self.now + 100), "fresh")
        #expect(try header(text, "http://a.test/") == "session=v; fresh=v")
    }

    @Test("#HttpOnly_ lines are cookies; other # lines and blank lines are comments; CRLF is fine")
    func comments() throws {
        let text = "# Netscape HTTP Cookie File\r\n\r\n#HttpOnly_" + line("a.test", "FALSE", "/", "FALSE", "0", "h") + "\r\n"
            + "#" + line("a.test", "FALSE", "/", "FALSE", "0", "commented") + "\r\n   \r\n"
        let jar = CookieJar(parsing: text, now: Self.now)
        #expect(jar.malformedLines == 0)
        #expect(try jar.header(for: HTTPURL.parse("http://a.test/")) == "h=v")
    }

    @Test("longer paths first, then file order; six fields mean an empty value")
    func ordering() throws {
        let text = line("a.test", "FALSE", "/", "FALSE", "0", "a") + "\n" + line("a.test", "FALSE", "/x", "FALSE", "0", "b") + "\n"
            + ["a.test", "FALSE", "/", "FALSE", "0", "c"].joined(separator: "\t")
        #expect(try header(text, "http://a.test/x/y") == "b=v; a=v; c=")
    }

    @Test("malformed lines are skipped and counted", arguments: [
        "a.test\tFALSE\t/\tFALSE\t0",                 // five fields
        "a.test\tMAYBE\t/\tFALSE\t0\tn\tv",           // bad flag
        "a.test\tFALSE\tnoslash\tFALSE\t0\tn\tv",     // path without '/'
        "a.test\tFALSE\t/\tFALSE\tsoon\tn\tv",        // bad expiry
        "a.test\tFALSE\t/\tFALSE\t-5\tn\tv",
        "\tFALSE\t/\tFALSE\t0\tn\tv",                 // no domain
        "a.test\tFALSE\t/\tFALSE\t0\t\tv",            // no name
        "a.test\tFALSE\t/\tFALSE\t0\tn\tv;evil=1",    // ';' would add a cookie
        "a.test\tFALSE\t/\tFALSE\t0\tn\tv\u{1}",      // control character
        "a.test\tFALSE\t/\tFALSE\t0\tn\tv\textra",    // eight fields
        "a b.test\tFALSE\t/\tFALSE\t0\tn\tv",
        "just some text",
    ])
    func malformed(_ bad: String) throws {
        let jar = CookieJar(parsing: bad + "\n" + line("a.test"), now: Self.now)
        #expect(jar.malformedLines == 1)
        #expect(try jar.header(for: HTTPURL.parse("http://a.test/")) == "n=v")
    }

    @Test("hostile input never crashes", arguments: [
        "", "\n\n\n", "\t\t\t\t\t\t", String(repeating: "\t", count: 10_000), "#HttpOnly_", "#HttpOnly_\t\t\t\t\t\t",
        "a.test\tTRUE\t/\tTRUE\t99999999999999999999999\tn\tv", "\u{FEFF}a.test\tFALSE\t/\tFALSE\t0\tn\tv",
    ])
    func hostile(_ text: String) throws {
        let jar = CookieJar(parsing: text, now: Self.now)
        _ = try jar.header(for: HTTPURL.parse("https://a.test/"))
    }
}
