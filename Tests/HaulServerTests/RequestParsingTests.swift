@testable import HaulServer
import HaulTestSupport
import Testing

@Suite struct RequestParsingTests {
    @Test func parsesRequestLineQueryAndHeaders() throws {
        let head = "GET /bytes/10/a%20b.bin?seed=3&no-ranges&cd=attachment%3B%20filename%3D%22x.bin%22&header=A:1&header=B:2 HTTP/1.1\r\nHost: localhost\r\nRANGE:  bytes=0-1 \r\nX-Empty:"
        let request = try #require(RequestHeadParser.parse(ArraySlice(head.utf8)))
        #expect(request.method == "GET")
        #expect(request.path == "/bytes/10/a%20b.bin")
        #expect(request.queryValue("seed") == "3")
        #expect(request.queryValue("no-ranges") == "")
        #expect(request.queryValue("missing") == nil)
        #expect(request.queryValue("cd") == "attachment; filename=\"x.bin\"")
        #expect(request.queryValues("header") == ["A:1", "B:2"])
        #expect(request.header("range") == "bytes=0-1")
        #expect(request.header("x-empty") == "")
        #expect(request.version == "HTTP/1.1")
        #expect(!request.wantsClose)
    }

    @Test(arguments: ["GET /\r\nHost: x", "GET / HTTP/2\r\n", "GET / HTTP/1.1\r\nNo colon here", "GET / HTTP/1.1\r\nBad Name: v"])
    func rejectsMalformedHeads(_ head: String) {
        #expect(RequestHeadParser.parse(ArraySlice(head.utf8)) == nil)
    }

    @Test func absoluteFormKeepsPathAndQuery() throws {
        let request = try #require(RequestHeadParser.parse(ArraySlice("GET http://127.0.0.1:80/status/204?x=1 HTTP/1.1".utf8)))
        #expect(request.path == "/status/204")
        #expect(request.queryValue("x") == "1")
    }

    @Test func connectionCloseAndHTTP10() throws {
        let close = try #require(RequestHeadParser.parse(ArraySlice("GET / HTTP/1.1\r\nConnection: keep-alive, Close".utf8)))
        #expect(close.wantsClose)
        let old = try #require(RequestHeadParser.parse(ArraySlice("GET / HTTP/1.0".utf8)))
        #expect(old.wantsClose)
    }

    @Test(arguments: [
        ("bytes=0-99", RangeRequest.Decision.partial(0..<100)),
        ("bytes=900-", .partial(900..<1000)),
        ("bytes=-100", .partial(900..<1000)),
        ("bytes=-5000", .partial(0..<1000)),
        ("bytes=990-5000", .partial(990..<1000)),
        ("bytes=1000-", .unsatisfiable),
        ("bytes=1000-1001", .unsatisfiable),
        ("bytes=-0", .unsatisfiable),
        ("bytes=0-1,5-6", .full),
        ("bytes=5-1", .full),
        ("items=0-1", .full),
        ("bytes=a-b", .full),
        ("bytes=0-99999999999999999999", .partial(0..<1000)),
        ("bytes=99999999999999999999-", .unsatisfiable),
        ("bytes=-99999999999999999999", .partial(0..<1000)),
        ("bytes=+5-9", .full),
        ("bytes= 0-1 , 4-5", .full),
    ])
    func rangeDecisions(_ header: String, _ expected: RangeRequest.Decision) {
        #expect(RangeRequest.decide(range: header, length: 1000) == expected)
    }

    @Test(arguments: [
        ("\"v1\"", "\"v1\"", nil, true),
        ("\"v1\"", "\"v2\"", nil, false),
        (" \"v1\" ", "\"v1\"", nil, true),
        ("W/\"v1\"", "W/\"v1\"", nil, false),
        ("\"v1\"", "W/\"v1\"", nil, false),
        ("\"v1\"", nil, nil, false),
        ("Mon, 01 Jan 2024 00:00:00 GMT", "\"v1\"", "Mon, 01 Jan 2024 00:00:00 GMT", true),
        ("Mon, 01 Jan 2024 00:00:01 GMT", "\"v1\"", "Mon, 01 Jan 2024 00:00:00 GMT", false),
        ("Mon, 01 Jan 2024 00:00:00 GMT", "\"v1\"", nil, false),
    ] as [(String, String?, String?, Bool)])
    func ifRangeMatching(_ value: String, _ etag: String?, _ lastModified: String?, _ matches: Bool) {
        #expect(RangeRequest.ifRange(value, matchesETag: etag, lastModified: lastModified) == matches)
    }
}
