import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// A TLS context's connections resume the newest session of their own target (host name,
/// port, proxy route), never one of another context's; the test server counts the handshakes
/// that resumed.
@Suite(.throttled) struct TLSResumptionTests {
    let certificates = TestCertificates.shared
    let threads = ThreadPool()

    private func verifying() throws -> TLSContext {
        try TLSContext(options: TLSSettings(extraCAFile: certificates.caFile))
    }

    /// Connects to `host` on `server` with `context` and reads the head of a small answer (the
    /// server's session tickets come before it, so the session is kept by then).
    private func fetch(_ server: HaulServer, host: String = "localhost", with context: TLSContext) throws -> Connection {
        let url = try HTTPURL.parse("https://\(host):\(server.port)/bytes/10")
        let connection = try Connection(to: url, tls: context, connectTimeout: .seconds(5), cancellation: CancellationSignal(),
                                        threads: threads)
        try connection.write(Array("GET /bytes/10 HTTP/1.1\r\nHost: \(host)\r\n\r\n".utf8), timeout: .seconds(5))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 64)
        defer { buffer.deallocate() }
        let reader = ResponseReader(connection: connection, method: .get, budget: HeaderBudget(), buffer: buffer)
        let head = try reader.readHead(deadline: .now + .seconds(5))
        #expect(head.status == 200)
        return connection
    }

    @Test func laterConnectionsResumeEvenAfterTheFirstClosedWithoutCloseNotify() throws {
        let server = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        let context = try verifying()

        let first = try fetch(server, with: context)
        #expect(server.resumedTLSHandshakeCount == 0)
        #expect(context.sessions.count == 1)
        first.close()   // no close_notify: OpenSSL marks that connection's own session not resumable

        let second = try fetch(server, with: context)
        let third = try fetch(server, with: context)
        defer { second.close(); third.close() }
        #expect(server.resumedTLSHandshakeCount == 2)
        #expect(server.connectionCount == 3)
    }

    @Test func aContextWithOtherSettingsDoesNotResume() throws {
        let server = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        let contexts = TLSContexts()
        let verified = try contexts.cache(for: TLSSettings(extraCAFile: certificates.caFile)).get()
        let insecure = try contexts.cache(for: TLSSettings(insecure: true)).get()

        try fetch(server, with: verified).close()
        try fetch(server, with: insecure).close()
        try fetch(server, with: verifying()).close()   // the same settings in another downloader
        #expect(server.resumedTLSHandshakeCount == 0)

        try fetch(server, with: verified).close()
        try fetch(server, with: insecure).close()
        #expect(server.resumedTLSHandshakeCount == 2)
    }

    @Test func aSessionIsOfferedOnlyToTheHostNameItWasVerifiedFor() throws {
        let server = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        let context = try verifying()

        try fetch(server, host: "localhost", with: context).close()
        try fetch(server, host: "127.0.0.1", with: context).close()
        #expect(server.resumedTLSHandshakeCount == 0, "a full handshake, verified against the IP address")
        try fetch(server, host: "127.0.0.1", with: context).close()
        #expect(server.resumedTLSHandshakeCount == 1)
        #expect(context.sessions.count == 2)
    }

    @Test func aResumedSessionThatWasNeverVerifiedIsRefusedAndForgotten() throws {
        let server = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        let target = TLSSessionCache.Target(host: "localhost", port: server.port)
        let insecure = try TLSContext(options: TLSSettings(insecure: true))   // trusts no test CA
        try fetch(server, with: insecure).close()
        let unverified = try #require(insecure.sessions.session(for: target))
        let context = try verifying()
        context.sessions.store(unverified, for: target)   // as if a session had crossed settings

        // (The server may or may not count the handshake: the client hangs up once it refuses.)
        let error = #expect(throws: HTTPClientError.self) { try fetch(server, with: context) }
        #expect(error?.kind == .tlsCertificateUntrusted, "a full handshake would pass: the context trusts the test CA")
        #expect(context.sessions.session(for: target) == nil, "the refused session is forgotten")
        try fetch(server, with: context).close()   // a full handshake, verified
        #expect(context.sessions.session(for: target) != nil)
    }

    @Test func theCacheKeepsTheNewestSessionOfAtMostItsCapacityOfTargets() throws {
        let server = try HaulServer(configuration: .init(tls: certificates.serverIdentity))
        let context = try verifying()
        try fetch(server, with: context).close()
        let session = try #require(context.sessions.session(for: .init(host: "localhost", port: server.port)))

        let cache = TLSSessionCache(capacity: 2)
        let targets = (1...3).map { TLSSessionCache.Target(host: "host\($0)", port: 443) }
        cache.store(session, for: targets[0])
        cache.store(session, for: targets[1])
        cache.store(session, for: targets[0])   // now newer than host2
        cache.store(session, for: targets[2])
        #expect(cache.count == 2)
        #expect(cache.session(for: targets[1]) == nil, "the target stored longest ago goes")
        #expect(cache.session(for: targets[0]) === session)
        #expect(cache.session(for: targets[2]) === session)
        cache.remove(targets[0])
        #expect(cache.count == 1)
    }
}
