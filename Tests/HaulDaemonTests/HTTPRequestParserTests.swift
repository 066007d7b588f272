import HaulTestSupport
import Testing
@testable import HaulDaemon

/// The request head parser against well-formed, partial and hostile input.
@Suite struct HTTPRequestParserTests {
    static func parse(_ text: String, parser: HTTPRequestParser = HTTPRequestParser()) throws(HTTPRequestError) -> HTTPRequestParser.Step {
        try parser.parse(Array(text.utf8))
    }

    static func status(_ text: String, parser: HTTPRequestParser = HTTPRequestParser()) -> Int? {
        do throws(HTTPRequestError) {
            _ = try parse(text, parser: parser)
            return nil
        } catch {
            return error.status
        }
    }

    @Test func aRequestHeadParsesAndLeavesItsBody() throws {
        let text = "POST /jsonrpc?x=1 HTTP/1.1\r\nHost: 127.0.0.1:6800\r\nContent-Length: 2\r\nX-Empty:\r\n"
            + "Connection: keep-alive, Upgrade\r\n\r\n{}"
        guard case .head(let head, let consumed) = try Self.parse(text) else {
            Issue.record("no head")
            return
        }
        #expect(head.method == "POST")
        #expect(head.path == "/jsonrpc")
        #expect(head["host"] == "127.0.0.1:6800")
        #expect(head["X-Empty"] == "")
        #expect(head.hasToken("upgrade", in: "connection"))
        #expect(head.keepsAlive)
        #expect(try HTTPRequestParser.contentLength(head) == 2)
        #expect(consumed == text.utf8.count - 2)
    }

    @Test func aHeadInPiecesNeedsMoreUntilItsBlankLine() throws {
        let text = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"
        for end in 0..<text.utf8.count {
            #expect(try HTTPRequestParser().parse(Array(text.utf8.prefix(end))) == .needMore, "\(end)")
        }
        if case .head(let head, _) = try Self.parse(text) { #expect(!head.keepsAlive == false) }
        if case .head(let head, _) = try Self.parse("GET / HTTP/1.0\r\n\r\n") { #expect(!head.keepsAlive) }
    }

    @Test(arguments: [
        ("GET / HTTP/1.1\nHost: a\n\n", 400),                              // bare LF
        ("GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", 400),                  // bare CR
        ("GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", 400),             // obsolete folding
        ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),                       // space before the colon
        ("GET / HTTP/1.1\r\nHost: a\r\nX: a\u{0}b\r\n\r\n", 400),           // NUL in a value
        ("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 501),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x10\r\n\r\n", 400),
        ("GET / HTTP/1.1\r\n\r\n", 400),                                    // no Host
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ("GET / HTTQ/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET http://evil/ HTTP/1.1\r\nHost: a\r\n\r\n", 400),             // absolute form
        ("GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
        ("\r\n\r\n", 400),
    ])
    func hostileHeadsAreRefusedWithTheirStatus(text: String, status: Int) {
        #expect(Self.status(text) == status)
    }

    @Test func sizeLimitsAreEnforced() {
        let long = "GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "a", count: 20_000) + "\r\n\r\n"
        #expect(Self.status(long) == 431)
        #expect(Self.status("GET / HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "a", count: 20_000)) == 431, "before the end")
        let many = "GET / HTTP/1.1\r\nHost: a\r\n" + String(repeating: "X: y\r\n", count: 101) + "\r\n"
        #expect(Self.status(many) == 431)
        #expect(Self.status(many, parser: HTTPRequestParser(maximumHeadBytes: 1 << 20, maximumFields: 200)) == nil)
    }

    @Test func randomBytesNeverTrap() {
        var generator = SplitMix64(seed: 6455)
        let pieces = ["GET", "POST", " ", "/", "HTTP/1.1", "\r\n", "\r", "\n", ":", "Host", "Content-Length", "5", "\0", "é", "\t"]
        for _ in 0..<5000 {
            let text = (0..<Int.random(in: 0..<30, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
            _ = try? HTTPRequestParser().parse(Array(text.utf8))
        }
    }
}
