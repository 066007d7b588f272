import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// Status line, headers, framing and the calling contract of ``ResponseParser``.
@Suite struct ResponseParserTests {
    static let samples: [String] = [
        "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nX-A: b\r\n\r\nhello world",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\nX-T: v\r\n\r\n",
        "HTTP/1.0 200 OK\r\n\r\nuntil the server closes",
        "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 206 Partial\r\nContent-Length: 3\r\n\r\nabc",
        "HTTP/1.1 204 No Content\r\nContent-Length: 99\r\n\r\n",
        "HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
    ]

    @Test(arguments: samples)
    func splittingTheInputNeverChangesTheResult(_ message: String) throws {
        let bytes = Array(message.utf8)
        var whole = ResponseParser(method: .get)
        let expected = try drive(&whole, chunks: [bytes], eof: true)
        #expect(expected.ended)
        #expect(expected.heads.count == 1)

        var byteByByte = ResponseParser(method: .get)
        #expect(try drive(&byteByByte, chunks: bytes.map { [$0] }, eof: true) == expected)
        for seed in UInt64(1)...40 {
            var split = ResponseParser(method: .get)
            #expect(try drive(&split, chunks: randomSplits(bytes, seed: seed), eof: true) == expected, "seed \(seed)")
        }
    }

    @Test func parsesStatusLineAndHeaders() throws {
        let outcome = try parseWhole("HTTP/1.1 206 Partial Content\r\nETag:  \"abc\" \t\r\nX-Empty:\r\nx-multi: 1\r\nX-Multi: 2\r\n\r\n")
        let head = try #require(outcome.heads.first)
        #expect(head.minorVersion == 1)
        #expect(head.status == 206)
        #expect(head.reason == "Partial Content")
        #expect(head.headers["etag"] == "\"abc\"")
        #expect(head.headers["X-Empty"] == "")
        #expect(head.headers.values(for: "X-MULTI") == ["1", "2"])
    }

    @Test(arguments: [
        ("HTTP/1.0 200 OK\r\n\r\n", 0, 200, "OK"),
        ("HTTP/1.1 404\r\n\r\n", 1, 404, ""),
        ("HTTP/1.1 404 \r\n\r\n", 1, 404, ""),
        ("HTTP/1.1 500 Internal  Server\tError\r\n\r\n", 1, 500, "Internal  Server\tError"),
        ("HTTP/1.1 299 caf\u{E9}\r\n\r\n", 1, 299, "caf\u{E9}"),
    ])
    func acceptsStatusLines(_ text: String, minor: Int, status: Int, reason: String) throws {
        let head = try #require(try parseWhole(text).heads.first)
        #expect(head.minorVersion == minor)
        #expect(head.status == status)
        #expect(head.reason == reason)
    }

    @Test(arguments: [
        "SSH-2.0-OpenSSH_9.6\r\n",
        "HTTP/2 200\r\n\r\n",
        "HTTP/1.2 200 OK\r\n\r\n",
        "HTTP/1.1 20 OK\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1 099 OK\r\n\r\n",
        "HTTP/1.1 abc OK\r\n\r\n",
        "HTTP/1.1  200 OK\r\n\r\n",
        "http/1.1 200 OK\r\n\r\n",
        "\r\nHTTP/1.1 200 OK\r\n\r\n",
        "HTTP/1.1 200 O\u{1}K\r\n\r\n",
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
        "HTTP/1.1 200 OK\r\n Folded: value\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: 1\r\n\tcontinued\r\n\r\n",
        "HTTP/1.1 200 OK\r\nName : value\r\n\r\n",
        "HTTP/1.1 200 OK\r\nNa me: value\r\n\r\n",
        "HTTP/1.1 200 OK\r\n: value\r\n\r\n",
        "HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: x\0y\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: x\ry\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: \r\n\r\n",
    ])
    func rejectsMalformedHeads(_ text: String) {
        let error = #expect(throws: HTTPClientError.self) { try parseWhole(text) }
        #expect(error?.kind == .malformedResponse)
    }

    @Test func aReplyThatIsNotHTTPFailsOnItsFirstBytes() throws {
        var parser = ResponseParser(method: .get)
        let error = #expect(throws: HTTPClientError.self) { try drive(&parser, chunks: [Array("SSH-".utf8)]) }
        #expect(error?.kind == .malformedResponse)
        #expect(error?.message.contains("not HTTP") == true)
        #expect(error?.message.contains("SSH-") == true)
        let again = #expect(throws: HTTPClientError.self) { try drive(&parser, chunks: [[0x41]]) }
        #expect(again?.kind == .malformedResponse)
    }

