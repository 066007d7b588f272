import HaulServer
import HaulTestSupport
import Testing

/// Exclusive: one body is paced by the server's rate limit.
@Suite(.exclusive, .serialized) struct BytesRouteTests {
    let content = HaulServer.content()

    @Test func servesTheDeterministicContentWithValidators() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/200000/file.bin")
        let response = try client.readResponse()
        #expect(response.status == 200)
        expectBody(response.body, content.bytes(0..<200_000))
        #expect(response.header("content-length") == "200000")
        #expect(response.header("etag") == "\"haul-200000-0\"")
        #expect(response.header("accept-ranges") == "bytes")
        #expect(response.header("content-type") == "application/octet-stream")
        #expect(response.header("last-modified") == "Mon, 01 Jan 2024 00:00:00 GMT")
    }

    @Test func seedChangesTheContentAndTheETag() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/1000?seed=9")
        let response = try client.readResponse()
        expectBody(response.body, HaulServer.content(seed: 9).bytes(0..<1000))
        #expect(response.header("etag") == "\"haul-1000-9\"")
    }

    @Test(arguments: [
        ("bytes=100-199", 100..<200 as Range<Int64>),
        ("bytes=9900-", 9900..<10_000),
        ("bytes=-10", 9990..<10_000),
    ])
    func singleRangeGives206(_ range: String, _ expected: Range<Int64>) throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/10000", headers: ["Range: \(range)"])
        let response = try client.readResponse()
        #expect(response.status == 206)
        #expect(response.header("content-range") == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/10000")
        expectBody(response.body, content.bytes(expected))
    }

    @Test func unsatisfiableRangeGives416() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/100", headers: ["Range: bytes=100-"])
        let response = try client.readResponse()
        #expect(response.status == 416)
        #expect(response.header("content-range") == "bytes */100")
    }

    @Test(arguments: [
        ["Range: bytes=0-1,4-5"],
        ["Range: bytes=0-9", "If-Range: \"other\""],
    ])
    func multipleRangesOrStaleIfRangeGiveEverything(_ headers: [String]) throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/100", headers: headers)
        let response = try client.readResponse()
        #expect(response.status == 200)
        expectBody(response.body, content.bytes(0..<100))
    }

    @Test func matchingIfRangeKeepsTheRange() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/100", headers: ["Range: bytes=10-19", "If-Range: \"haul-100-0\""])
        #expect(try client.readResponse().status == 206)
        try client.request("/bytes/100", headers: ["Range: bytes=10-19", "If-Range: Mon, 01 Jan 2024 00:00:00 GMT"])
        #expect(try client.readResponse().status == 206)
    }

    @Test func noRangesIgnoresRange() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/100?no-ranges", headers: ["Range: bytes=10-19"])
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.body.count == 100)
        #expect(response.header("accept-ranges") == nil)
    }

    @Test func headSendsTheHeadOnlyAndKeepsTheConnection() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/5000", method: "HEAD")
        let head = try client.readResponse(isHead: true)
        #expect(head.status == 200)
        #expect(head.header("content-length") == "5000")
        try client.request("/bytes/3")
        expectBody(try client.readResponse().body, content.bytes(0..<3))
    }

    @Test func chunkedBodyDecodesToTheContent() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/200000?chunked")
        let response = try client.readResponse()
        #expect(response.header("transfer-encoding") == "chunked")
        #expect(response.header("content-length") == nil)
        expectBody(response.body, content.bytes(0..<200_000))
    }

    @Test func noLengthEndsTheBodyByClosing() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/70000?no-length")
        let response = try client.readResponse()
        #expect(response.header("content-length") == nil)
        expectBody(response.body, content.bytes(0..<70_000))
        #expect(client.sawEndOfStream)
    }

    @Test func literalLengthIsSentAsGiven() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/100?length=250")
        let response = try client.readResponse()
        #expect(response.header("content-length") == "250")
        expectBody(response.body, content.bytes(0..<100))
        #expect(client.sawEndOfStream)
    }

    @Test func dropAfterCutsTheBody() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/100000?drop-after=1234")
        let response = try client.readResponse()
        #expect(response.header("content-length") == "100000")
        expectBody(response.body, content.bytes(0..<1234))
        #expect(client.sawEndOfStream)
    }

    @Test func headerOptionsAreApplied() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        let cd = "attachment%3B%20filename%3D%22report%20v2.pdf%22"
        try client.request("/bytes/10?cd=\(cd)&type=application/pdf&etag=%22v1%22&gzip&header=X-One:1&header=Retry-After:%205")
        let response = try client.readResponse()
        #expect(response.header("content-disposition") == "attachment; filename=\"report v2.pdf\"")
        #expect(response.header("content-type") == "application/pdf")
        #expect(response.header("etag") == "\"v1\"")
        #expect(response.header("content-encoding") == "gzip")
        #expect(response.header("x-one") == "1")
        #expect(response.header("retry-after") == "5")
        expectBody(response.body, content.bytes(0..<10))

        try client.request("/bytes/10?no-etag")
        #expect(try client.readResponse().header("etag") == nil)
    }

    @Test func statusOptionAnswersAnErrorPage() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/10?status=503&header=Retry-After:2")
        let response = try client.readResponse()
        #expect(response.status == 503)
        #expect(response.header("retry-after") == "2")
        #expect(response.text.contains("503"))
    }

    @Test func stallAfterSendsThenGoesSilent() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port, timeout: 0.3)
        try client.request("/bytes/100000?stall-after=500")
        let response = try client.readResponse()
        expectBody(response.body, content.bytes(0..<500))
        #expect(!client.sawEndOfStream)   // the read timed out: the server kept the connection open
    }

    @Test func rateLimitedBodyIsComplete() throws {
        let server = try HaulServer(configuration: .init(rateLimit: 400_000))
        let client = try RawClient(port: server.port)
        try client.request("/bytes/50000")
        expectBody(try client.readResponse().body, content.bytes(0..<50_000))
        try client.request("/bytes/20000?rate=1000000")
        expectBody(try client.readResponse().body, content.bytes(0..<20_000))
    }
}
