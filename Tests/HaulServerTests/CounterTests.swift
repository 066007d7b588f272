import HaulServer
import HaulTestSupport
import Testing

@Suite(.throttled) struct CounterTests {
    @Test func bodyBytesCountContentOnly() throws {
        let server = try HaulServer()
        #expect(server.bodyBytesSent == 0)
        let client = try RawClient(port: server.port)
        try client.request("/bytes/1000")
        _ = try client.readResponse()
        #expect(server.bodyBytesSent == 1000)

        try client.request("/bytes/1000", headers: ["Range: bytes=100-199"])   // 100 more
        _ = try client.readResponse()
        try client.request("/bytes/1000", method: "HEAD")                     // head only
        _ = try client.readResponse(isHead: true)
        try client.request("/bytes/1000", headers: ["Range: bytes=5000-"])    // 416
        _ = try client.readResponse()
        try client.request("/status/500")                                     // not content
        _ = try client.readResponse()
        try client.request("/bytes/200000?chunked")                           // framing not counted
        _ = try client.readResponse()
        #expect(server.bodyBytesSent == 1100 + 200_000)
    }

    @Test func bodyBytesAddUpOverConnectionsAndResources() throws {
        let server = try HaulServer()
        server.setResource("/f", .init(size: 3000))
        let first = try RawClient(port: server.port)
        let second = try RawClient(port: server.port)
        try first.request("/f")
        try second.request("/bytes/5000")
        _ = try first.readResponse()
        _ = try second.readResponse()
        #expect(server.bodyBytesSent == 8000)
    }

    @Test func aDroppedBodyCountsWhatWasSent() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/bytes/100000?drop-after=1234")
        expectBody(try client.readResponse().body, HaulServer.content().bytes(0..<1234))
        #expect(server.bodyBytesSent == 1234)
    }

    @Test func aClientLeavingEarlyIsNotChargedTheWholeBody() async throws {
        let server = try HaulServer()
        let size: Int64 = 64 << 20
        do {
            let client = try RawClient(port: server.port)
            try client.request("/bytes/\(size)")
            while let line = client.readLine(), !line.isEmpty {}
            #expect(client.read(count: 1000).count == 1000)
        }   // the client closes here, far from the end of the body
        #expect(await eventually { server.openConnectionCount == 0 })
        let sent = server.bodyBytesSent
        #expect(sent >= 1000)
        #expect(sent < size)
    }

    @Test func connectionCountShowsReuse() throws {
        let server = try HaulServer()
        #expect(server.connectionCount == 0)
        let client = try RawClient(port: server.port)
        for _ in 0..<3 {
            try client.request("/bytes/10")
            _ = try client.readResponse()
        }
        #expect(server.connectionCount == 1)

        try client.request("/bytes/10", headers: ["Connection: close"])
        _ = try client.readResponse()
        let next = try RawClient(port: server.port)
        try next.request("/bytes/10")
        _ = try next.readResponse()
        #expect(server.connectionCount == 2)
        #expect(server.requests.count == 5)
    }
}
