import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// ``RedirectPolicy``: where redirects go and what is sent after each hop.
@Suite struct RedirectPolicyTests {
    static let headers: [(name: String, value: String)] = [
        ("Authorization", "Bearer t"), ("Cookie", "c=1"), ("Proxy-Authorization", "Basic x"), ("X-Custom", "1"),
    ]

    func policy(_ url: String = "http://u:p@a.example/start", maximum: Int = 20, insecure: Bool = false) throws -> RedirectPolicy {
        try RedirectPolicy(original: HTTPURL.parse(url), userHeaders: Self.headers, maximumRedirects: maximum,
                           allowsInsecureRedirects: insecure)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func followsRedirectStatuses(_ status: Int) throws {
        #expect(RedirectPolicy.isRedirect(status))
        var redirects = try policy()
        #expect(try redirects.follow(status: status, location: "/next").stringWithoutUserinfo == "http://a.example/next")
    }

    @Test(arguments: [200, 300, 304, 305, 306, 309, 399, 404])
    func otherStatusesAreNotRedirects(_ status: Int) throws {
        #expect(!RedirectPolicy.isRedirect(status))
        var redirects = try policy()
        let error = #expect(throws: HTTPClientError.self) { try redirects.follow(status: status, location: "/x") }
        #expect(error?.kind == .internalError)
    }

    @Test func sameOriginKeepsHeadersAndUserinfo() throws {
        var redirects = try policy()
        let next = try redirects.follow(status: 302, location: "other?x=1")
        #expect(next == redirects.current)
        #expect(next.stringWithoutUserinfo == "http://a.example/other?x=1")
        #expect(next.user == "u" && next.password == "p")
        #expect(redirects.sendsUserinfo)
        #expect(redirects.userHeaders.count == Self.headers.count)
        #expect(redirects.hops == 1)
    }

    @Test func userinfoInsideALocationIsNotUsed() throws {
        var redirects = try policy()
        let next = try redirects.follow(status: 302, location: "http://evil:pw@a.example/x")
        #expect(next.user == "u" && next.password == "p")
    }

    @Test(arguments: [
        "http://b.example/x",  // other host
        "http://a.example:8080/x",  // same host, other port
        "https://a.example/x",  // same host, other scheme
        "//b.example/x",
    ])
    func anOriginChangeDropsHeadersAndUserinfoForGood(_ location: String) throws {
        var redirects = try policy(insecure: true)  // so that https://a.example may come back to http
        let next = try redirects.follow(status: 301, location: location)
        #expect(redirects.userHeaders.isEmpty)
        #expect(!redirects.sendsUserinfo)
        #expect(next.user == nil && next.password == nil)

        let back = try redirects.follow(status: 302, location: "http://a.example/back")
        #expect(back.origin == (try HTTPURL.parse("http://a.example/")).origin)
        #expect(redirects.userHeaders.isEmpty)
        #expect(!redirects.sendsUserinfo)
        #expect(back.user == nil)
    }

    @Test func chainHTTPToHTTPSToOtherHost() throws {
        var redirects = try policy("http://a.example/1")
        #expect(try redirects.follow(status: 301, location: "https://a.example/2").scheme == .https)
        #expect(redirects.userHeaders.isEmpty)
        let last = try redirects.follow(status: 302, location: "https://cdn.example/3")
        #expect(last.stringWithoutUserinfo == "https://cdn.example/3")
        #expect(redirects.hops == 2)
    }

    @Test func httpsToHTTPIsRefusedUnlessAllowed() throws {
        var strict = try policy("https://a.example/x")
        let error = #expect(throws: HTTPClientError.self) { try strict.follow(status: 302, location: "http://a.example/y") }
        #expect(error?.kind == .redirectRefused)
        #expect(strict.hops == 0)

        var lenient = try policy("https://a.example/x", insecure: true)
        #expect(try lenient.follow(status: 302, location: "http://a.example/y").scheme == .http)
        #expect(lenient.userHeaders.isEmpty)
    }

    @Test(arguments: [nil, "", "  "] as [String?])
    func aMissingLocationIsRefused(_ location: String?) throws {
        var redirects = try policy()
        let error = #expect(throws: HTTPClientError.self) { try redirects.follow(status: 302, location: location) }
        #expect(error?.kind == .redirectRefused)
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://a.example/x", "data:,x", "javascript:alert(1)", "gopher://x/"])
    func nonHTTPTargetsAreRefused(_ location: String) throws {
        var redirects = try policy()
        let error = #expect(throws: HTTPClientError.self) { try redirects.follow(status: 302, location: location) }
        #expect(error?.kind == .redirectRefused)
    }

    @Test(arguments: ["http://ho st/", "http://a.example:99999/", "/x\r\ny", "//[::1/"])
    func invalidTargetsAreRefusedAsProtocolErrors(_ location: String) throws {
        var redirects = try policy()
        let error = #expect(throws: HTTPClientError.self) { try redirects.follow(status: 302, location: location) }
        #expect(error?.kind == .redirectRefused)
    }

    @Test func aLoopIsDetected() throws {
        var redirects = try policy("http://a.example/a")
        _ = try redirects.follow(status: 302, location: "/b")
        let error = #expect(throws: HTTPClientError.self) { try redirects.follow(status: 302, location: "/a") }
        #expect(error?.kind == .tooManyRedirects)
        #expect(error?.message.contains("redirect loop") == true)

        var selfLoop = try policy("http://a.example/a")
        let again = #expect(throws: HTTPClientError.self) { try selfLoop.follow(status: 307, location: "/a#frag") }
        #expect(again?.message.contains("redirect loop") == true)
    }

    @Test func atMostTwentyHopsByDefault() throws {
        var redirects = try policy("http://a.example/0")
        for hop in 1...20 {
            _ = try redirects.follow(status: 302, location: "/\(hop)")
        }
        #expect(redirects.hops == 20)
        let error = #expect(throws: HTTPClientError.self) { try redirects.follow(status: 302, location: "/21") }
        #expect(error?.kind == .tooManyRedirects)
        #expect(error?.message == "more than 20 redirects")
    }

    @Test func aCustomMaximum() throws {
        var redirects = try policy("http://a.example/0", maximum: 2)
        _ = try redirects.follow(status: 302, location: "/1")
        _ = try redirects.follow(status: 302, location: "/2")
        #expect(throws: HTTPClientError.self) { try redirects.follow(status: 302, location: "/3") }
        var none = try policy("http://a.example/0", maximum: 0)
        #expect(throws: HTTPClientError.self) { try none.follow(status: 302, location: "/1") }
    }

    @Test func messagesAreRedacted() throws {
        var redirects = try policy("https://a.example/x?token=t0p")
        let error = #expect(throws: HTTPClientError.self) {
            try redirects.follow(status: 302, location: "http://user:hunter2@b.example/y?X-Amz-Signature=s1gn")
        }
        #expect(error?.message.contains("hunter2") == false)
        #expect(error?.message.contains("s1gn") == false)
    }
}
