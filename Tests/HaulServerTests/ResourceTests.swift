import HaulServer
import HaulTestSupport
import Testing

/// Exclusive: one resource is paced.
@Suite(.exclusive, .serialized) struct ResourceTests {
    let lastModified = "Tue, 02 Jan 2024 03:04:05 GMT"

    @Test func servesAtItsExactPathWithItsHeaders() throws {
        let server = try HaulServer()
        let resource = HaulServer.Resource(size: 200_000, seed: 3, etag: "\"v1\"", lastModified: lastModified,
                                           contentType: "application/pdf", contentDisposition: "attachment; filename=\"a.pdf\"")
        server.setResource("/files/a.pdf", resource)
        let client = try RawClient(port: server.port)

        try client.request("/files/a.pdf?sig=abc")   // the query does not matter
        let response = try client.readResponse()
        #expect(response.status == 200)
        expectBody(response.body, HaulServer.content(seed: 3).bytes(0..<200_000))
        #expect(resource.bytes(0..<200_000) == response.body)
        #expect(response.header("content-length") == "200000")
        #expect(response.header("etag") == "\"v1\"")
        #expect(response.header("last-modified") == lastModified)
        #expect(response.header("accept-ranges") == "bytes")
        #expect(response.header("content-type") == "application/pdf")
        #expect(response.header("content-disposition") == "attachment; filename=\"a.pdf\"")

        try client.request("/files/a.pdf/more")
        #expect(try client.readResponse().status == 404)
        #expect(server.resource("/files/a.pdf")?.etag == "\"v1\"")
    }

    @Test func withoutValidatorsNoneAreSent() throws {
        let server = try HaulServer()
        server.setResource("/plain", .init(size: 10, contentType: nil))
        let client = try RawClient(port: server.port)
        try client.request("/plain")
        let response = try client.readResponse()
        #expect(response.header("etag") == nil)
        #expect(response.header("last-modified") == nil)
        #expect(response.header("content-type") == nil)
        #expect(response.header("content-disposition") == nil)
        expectBody(response.body, HaulServer.content().bytes(0..<10))
    }

    @Test func winsOverBuiltinRoutesUntilRemoved() throws {
        let server = try HaulServer()
        server.setResource("/bytes/100", .init(size: 10, seed: 5))
        let client = try RawClient(port: server.port)
        try client.request("/bytes/100")
        let registered = try client.readResponse()
        expectBody(registered.body, HaulServer.content(seed: 5).bytes(0..<10))
        #expect(registered.header("etag") == nil)

        server.removeResource("/bytes/100")
        #expect(server.resource("/bytes/100") == nil)
        try client.request("/bytes/100")
        let builtin = try client.readResponse()
        expectBody(builtin.body, HaulServer.content().bytes(0..<100))
        #expect(builtin.header("etag") == "\"haul-100-0\"")
    }

