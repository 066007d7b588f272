import Foundation
import HaulServer
import HaulTestSupport
import Testing
@testable import HaulHTTP
import HaulCore

/// An idle connection parked in the pool belongs to no download: cancelling the download that
/// parked it leaves it open; the download that takes it next can cancel it.
@Suite(.throttled) struct ConnectionDetachTests {
    @Test func aDetachedConnectionFollowsOnlyTheSignalItIsRebound() throws {
        let server = try HaulServer()
        server.route("/idle") { _, connection in connection.waitUntilClosed() }
        let url = try HTTPURL.parse("http://127.0.0.1:\(server.port)/idle")
        let first = CancellationSignal()
        let connection = try Connection(to: url, tls: try TLSContext(options: TLSSettings()), connectTimeout: .seconds(5),
                                        cancellation: first, threads: ThreadPool())
        defer { connection.close() }
        #expect(connection.looksIdleAndOpen)

        connection.detach()
        first.cancel()
        #expect(connection.looksIdleAndOpen, "the download that parked it no longer closes it")

        let second = CancellationSignal()
        connection.rebind(to: second)
        #expect(connection.looksIdleAndOpen)
        second.cancel()
        #expect(!connection.looksIdleAndOpen, "the download that took it closes it")
    }

    @Test func rebindingToACancelledSignalShutsTheConnection() throws {
        let server = try HaulServer()
        server.route("/idle") { _, connection in connection.waitUntilClosed() }
        let url = try HTTPURL.parse("http://127.0.0.1:\(server.port)/idle")
        let connection = try Connection(to: url, tls: try TLSContext(options: TLSSettings()), connectTimeout: .seconds(5),
                                        cancellation: CancellationSignal(), threads: ThreadPool())
        defer { connection.close() }
        connection.detach()
        let cancelled = CancellationSignal()
        cancelled.cancel()
        connection.rebind(to: cancelled)
        #expect(!connection.looksIdleAndOpen)
    }
}
