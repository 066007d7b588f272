#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulServer
import HaulTestSupport
import Testing

/// Exclusive: a route pauses between its writes, and stalled or silent connections are read with client timeouts.
@Suite(.exclusive, .serialized) struct LifecycleTests {
    @Test func urlsNameTheBoundAddress() throws {
        let server = try HaulServer()
        #expect(server.port > 0)
        #expect(server.baseURL == "http://127.0.0.1:\(server.port)")
        #expect(server.url("/bytes/1") == "http://127.0.0.1:\(server.port)/bytes/1")
    }

    @Test func stopEndsStalledConnectionsAndRefusesNewOnes() async throws {
        let server = try HaulServer()
        let stalled = try RawClient(port: server.port)
        try stalled.request("/bytes/1000000?stall-after=100")
        while let line = stalled.readLine(), !line.isEmpty {}
        #expect(stalled.read(count: 100).count == 100)
        let silent = try RawClient(port: server.port)
        try silent.request("/silent")
        #expect(await eventually { server.openConnectionCount == 2 })

        server.stop()

        #expect(stalled.readToEnd().isEmpty && stalled.sawEndOfStream)
        #expect(silent.readToEnd().isEmpty)
        #expect(silent.sawEndOfStream)
        #expect(await eventually { server.openConnectionCount == 0 })
        #expect(throws: (any Error).self) { try RawClient(port: server.port) }
    }

    @Test func deinitStopsTheServer() async throws {
        var server: HaulServer? = try HaulServer()
        let port = server!.port
        let client = try RawClient(port: port)
        try client.request("/silent")
        await eventually { server!.requests.count == 1 }
        server = nil
        #expect(client.readToEnd().isEmpty)
        #expect(client.sawEndOfStream)
        #expect(throws: (any Error).self) { try RawClient(port: port) }
    }

    @Test func manyServersStartAndStop() throws {
        for _ in 0..<100 {
            let server = try HaulServer()
            let client = try RawClient(port: server.port)
            try client.request("/status/200")
            #expect(try client.readResponse().status == 200)
        }
    }

    @Test func recordsRequestsInOrderWithHeaders() throws {
        let server = try HaulServer()
        let client = try RawClient(port: server.port)
        try client.request("/status/204?a=1", headers: ["X-Test: yes", "Range: bytes=0-"])
        _ = try client.readResponse()
        try client.request("/bytes/5", method: "HEAD", headers: ["Connection: close"])
        _ = try client.readResponse(isHead: true)
        #expect(client.readToEnd().isEmpty && client.sawEndOfStream)   // Connection: close honoured

        let requests = server.requests
        #expect(requests.map(\.target) == ["/status/204?a=1", "/bytes/5"])
        #expect(requests.map(\.method) == ["GET", "HEAD"])
        #expect(requests[0].header("x-test") == "yes")
        #expect(requests[0].header("RANGE") == "bytes=0-")
        #expect(requests[0].queryValue("a") == "1")
        #expect(requests[0].path == "/status/204")
    }

    @Test func customRouteWritesRawBytesAndWinsOverBuiltins() throws {
        let server = try HaulServer()
        server.route("/bytes/10") { request, connection in
            try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
            connection.sleep(seconds: 0.01)
            try connection.write(Array("hello".utf8))
        }
        let client = try RawClient(port: server.port)
        try client.request("/bytes/10")
        let response = try client.readResponse()
        #expect(response.text == "hello")
        #expect(client.readToEnd().isEmpty && client.sawEndOfStream)   // closed after the handler
    }

    @Test func servesIPv6Loopback() throws {
        let server = try HaulServer(configuration: .init(host: "::1"))
        #expect(server.baseURL == "http://[::1]:\(server.port)")
        let client = try RawClient(host: "::1", port: server.port)
        try client.request("/bytes/3000")
        expectBody(try client.readResponse().body, HaulServer.content().bytes(0..<3000))
    }

    @Test func badTLSFilesThrow() {
        #expect(throws: HaulServerError.self) {
            try HaulServer(configuration: .init(tls: .init(certificateChainFile: "/nonexistent.pem", privateKeyFile: "/nonexistent.key")))
        }
    }
}