    @Test func theLastRegistrationForAPathWins() throws {
        let server = try HaulServer()
        server.route("/x") { _, connection in try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nhandler") }
        server.setResource("/x", .init(size: 5))
        let first = try RawClient(port: server.port)
        try first.request("/x")
        expectBody(try first.readResponse().body, HaulServer.content().bytes(0..<5))

        server.route("/x") { _, connection in try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nhandler") }
        #expect(server.resource("/x") == nil)
        try first.request("/x")
        #expect(try first.readResponse().text == "handler")
    }

    @Test func aChangeAppliesToTheNextRequestOnTheSameConnection() throws {
        let server = try HaulServer()
        server.setResource("/f", .init(size: 1000, seed: 1, etag: "\"v1\""))
        let client = try RawClient(port: server.port)
        try client.request("/f")
        let before = try client.readResponse()

        server.setResource("/f", .init(size: 1500, seed: 2, etag: "\"v2\""))
        try client.request("/f")
        let after = try client.readResponse()

        expectBody(before.body, HaulServer.content(seed: 1).bytes(0..<1000))
        expectBody(after.body, HaulServer.content(seed: 2).bytes(0..<1500))
        #expect(after.header("etag") == "\"v2\"")
        #expect(server.connectionCount == 1)
    }

    @Test func resumeAgainstAChangedFileGetsTheWholeNewFile() throws {
        let server = try HaulServer()
        server.setResource("/f", .init(size: 10_000, seed: 1, etag: "\"v1\""))
        let client = try RawClient(port: server.port)
        try client.request("/f", headers: ["Range: bytes=4000-", "If-Range: \"v1\""])
        let resumed = try client.readResponse()
        #expect(resumed.status == 206)
        #expect(resumed.header("content-range") == "bytes 4000-9999/10000")
        expectBody(resumed.body, HaulServer.content(seed: 1).bytes(4000..<10_000))

        server.setResource("/f", .init(size: 12_000, seed: 2, etag: "\"v2\""))
        try client.request("/f", headers: ["Range: bytes=4000-", "If-Range: \"v1\""])
        let changed = try client.readResponse()
        #expect(changed.status == 200)
        #expect(changed.header("content-range") == nil)
        #expect(changed.header("content-length") == "12000")
        expectBody(changed.body, HaulServer.content(seed: 2).bytes(0..<12_000))
    }

    /// (ETag of the resource, If-Range sent, expected status) with Last-Modified "Tue, 02 Jan 2024 03:04:05 GMT".
    @Test(arguments: [
        ("\"v1\"", nil, 206),
        ("\"v1\"", "\"v1\"", 206),
        ("\"v1\"", "\"v0\"", 200),
        ("\"v1\"", "W/\"v1\"", 200),                         // weak never matches
        ("W/\"v1\"", "W/\"v1\"", 200),
        ("W/\"v1\"", "\"v1\"", 200),
        (nil, "\"v1\"", 200),
        ("\"v1\"", "Tue, 02 Jan 2024 03:04:05 GMT", 206),   // the date matches Last-Modified
        ("\"v1\"", "Mon, 01 Jan 2024 00:00:00 GMT", 200),
    ] as [(String?, String?, Int)])
    func ifRangeDecidesBetweenTheRangeAndEverything(_ etag: String?, _ ifRange: String?, _ status: Int) throws {
        let server = try HaulServer()
        server.setResource("/f", .init(size: 1000, seed: 4, etag: etag, lastModified: lastModified))
        let client = try RawClient(port: server.port)
        try client.request("/f", headers: ["Range: bytes=100-199"] + (ifRange.map { ["If-Range: \($0)"] } ?? []))
        let response = try client.readResponse()
        #expect(response.status == status)
        let expected: Range<Int64> = status == 206 ? 100..<200 : 0..<1000
        expectBody(response.body, HaulServer.content(seed: 4).bytes(expected))
    }

    @Test func withoutLastModifiedADateNeverMatches() throws {
        let server = try HaulServer()
        server.setResource("/f", .init(size: 1000, etag: "\"v1\""))
        let client = try RawClient(port: server.port)
        try client.request("/f", headers: ["Range: bytes=100-199", "If-Range: Tue, 02 Jan 2024 03:04:05 GMT"])
        #expect(try client.readResponse().status == 200)
    }

    @Test func ignoringRangeAnswersEverything() throws {
        let server = try HaulServer()
        server.setResource("/f", .init(size: 5000, seed: 6, etag: "\"v1\"", ignoresRange: true))
        let client = try RawClient(port: server.port)
        try client.request("/f", headers: ["Range: bytes=1000-", "If-Range: \"v1\""])
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.header("accept-ranges") == nil)
        #expect(response.header("content-range") == nil)
        expectBody(response.body, HaulServer.content(seed: 6).bytes(0..<5000))

        server.setResource("/f", .init(size: 5000, seed: 6, etag: "\"v1\""))   // switched back on
        try client.request("/f", headers: ["Range: bytes=1000-"])
        #expect(try client.readResponse().status == 206)
    }

    @Test(arguments: [
        ("bytes=9990-20000", 9990..<10_000 as Range<Int64>),
        ("bytes=0-", 0..<10_000),
        ("bytes=2500-", 2500..<10_000),
        ("bytes=-10", 9990..<10_000),
        ("bytes=0-99999999999999999999999", 0..<10_000),
    ])
    func rangesBeyondTheEndAreClamped(_ range: String, _ expected: Range<Int64>) throws {
        let server = try HaulServer()
        server.setResource("/f", .init(size: 10_000, seed: 7))
        let client = try RawClient(port: server.port)
        try client.request("/f", headers: ["Range: \(range)"])
        let response = try client.readResponse()
        #expect(response.status == 206)
        #expect(response.header("content-range") == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/10000")
        #expect(response.header("content-length") == "\(expected.count)")
        expectBody(response.body, HaulServer.content(seed: 7).bytes(expected))
    }

    @Test func aRangeStartingAtOrAfterTheEndGives416() throws {
        let server = try HaulServer()
        server.setResource("/f", .init(size: 10_000))
        let client = try RawClient(port: server.port)
        try client.request("/f", headers: ["Range: bytes=10000-"])
        let response = try client.readResponse()
        #expect(response.status == 416)
        #expect(response.header("content-range") == "bytes */10000")

        server.setResource("/f", .init(size: 0))
        try client.request("/f", headers: ["Range: bytes=0-"])
        let empty = try client.readResponse()
        #expect(empty.status == 416)
        #expect(empty.header("content-range") == "bytes */0")
    }

    @Test func headSendsTheHeadAndKeepsTheConnection() throws {
        let server = try HaulServer()
        server.setResource("/f", .init(size: 7000, etag: "\"v1\""))
        let client = try RawClient(port: server.port)
        try client.request("/f", method: "HEAD")
        let head = try client.readResponse(isHead: true)
        #expect(head.status == 200)
        #expect(head.header("content-length") == "7000")
        #expect(head.header("etag") == "\"v1\"")
        try client.request("/f", method: "HEAD", headers: ["Range: bytes=100-"])
        let partialHead = try client.readResponse(isHead: true)
        #expect(partialHead.status == 206)
        #expect(partialHead.header("content-range") == "bytes 100-6999/7000")
        try client.request("/f", headers: ["Range: bytes=0-9"])
        expectBody(try client.readResponse().body, HaulServer.content().bytes(0..<10))
        #expect(server.connectionCount == 1)
        #expect(server.bodyBytesSent == 10)
    }

    @Test func aPacedResourceIsComplete() throws {
        let server = try HaulServer()
        server.setResource("/slow", .init(size: 30_000, rate: 1_000_000))
        let client = try RawClient(port: server.port)
        try client.request("/slow")
        expectBody(try client.readResponse().body, HaulServer.content().bytes(0..<30_000))
    }
}