    @Test func interimResponsesAreSkipped() throws {
        let outcome = try parseWhole("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
        #expect(outcome.heads.map(\.status) == [200])
        #expect(outcome.body == Array("hi".utf8))
        #expect(outcome.ended)
    }

    @Test(arguments: [
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", HTTPMethod.head, ResponseParser.Framing.none),
        ("HTTP/1.1 204 No Content\r\n\r\n", .get, .none),
        ("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n", .get, .none),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", .get, .length(5)),
        ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", .get, .length(0)),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\n", .get, .length(5)),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", .get, .length(5)),
        ("HTTP/1.1 200 OK\r\ncontent-length: 5\r\nCONTENT-LENGTH: 5, 5\r\nContent-Length: 5\r\n\r\n", .get, .length(5)),
        ("HTTP/1.1 200 OK\r\ncontent-length: 12\r\n\r\n", .get, .length(12)),
        ("HTTP/1.1 200 OK\r\nContent-Length: 007\r\n\r\n", .get, .length(7)),
        ("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807\r\n\r\n", .get, .length(Int64.max)),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", .get, .chunked),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: abc\r\n\r\n", .get, .chunked),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked \r\n\r\n", .get, .chunked),
        ("HTTP/1.1 200 OK\r\n\r\n", .get, .untilClose),
        ("HTTP/1.0 404 Not Found\r\n\r\n", .get, .untilClose),
    ])
    func choosesTheFraming(_ text: String, method: HTTPMethod, framing: ResponseParser.Framing) throws {
        var parser = ResponseParser(method: method)
        #expect(parser.framing == nil)
        let outcome = try drive(&parser, chunks: [Array(text.utf8)])
        #expect(outcome.heads.count == 1)
        #expect(parser.framing == framing)
        let completeWithoutBody = framing == .none || framing == .length(0)
        #expect(outcome.ended == completeWithoutBody)
    }

    @Test(arguments: ["-1", "+5", "abc", "99999999999999999999", "9223372036854775808", "5, 6", "5,", "", "5 5", "0x10", "1e3"])
    func rejectsInvalidContentLength(_ value: String) {
        let error = #expect(throws: HTTPClientError.self) {
            try parseWhole("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\n")
        }
        #expect(error?.kind == .invalidContentLength)
    }

    @Test(arguments: [
        "Content-Length: 5\r\nContent-Length: 6",
        "Content-Length: 5\r\nContent-Length: 5\r\nContent-Length: 6",
        "Content-Length: 5\r\nContent-Length: abc",
        "Content-Length: 5\r\nContent-Length: ",
    ])
    func repeatedContentLengthFieldsThatDisagreeOrAreInvalidAreRejected(_ fields: String) {
        let error = #expect(throws: HTTPClientError.self) {
            try parseWhole("HTTP/1.1 200 OK\r\n\(fields)\r\n\r\n")
        }
        #expect(error?.kind == .invalidContentLength)
    }

    @Test func bytesBeyondContentLengthAreIgnoredAndEndStaysEnd() throws {
        var parser = ResponseParser(method: .get)
        let head = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n"
        let produced = try events(&parser, Array((head + "abcEXTRA").utf8))
        #expect(produced.dropFirst() == [.body(head.utf8.count..<(head.utf8.count + 3)), .end])
        #expect(try events(&parser, Array("more".utf8)) == [.end])
        #expect(try parser.inputEnded() == .end)
    }

    @Test func aContentLengthBodyComesAsTheLargestSliceAvailable() throws {
        var parser = ResponseParser(method: .get)
        let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n".utf8)
        let first = head + [UInt8](repeating: 7, count: 60000)
        #expect(try events(&parser, first).dropFirst() == [.body(head.count..<first.count), .needMore])
        let second = [UInt8](repeating: 8, count: 50000)
        #expect(try events(&parser, second) == [.body(0..<40000), .end])
    }

    @Test func untilCloseEndsAtEOF() throws {
        let outcome = try parseWhole("HTTP/1.1 200 OK\r\n\r\nsome bytes", eof: true)
        #expect(outcome.body == Array("some bytes".utf8))
        #expect(outcome.ended)
    }

    @Test func eofBeforeAnyByteIsAConnectionReset() {
        var parser = ResponseParser(method: .get)
        let error = #expect(throws: HTTPClientError.self) { try parser.inputEnded() }
        #expect(error?.kind == .connectionReset)
        #expect(error?.message == "server closed the connection before answering")
    }

    @Test(arguments: ["H", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", "HTTP/1.1 100 Continue\r\n\r\n"])
    func eofInsideTheHeadIsMalformed(_ text: String) {
        let error = #expect(throws: HTTPClientError.self) { try parseWhole(text, eof: true) }
        #expect(error?.kind == .malformedResponse)
    }

    @Test func eofInsideAContentLengthBodyIsATruncatedBody() {
        let error = #expect(throws: HTTPClientError.self) {
            try parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", eof: true)
        }
        #expect(error?.kind == .truncatedBody)
        #expect(error?.message.contains("3 of 10") == true)
    }

    @Test func completeMessagesEndAtEOF() throws {
        #expect(try parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", eof: true).ended)
        #expect(try parseWhole("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", method: .head, eof: true).ended)
    }

    @Test func aFailureIsSticky() {
        var parser = ResponseParser(method: .get)
        #expect(throws: HTTPClientError.self) { try drive(&parser, chunks: [Array("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n".utf8)]) }
        let again = #expect(throws: HTTPClientError.self) { try drive(&parser, chunks: [Array("abc".utf8)]) }
        #expect(again?.kind == .invalidContentLength)
        let atEOF = #expect(throws: HTTPClientError.self) { try parser.inputEnded() }
        #expect(atEOF?.kind == .invalidContentLength)
    }

    @Test func headerValuesDecodeUTF8OrLatin1() throws {
        let utf8 = Array("HTTP/1.1 200 OK\r\nX: caf".utf8) + [0xC3, 0xA9] + Array("\r\n\r\n".utf8)
        let latin1 = Array("HTTP/1.1 200 OK\r\nX: caf".utf8) + [0xE9] + Array("\r\n\r\n".utf8)
        for bytes in [utf8, latin1] {
            var parser = ResponseParser(method: .get)
            let head = try #require(try drive(&parser, chunks: [bytes]).heads.first)
            #expect(head.headers["X"] == "caf\u{E9}")
        }
    }
}
