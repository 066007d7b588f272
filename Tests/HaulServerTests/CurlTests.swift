import Foundation
import HaulServer
import HaulTestSupport
import Testing

/// The server checked by an independent client: `/usr/bin/curl`.
@Suite(.throttled) struct CurlTests {
    @Test func downloadsTheContent() async throws {
        let server = try HaulServer()
        let result = try await curl(["--fail", server.url("/bytes/3000000/data.bin?seed=5")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        expectBody(Array(result.stdout), HaulServer.content(seed: 5).bytes(0..<3_000_000))
    }

    @Test func fetchesARange() async throws {
        let server = try HaulServer()
        let result = try await curl(["--fail", "-r", "1000-1999", "-w", "%{http_code}", "-o", "/dev/null", server.url("/bytes/5000")])
        #expect(String(decoding: result.stdout, as: UTF8.self) == "206")
        let body = try await curl(["--fail", "-r", "1000-1999", server.url("/bytes/5000")])
        expectBody(Array(body.stdout), HaulServer.content().bytes(1000..<2000))
    }

    @Test func followsRedirectsToTheBytes() async throws {
        let server = try HaulServer()
        let result = try await curl(["--fail", "-L", "-w", "%{num_redirects}", "-o", "/dev/null", server.url("/redirect/3?to=%2Fbytes%2F100")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        #expect(String(decoding: result.stdout, as: UTF8.self) == "3")
        #expect(server.requests.map(\.path) == ["/redirect/3", "/redirect/2", "/redirect/1", "/bytes/100"])
    }

    @Test func decodesChunkedAndRejectsDroppedBodies() async throws {
        let server = try HaulServer()
        let chunked = try await curl(["--fail", server.url("/bytes/300000?chunked")])
        #expect(chunked.exitCode == 0, "\(chunked.stderr)")
        expectBody(Array(chunked.stdout), HaulServer.content().bytes(0..<300_000))
        let dropped = try await curl(["--fail", "-o", "/dev/null", server.url("/bytes/300000?drop-after=1000")])
        #expect(dropped.exitCode == 18)   // CURLE_PARTIAL_FILE
    }

    @Test func servesHTTPSWithTheTestCA() async throws {
        let certificates = TestCertificates.shared
        let server = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        #expect(server.baseURL == "https://localhost:\(server.port)")
        let result = try await curl(["--fail", "--cacert", certificates.caFile,
                               "--resolve", "localhost:\(server.port):127.0.0.1", server.url("/bytes/1000000")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        expectBody(Array(result.stdout), HaulServer.content().bytes(0..<1_000_000))
    }

    @Test func tlsFailuresAreTheClientsToSee() async throws {
        let certificates = TestCertificates.shared
        let wrongHost = try HaulServer(configuration: .init(tls: certificates.wrongHostIdentity))
        let mismatch = try await curl(["--cacert", certificates.caFile, "--resolve", "localhost:\(wrongHost.port):127.0.0.1",
                                 wrongHost.url("/bytes/10")])
        #expect(mismatch.exitCode == 60)   // CURLE_PEER_FAILED_VERIFICATION
        let selfSigned = try HaulServer(configuration: .init(tls: certificates.selfSignedIdentity))
        let untrusted = try await curl(["--cacert", certificates.caFile, "--resolve", "localhost:\(selfSigned.port):127.0.0.1",
                                  selfSigned.url("/bytes/10")])
        #expect(untrusted.exitCode == 60)
        // The server survives failed handshakes.
        let ok = try await curl(["--fail", "-k", "--resolve", "localhost:\(selfSigned.port):127.0.0.1", selfSigned.url("/status/200")])
        #expect(String(decoding: ok.stdout, as: UTF8.self) == "status 200\n")
    }

    @Test func servesIPv6() async throws {
        let server = try HaulServer(configuration: .init(host: "::1"))
        let result = try await curl(["--fail", server.url("/bytes/4096")])
        #expect(result.exitCode == 0, "\(result.stderr)")
        expectBody(Array(result.stdout), HaulServer.content().bytes(0..<4096))
    }
}
