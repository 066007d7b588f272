import HaulServer
import HaulTestSupport
import Testing

/// Exclusive: a head trickles in, read with a client timeout.
@Suite(.exclusive, .serialized) struct FaultRouteTests {
    @Test func statusRouteAnswersTheCodeWithRetryAfter() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/status/503?retry-after=7")
        let response = try client.readResponse()
        #expect(response.status == 503)
        #expect(response.text == "status 503\n")
        #expect(response.header("retry-after") == "7")
    }

    @Test func redirectChainHopsThenGoesToTarget() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/redirect/3?to=%2Fbytes%2F10&status=307")
        let first = try client.readResponse()
        #expect(first.status == 307)
        #expect(first.header("location") == "/redirect/2?to=%2Fbytes%2F10&status=307")
        try client.request("/redirect/1?to=%2Fbytes%2F10")
        #expect(try client.readResponse().header("location") == "/bytes/10")
        try client.request("/redirect/1")
        #expect(try client.readResponse().header("location") == "/bytes/1024")
    }

    @Test func redirectToAndLoop() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/redirect-to?url=http%3A%2F%2F127.0.0.1%3A9%2Fx&status=301")
        let redirect = try client.readResponse()
        #expect(redirect.status == 301)
        #expect(redirect.header("location") == "http://127.0.0.1:9/x")
        try client.request("/loop")
        let loop = try client.readResponse()
        #expect(loop.status == 302)
        #expect(loop.header("location") == "/loop")
    }

    @Test(arguments: ["valid", "extensions", "trailers"])
    func validChunkedModesDecode(_ mode: String) throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/chunked?size=2500&mode=\(mode)")
        let response = try client.readResponse()
        #expect(response.header("transfer-encoding") == "chunked")
        expectBody(response.body, HaulServer.content().bytes(0..<2500))
        #expect(response.trailers == (mode == "trailers" ? ["X-Checksum: none", "X-Trailer: yes"] : []))
        // The connection is still usable afterwards.
        try client.request("/status/204")
        #expect(try client.readResponse().status == 204)
    }

    @Test(arguments: [("negative", "-10\r\n"), ("overflow", "1ffffffffffffffff0\r\n"), ("nonhex", "zz\r\n")])
    func brokenChunkSizeLines(_ mode: String, _ sizeLine: String) throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/chunked?mode=\(mode)")
        let raw = String(decoding: client.readToEnd(), as: UTF8.self)
        #expect(raw.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(raw.contains("\r\n\r\n" + sizeLine))
        #expect(client.sawEndOfStream)
    }

    @Test func missingLastChunkAndCutCloseEarly() throws {
        let server = try HaulServer()
        let missing = try RawClient(port: server.port)
        try missing.request("/chunked?size=2000&mode=missing-last")
        let raw = String(decoding: missing.readToEnd(), as: UTF8.self)
        #expect(raw.hasSuffix("\r\n"))
        #expect(!raw.contains("\r\n0\r\n"))
        let cut = try RawClient(port: server.port)
        try cut.request("/chunked?size=2000&mode=cut")
        let cutBytes = cut.readToEnd()
        #expect(cut.sawEndOfStream)
        #expect(String(decoding: cutBytes, as: UTF8.self).contains("3e8\r\n"))   // 1000 announced, 500 sent
    }

    @Test func manyAndLongHeaders() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/headers?count=150")
        let many = try client.readResponse()
        #expect(many.headers.filter { $0.0.hasPrefix("X-Header-") }.count == 150)
        #expect(many.text == "headers\n")
        try client.request("/headers?size=20000")
        let long = try client.readResponse()
        #expect(long.header("x-large")?.utf8.count == 20000 - 9)
    }

    @Test func garbageAndNotFound() throws {
        let server = try HaulServer()
        let garbage = try RawClient(port: server.port)
        try garbage.request("/garbage")
        #expect(String(decoding: garbage.readToEnd(), as: UTF8.self) == "SSH-2.0-OpenSSH_9.2\r\n")
        let missing = try RawClient(port: server.port)
        try missing.request("/no/such/thing")
        #expect(try missing.readResponse().status == 404)
    }

    @Test func endlessHeadersKeepComing() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/endless-headers")
        #expect(client.readLine() == "HTTP/1.1 200 OK")
        for _ in 0..<3 { #expect(client.readLine()?.hasPrefix("X-Endless-") == true) }
    }

    @Test func trickledHeadIsValid() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/trickle-headers?interval=1")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "trickled\n")
    }

    @Test func silentNeverAnswers() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port, timeout: 0.2)
        try client.request("/silent")
        #expect(client.readToEnd().isEmpty)
        #expect(!client.sawEndOfStream)
    }

    @Test func malformedRequestGets400() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.send("NONSENSE\r\n\r\n")
        #expect(try client.readResponse().status == 400)
    }
}
