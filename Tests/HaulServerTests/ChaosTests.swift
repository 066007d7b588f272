#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulTestSupport
import Testing
@testable import HaulServer

/// `Configuration.chaos`: seeded, counted faults on `GET /bytes/N`.
@Suite(.throttled) struct ChaosTests {
    /// Reads from `client` until the stream ends; returns the bytes and how it ended
    /// (0 for a clean end of stream, else the `errno` of the failed read).
    static func readUntilEnd(_ client: RawClient) -> (bytes: Int, ending: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var total = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { total += count; continue }
            return (total, count == 0 ? 0 : errno)
        }
    }

    @Test func theSameSeedGivesTheSameFaults() {
        let first = HaulServer.Chaos(seed: 42), second = HaulServer.Chaos(seed: 42), other = HaulServer.Chaos(seed: 43)
        let a = (0..<500).map { _ in first.decide(length: 1 << 20) }
        let b = (0..<500).map { _ in second.decide(length: 1 << 20) }
        let c = (0..<500).map { _ in other.decide(length: 1 << 20) }
        #expect(a == b)
        #expect(a != c)
        #expect(first.injected == second.injected)
        // Default odds: about a fifth of the requests get a fault, every kind but a change occurs.
        let faults = first.injected.values.reduce(0, +)
        #expect((50...160).contains(faults), "\(first.injected)")
        #expect(Set(first.injected.keys) == Set(HaulServer.Chaos.Fault.allCases).subtracting([.change]))
        #expect(a.filter { $0 == .serve }.count == 500 - faults)
    }

    @Test func unavailableAnswers503SometimesWithRetryAfter() throws {
        let chaos = HaulServer.Chaos(seed: 1, odds: .init(drop: 0, stall: 0, unavailable: 1, reset: 0))
        let server = try HaulServer(configuration: .init(chaos: chaos))
        let client = try RawClient(port: server.port)
        var retryAfter: [String?] = []
        for _ in 0..<20 {
            try client.request("/bytes/1000")
            let response = try client.readResponse()
            #expect(response.status == 503)
            retryAfter.append(response.header("retry-after"))
        }
        #expect(retryAfter.contains("1") && retryAfter.contains(nil), "\(retryAfter)")
        #expect(chaos.injected == [.unavailable: 20])
        #expect(server.bodyBytesSent == 0)
    }

    @Test(arguments: [HaulServer.Chaos.Fault.drop, .reset])
    func dropAndResetCutTheBody(fault: HaulServer.Chaos.Fault) throws {
        let odds = HaulServer.Chaos.Odds(drop: fault == .drop ? 1 : 0, stall: 0, unavailable: 0, reset: fault == .reset ? 1 : 0)
        let chaos = HaulServer.Chaos(seed: 2, odds: odds)
        let server = try HaulServer(configuration: .init(chaos: chaos))
        let client = try RawClient(port: server.port)
        try client.request("/bytes/4000000")
        let (bytes, ending) = Self.readUntilEnd(client)
        #expect(bytes < 4_000_000)
        #expect(server.bodyBytesSent < 4_000_000)
        #expect(ending == (fault == .reset ? ECONNRESET : 0), "ended with errno \(ending)")
        #expect(chaos.injected == [fault: 1])
    }

    @Test func chaosLeavesHeadRequestsAlone() throws {
        let chaos = HaulServer.Chaos(seed: 3, odds: .init(drop: 0, stall: 0, unavailable: 1, reset: 0))
        let server = try HaulServer(configuration: .init(chaos: chaos))
        let client = try RawClient(port: server.port)
        try client.request("/bytes/1000", method: "HEAD")
        #expect(try client.readResponse(isHead: true).status == 200)
        #expect(chaos.injected.isEmpty)
    }

    @Test func aChangedFileServesItsNextVersionFromThenOn() throws {
        // Given a server whose files change on every GET, up to the last version
        let chaos = HaulServer.Chaos(seed: 4, odds: .init(drop: 0, stall: 0, unavailable: 0, reset: 0, change: 1))
        let server = try HaulServer(configuration: .init(chaos: chaos))
        let client = try RawClient(port: server.port)
        // When the same file is asked for more times than it has versions
        var etags: [String?] = []
        var bodies: [[UInt8]] = []
        for _ in 0...HaulServer.Chaos.maximumVersion + 1 {
            try client.request("/bytes/1000?seed=7")
            let response = try client.readResponse()
            etags.append(response.header("etag"))
            bodies.append(response.body)
        }
        try client.request("/bytes/1000?seed=7", method: "HEAD")
        let head = try client.readResponse(isHead: true)
        // Then version V holds the content of seed 7 + V under its own ETag, HEAD included,
        // and another file keeps its first version
        #expect(etags == ["\"haul-1000-7-v1\"", "\"haul-1000-7-v2\"", "\"haul-1000-7-v3\"", "\"haul-1000-7-v3\"", "\"haul-1000-7-v3\""])
        #expect(bodies[0] == Array(HaulServer.content(seed: 8).bytes(0..<1000)))
        #expect(bodies[4] == Array(HaulServer.content(seed: 10).bytes(0..<1000)))
        #expect(head.header("etag") == "\"haul-1000-7-v3\"")
        #expect(chaos.injected == [.change: 3])
        #expect(chaos.version(of: "/bytes/1000?seed=8") == 0)
    }

    @Test func theDigestRouteNamesTheContentUntouchedByChaos() throws {
        let chaos = HaulServer.Chaos(seed: 5, odds: .init(drop: 0, stall: 0, unavailable: 1, reset: 0))
        let server = try HaulServer(configuration: .init(chaos: chaos))
        let client = try RawClient(port: server.port)
        try client.request("/sha256/5000?seed=3")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == HaulServer.content(seed: 3).sha256Hex(length: 5000)! + "\n")
        #expect(chaos.injected.isEmpty)
    }
}
