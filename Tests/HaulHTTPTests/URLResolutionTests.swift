import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// ``HTTPURL/resolving(_:)``: RFC 3986 §5.4 examples and Location specifics.
@Suite struct URLResolutionTests {
    static let base = "http://a/b/c/d;p?q"

    /// RFC 3986 §5.4.1 (normal) with `g:h` left out (it is a non-http scheme, refused below);
    /// fragments are dropped from every result.
    static let normal: [(String, String)] = [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g/"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q"),
        ("g#s", "http://a/b/c/g"), ("g?y#s", "http://a/b/c/g?y"), (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"),
        ("g;x?y#s", "http://a/b/c/g;x?y"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"),
        ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"),
        ("../../", "http://a/"), ("../../g", "http://a/g"),
    ]

    /// RFC 3986 §5.4.2 (abnormal); `http:g` resolved the backward-compatible way, like browsers.
    static let abnormal: [(String, String)] = [
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"), ("g/../h", "http://a/b/c/h"),
        ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"), ("g?y/./x", "http://a/b/c/g?y/./x"),
        ("g?y/../x", "http://a/b/c/g?y/../x"), ("g#s/./x", "http://a/b/c/g"), ("g#s/../x", "http://a/b/c/g"),
        ("http:g", "http://a/b/c/g"),
    ]

    @Test(arguments: normal + abnormal)
    func resolvesTheRFCExamples(_ reference: String, expected: String) throws {
        let resolved = try HTTPURL.parse(Self.base).resolving(reference)
        #expect(resolved.stringWithoutUserinfo == expected)
    }

    @Test(arguments: [
        ("https://other.example:8443/x?y", "https://other.example:8443/x?y"),
        ("HTTPS://OTHER/x", "https://other/x"),
        ("//other:81/p", "http://other:81/p"),
        ("/caf\u{E9}", "http://a/caf%C3%A9"),
        ("/a%20b", "http://a/a%20b"),
        ("g?q=\u{E9}", "http://a/b/c/g?q=%C3%A9"),
        ("//[::1]:8080/x", "http://[::1]:8080/x"),
    ])
    func resolvesLocations(_ reference: String, expected: String) throws {
        #expect(try HTTPURL.parse(Self.base).resolving(reference).stringWithoutUserinfo == expected)
    }

    @Test(arguments: [
        ("g:h", "g"), ("file:///etc/passwd", "file"), ("FILE:/etc/passwd", "file"), ("ftp://host/x", "ftp"),
        ("data:text/html,<b>", "data"), ("javascript:alert(1)", "javascript"), ("mailto:a@b", "mailto"),
        ("x-unknown+s.1:stuff", "x-unknown+s.1"),
    ])
    func refusesNonHTTPSchemes(_ reference: String, scheme: String) {
        let error = #expect(throws: HTTPClientError.self) { try HTTPURL.parse(Self.base).resolving(reference) }
        #expect(error?.kind == .redirectRefused)
        #expect(error?.message.contains("\(scheme): URL refused") == true)
    }

    @Test func refusalMessageForFile() {
        let error = #expect(throws: HTTPClientError.self) { try HTTPURL.parse(Self.base).resolving("file:///etc/passwd") }
        #expect(error?.message == "redirect to a file: URL refused")
    }

    @Test(arguments: ["http://ho st/", "/a b", "/x\r\nSet-Cookie: a=b", "//host:99999/", "//[::1/", "/%zz", "https:relative", "1x:y"])
    func rejectsMalformedReferences(_ reference: String) {
        let error = #expect(throws: HTTPClientError.self) { try HTTPURL.parse(Self.base).resolving(reference) }
        #expect(error?.kind == .invalidURL)
    }

    @Test func userinfoInsideALocationIsDropped() throws {
        let base = try HTTPURL.parse("http://u:p@a/b")
        let absolute = try base.resolving("http://evil:secret@a/c")
        #expect(absolute.user == nil && absolute.password == nil)
        let schemeRelative = try base.resolving("//evil:secret@other/c")
        #expect(schemeRelative.user == nil && schemeRelative.host == "other")
    }

    @Test func aRelativeReferenceKeepsTheBaseUserinfo() throws {
        let resolved = try HTTPURL.parse("http://u:p@a/b/c").resolving("d")
        #expect(resolved.user == "u" && resolved.password == "p")
        #expect(resolved.stringWithoutUserinfo == "http://a/b/d")
    }

    @Test func keepsTheBasePortAndScheme() throws {
        let base = try HTTPURL.parse("https://host:8443/dir/file?x=1")
        #expect(try base.resolving("other").stringWithoutUserinfo == "https://host:8443/dir/other")
        #expect(try base.resolving("?y=2").stringWithoutUserinfo == "https://host:8443/dir/file?y=2")
        #expect(try base.resolving("//h2/").stringWithoutUserinfo == "https://h2/")
    }
}
