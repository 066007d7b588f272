import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// ``RequestHead/make(method:url:userAgent:userHeaders:sendUserinfo:range:ifRange:)`` and serialisation.
@Suite struct RequestHeadTests {
    func make(_ url: String, method: HTTPMethod = .get, userHeaders: [(name: String, value: String)] = [],
              sendUserinfo: Bool = true, range: ByteRangeRequest? = nil, ifRange: String? = nil) throws -> RequestHead {
        try RequestHead.make(method: method, url: HTTPURL.parse(url), userAgent: "haul/1", userHeaders: userHeaders,
                             sendUserinfo: sendUserinfo, range: range, ifRange: ifRange)
    }

    func text(_ head: RequestHead) -> String { String(decoding: head.serialized(), as: UTF8.self) }

    @Test func serialisesAPlainGet() throws {
        let head = try make("http://Example.com:8080/a?b=1#frag")
        #expect(text(head) == "GET /a?b=1 HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: haul/1\r\nAccept: */*\r\nAccept-Encoding: identity\r\n\r\n")
    }

    @Test func serialisesAHeadRequestToAnIPv6Host() throws {
        let head = try make("https://[::1]:8443/f", method: .head)
        #expect(head.method == .head)
        #expect(text(head).hasPrefix("HEAD /f HTTP/1.1\r\nHost: [::1]:8443\r\n"))
    }

    @Test(arguments: [
        (ByteRangeRequest(first: 100, last: nil), "bytes=100-"),
        (ByteRangeRequest(first: 0, last: 99), "bytes=0-99"),
        (ByteRangeRequest(first: 5, last: 5), "bytes=5-5"),
        (ByteRangeRequest(first: 0, last: Int64.max), "bytes=0-9223372036854775807"),
    ])
    func sendsRange(_ range: ByteRangeRequest, value: String) throws {
        let head = try make("http://h/", range: range, ifRange: "\"etag-1\"")
        #expect(head.headers["Range"] == value)
        #expect(head.headers["If-Range"] == "\"etag-1\"")
    }

    @Test func ifRangeIsSentOnlyWithRange() throws {
        #expect(try make("http://h/", ifRange: "\"e\"").headers["If-Range"] == nil)
        #expect(try make("http://h/").headers["Range"] == nil)
    }

    @Test(arguments: [ByteRangeRequest(first: -1, last: nil), ByteRangeRequest(first: 10, last: 9)])
    func rejectsInvalidRanges(_ range: ByteRangeRequest) {
        let error = #expect(throws: HTTPClientError.self) { try make("http://h/", range: range) }
        #expect(error?.kind == .invalidRequest)
    }

    @Test(arguments: ["Host", "host", "Range", "If-Range", "Content-Length", "Transfer-Encoding", "Connection", "ACCEPT-ENCODING"])
    func dropsReservedUserHeaders(_ name: String) throws {
        let head = try make("http://h/", userHeaders: [(name, "user-value")], range: ByteRangeRequest(first: 1, last: nil), ifRange: "\"e\"")
        #expect(!head.headers.values(for: name).contains("user-value"))
        #expect(head.headers.values(for: name).count <= 1)
    }

    @Test func userHeadersFollowHaulsOwnAndMayOverrideUserAgentAndAccept() throws {
        let head = try make("http://h/", userHeaders: [
            ("user-agent", "custom/2"), ("Accept", "application/octet-stream"), ("Cookie", "a=b"), ("X-Rep", "1"), ("X-Rep", "2"),
        ])
        #expect(head.headers.values(for: "User-Agent") == ["custom/2"])
        #expect(head.headers.values(for: "Accept") == ["application/octet-stream"])
        #expect(head.headers["Cookie"] == "a=b")
        #expect(head.headers.values(for: "X-Rep") == ["1", "2"])
        #expect(head.headers.fields.first?.name == "Host")
        #expect(head.headers["Accept-Encoding"] == "identity")
    }

    @Test func sendsBasicAuthorizationFromUserinfo() throws {
        // RFC 7617 §2 example.
        let head = try make("http://Aladdin:open%20sesame@h/")
        #expect(head.headers["Authorization"] == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
        #expect(try make("http://user@h/").headers["Authorization"] == "Basic " + Base64.encode(Array("user:".utf8)))
    }

    @Test func userinfoIsNotSentWhenNotAllowedOrAbsent() throws {
        #expect(try make("http://u:p@h/", sendUserinfo: false).headers["Authorization"] == nil)
        #expect(try make("http://h/").headers["Authorization"] == nil)
    }

    @Test func aUserAuthorizationHeaderWins() throws {
        let head = try make("http://u:p@h/", userHeaders: [("authorization", "Bearer t")])
        #expect(head.headers.values(for: "Authorization") == ["Bearer t"])
    }

    @Test(arguments: ["Bad Name", "", "X:Y", "\u{DC}n\u{EF}", "a\r\nb", "X(1)", "X@"])
    func rejectsInvalidHeaderNames(_ name: String) {
        let error = #expect(throws: HTTPClientError.self) { try make("http://h/", userHeaders: [(name, "v")]) }
        #expect(error?.kind == .invalidRequest)
    }

    @Test(arguments: ["a\r\nInjected: secret", "a\nsecret", "a\rsecret", "a\0secret"])
    func rejectsValuesWithLineBreaksOrNUL(_ value: String) {
        let error = #expect(throws: HTTPClientError.self) { try make("http://h/", userHeaders: [("X-Token", value)]) }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.message.contains("X-Token") == true)
        #expect(error?.message.contains("secret") == false)
    }

    @Test func acceptsEveryTokenCharacterInNames() throws {
        let name = "!#$%&'*+-.^_`|~09azAZ"
        #expect(try make("http://h/", userHeaders: [(name, "v\tw \u{E9}")]).headers[name] == "v\tw \u{E9}")
    }

    @Test func rejectsAnInvalidUserAgentOrIfRange() {
        #expect(throws: HTTPClientError.self) {
            try RequestHead.make(method: .get, url: HTTPURL.parse("http://h/"), userAgent: "a\r\nb", userHeaders: [],
                                 sendUserinfo: false, range: nil, ifRange: nil)
        }
        #expect(throws: HTTPClientError.self) { try make("http://h/", range: ByteRangeRequest(first: 0, last: nil), ifRange: "\"a\"\r\nX: y") }
    }

    @Test func tokenBytesAreRFC9110sTchar() {
        let tchar = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(isTokenByte(byte) == tchar.contains(byte), "byte \(byte)")
        }
    }

    @Test func serializedIsTheRequestLineThenEachFieldThenAnEmptyLine() throws {
        let head = try RequestHead.make(method: .get, url: HTTPURL.parse("http://h\u{2D}1:8080/a%20b?q=\u{E9}"), userAgent: "ua/1",
                                        userHeaders: [(name: "X-A", value: "v\u{E9}")], sendUserinfo: false,
                                        range: ByteRangeRequest(first: 5, last: nil), ifRange: "\"e\"")
        let expected = "GET /a%20b?q=%C3%A9 HTTP/1.1\r\nHost: h-1:8080\r\nUser-Agent: ua/1\r\nAccept: */*\r\n"
            + "Accept-Encoding: identity\r\nRange: bytes=5-\r\nIf-Range: \"e\"\r\nX-A: v\u{E9}\r\n\r\n"
        #expect(head.serialized() == Array(expected.utf8))
    }
}
