import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// The chunked transfer coding in ``ResponseParser``.
@Suite struct ResponseParserChunkedTests {
    static let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"

    @Test(arguments: [
        ("0\r\n\r\n", ""),
        ("3\r\nabc\r\n0\r\n\r\n", "abc"),
        ("A\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
        ("a\r\n0123456789\r\n0\r\n\r\n", "0123456789"),
        ("0003\r\nabc\r\n000\r\n\r\n", "abc"),
        ("3;name=value;x\r\nabc\r\n0;last\r\n\r\n", "abc"),
        ("3 ;ext\r\nabc\r\n0\r\n\r\n", "abc"),
        ("3\t\r\nabc\r\n0\r\n\r\n", "abc"),
        ("3\nabc\n0\n\n", "abc"),
        ("1\r\n\r\r\n1\r\n\n\r\n0\r\n\r\n", "\r\n"),
        ("3\r\nabc\r\n0\r\nExpires: never\r\nX-Checksum: 1\r\n\r\n", "abc"),
    ])
    func decodesChunks(_ chunked: String, body: String) throws {
        let bytes = Array((Self.head + chunked).utf8)
        var whole = ResponseParser(method: .get)
        let outcome = try drive(&whole, chunks: [bytes])
        #expect(outcome.body == Array(body.utf8))
        #expect(outcome.ended)
        #expect(whole.framing == .chunked)

        var byteByByte = ResponseParser(method: .get)
        #expect(try drive(&byteByByte, chunks: bytes.map { [$0] }) == outcome)
        for seed in UInt64(1)...10 {
            var split = ResponseParser(method: .get)
            #expect(try drive(&split, chunks: randomSplits(bytes, seed: seed)) == outcome)
        }
    }

    @Test(arguments: [
        "-3\r\nabc\r\n0\r\n\r\n",
        "x\r\n",
        "\r\n",
        "0x3\r\nabc\r\n",
        "3xyz\r\nabc\r\n",
        "3 4\r\n",
        "+3\r\nabc\r\n",
        "10000000000000000\r\n",
        "ffffffffffffffffff\r\n",
        "8000000000000000\r\n",
        "3\r\nabcX\r\n",
        "3\r\nabc\rX",
        "3\r\nabc\r\r\n",
        "3;a\u{1}b\r\nabc\r\n",
    ])
    func rejectsMalformedChunks(_ chunked: String) {
        let error = #expect(throws: HTTPClientError.self) { try parseWhole(Self.head + chunked) }
        #expect(error?.kind == .invalidChunk)
    }

    @Test func theLargestChunkSizeIsAccepted() throws {
        var parser = ResponseParser(method: .get)
        let outcome = try drive(&parser, chunks: [Array((Self.head + "7fffffffffffffff\r\nabc").utf8)])
        #expect(outcome.body == Array("abc".utf8))
        #expect(!outcome.ended)
    }

    @Test func aTooLongChunkSizeLineFailsFast() {
        let line = "1;" + String(repeating: "x", count: 10000)
        let error = #expect(throws: HTTPClientError.self) { try parseWhole(Self.head + line) }
        #expect(error?.kind == .invalidChunk)
    }

    @Test func malformedTrailersAreRejected() {
        let error = #expect(throws: HTTPClientError.self) { try parseWhole(Self.head + "0\r\nbad trailer\r\n\r\n") }
        #expect(error?.kind == .malformedResponse)
    }

    @Test(arguments: [
        "", "3", "3\r\n", "3\r\nab", "3\r\nabc", "3\r\nabc\r", "3\r\nabc\r\n", "3\r\nabc\r\n0\r\n", "3\r\nabc\r\n0\r\nX: 1\r\n",
    ])
    func eofBeforeTheLastChunkIsATruncatedBody(_ chunked: String) {
        let error = #expect(throws: HTTPClientError.self) { try parseWhole(Self.head + chunked, eof: true) }
        #expect(error?.kind == .truncatedBody)
    }

    @Test func chunkDataIsReturnedWithoutCopyAsTheLargestSlice() throws {
        var parser = ResponseParser(method: .get)
        let bytes = Array((Self.head + "a\r\n0123456789\r\n").utf8)
        let start = Self.head.utf8.count + 3
        let produced = try events(&parser, bytes)
        #expect(produced.dropFirst() == [.body(start..<(start + 10)), .needMore])
    }

    @Test func trailersCountAgainstTheBudget() throws {
        let head = Self.head
        let headBytes = head.utf8.count
        let trailers = "0\r\nX: 1\r\n\r\n"
        var parser = ResponseParser(method: .get, budget: HeaderBudget(bytes: headBytes + 8, lines: 10))
        let outcome = try drive(&parser, chunks: [Array((head + trailers).utf8)])
        #expect(outcome.ended)
        #expect(parser.budget == HeaderBudget(bytes: 0, lines: 10 - 3 - 2))

        var tight = ResponseParser(method: .get, budget: HeaderBudget(bytes: headBytes + 7, lines: 10))
        let error = #expect(throws: HTTPClientError.self) { try drive(&tight, chunks: [Array((head + trailers).utf8)]) }
        #expect(error?.kind == .headersTooLarge)
    }
}
