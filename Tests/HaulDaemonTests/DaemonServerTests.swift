import Foundation
import Haul
import HaulCore
import HaulService
import HaulTestSupport
import Synchronization
import Testing
@testable import HaulDaemon
import HaulJSON

/// The daemon's server over loopback sockets: every security rule seen from a client, the
/// WebSocket's calls, pings and notifications, and the stop. (The delay of a wrong token is
/// timed in ``DaemonUnderAttackTests``.)
@Suite(.throttled, .timeLimit(.minutes(2)))
struct DaemonServerTests {
    /// A daemon on a free loopback port, its root and state in a temporary folder.
    static func withDaemon(secret: String? = "sekret", origins: [String] = [],
                           configure: (inout DaemonServer.Configuration) -> Void = { _ in },
                           _ body: (Daemon) async throws -> Void) async throws {
        try await withTemporaryDirectory { (dir) async throws in
            var engine = Downloader.Configuration()
            engine.retry = RetryPolicy(maximumRetries: 0)
            var server = DaemonServer.Configuration(listen: ListenAddress(host: "127.0.0.1", port: 0))
            server.allowedOrigins = origins
            configure(&server)
            let daemon = try Daemon(configuration: .init(
                service: .init(root: dir.appendingPathComponent("root"), stateFile: dir.appendingPathComponent("state.db"),
                               downloader: engine),
                server: server, secret: secret))
            try daemon.start()
            defer { daemon.stop() }
            try await body(daemon)
        }
    }

    static func post(_ daemon: Daemon, _ body: String, host: String? = nil, fields: [String] = []) throws -> RawResponse {
        let port = daemon.server.address.port
        var head = "POST /jsonrpc HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nContent-Length: \(body.utf8.count)\r\n"
        for field in fields { head += field + "\r\n" }
        return try RawConnection(port: port).exchange(Array((head + "\r\n" + body).utf8))
    }

    static let version = #"{"jsonrpc":"2.0","id":1,"method":"aria2.getVersion","params":["token:sekret"]}"#

    @Test func aCallOverPostIsAnswered() async throws {
        try await Self.withDaemon { daemon in
            let response = try Self.post(daemon, Self.version)
            #expect(response.status == 200)
            #expect(response.body.contains("\"version\""))
            #expect(response.field("Content-Type") == "application/json-rpc")
        }
    }

    @Test func aForeignHostIsRefused() async throws {
        try await Self.withDaemon { daemon in
            let response = try Self.post(daemon, Self.version, host: "attacker.example:\(daemon.server.address.port)")
            #expect(response.status == 403)
            #expect(!response.body.contains("version"))
        }
    }

    @Test func aForeignOriginIsRefusedForPostAndForTheWebSocket() async throws {
        try await Self.withDaemon(origins: ["https://ui.example"]) { daemon in
            let port = daemon.server.address.port
            #expect(try Self.post(daemon, Self.version, fields: ["Origin: http://attacker.example"]).status == 403)
            let own = try Self.post(daemon, Self.version, fields: ["Origin: http://localhost:\(port)"])
            #expect(own.status == 200)
            let allowed = try Self.post(daemon, Self.version, fields: ["Origin: https://ui.example"])
            #expect(allowed.field("Access-Control-Allow-Origin") == "https://ui.example")
            #expect(throws: RawError.self) { try RawWebSocket(port: port, origin: "http://attacker.example") }
            #expect(throws: Never.self) { try RawWebSocket(port: port, origin: "http://127.0.0.1:\(port)") }
        }
    }

    @Test func aCallWithoutAWorkerThreadIsAnswered503AndTheServerGoesOn() async throws {
        // Given a server whose first worker thread is refused
        let refused = Atomic<Bool>(false)
        try await Self.withDaemon(configure: { server in
            server.threadStarter = { name, body in
                if name.description == "haul-rpc", !refused.exchange(true, ordering: .relaxed) { return EAGAIN }
                return ThreadPool.systemStarter(name, body)
            }
        }) { daemon in
            // When a call comes, it is told to try again (a JSON-RPC error) and its connection closes
            let refusedCall = try Self.post(daemon, Self.version)
            #expect(refusedCall.status == 503)
            #expect(refusedCall.field("Retry-After") == "1")
            #expect(refusedCall.field("Connection") == "close")
            let error = try #require(try JSONParser().parse(Array(refusedCall.body.utf8)).object?["error"]?.object)
            #expect(error["code"] == .integer(1))
            #expect(error["message"]?.string?.contains("no thread") == true)
            // Then the next call is answered
            let answered = try Self.post(daemon, Self.version)
            #expect(answered.status == 200)
            let wasRefused = refused.load(ordering: .relaxed)
            #expect(wasRefused)
        }
    }

    @Test func getMethodCallsAndOversizedBodiesAreRefused() async throws {
        try await Self.withDaemon { daemon in
            let port = daemon.server.address.port
            let get = try RawConnection(port: port).exchange(Array(
                "GET /jsonrpc?method=aria2.addUri&id=1&params=WyJ0b2tlbjpzZWtyZXQiXQ== HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
            #expect(get.status == 405)
            #expect(daemon.service.statistics.waiting == 0)
            let big = try RawConnection(port: port).exchange(Array(
                "POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Length: \((2 << 20) + 1)\r\n\r\n".utf8))
            #expect(big.status == 413)
            let chunked = try RawConnection(port: port).exchange(Array(
                "POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n".utf8))
            #expect(chunked.status == 501)
            let nothing = try RawConnection(port: port).exchange(Array("GET /nothing HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n".utf8))
            #expect(nothing.status == 404)
        }
    }

    @Test func aWebSocketAnswersCallsAndPingsAndClosesCleanly() async throws {
        try await Self.withDaemon { daemon in
            let socket = try RawWebSocket(port: daemon.server.address.port)
            try socket.send(text: Self.version)
            let reply = try socket.receive()
            #expect(reply.opcode == 0x1)
            #expect(String(decoding: reply.payload, as: UTF8.self).contains("\"version\""))
            try socket.send(opcode: 0x9, [7, 8])
            #expect(try socket.receive() == RawFrame(opcode: 0xA, payload: [7, 8]))
            try socket.send(opcode: 0x8, [0x03, 0xE8])
            #expect(try socket.receive().opcode == 0x8)
        }
    }

    @Test func aMaskingViolationClosesTheSocketWithAProtocolError() async throws {
        try await Self.withDaemon { daemon in
            let socket = try RawWebSocket(port: daemon.server.address.port)
            try socket.sendRaw([0x81, 0x01, 0x41])   // unmasked
            let close = try socket.receive()
            #expect(close.opcode == 0x8)
            #expect(close.payload.prefix(2) == [0x03, 0xEA])
        }
    }

    @Test func notificationsGoToEverySocketThatPassedTheChecks() async throws {
        try await Self.withDaemon { daemon in
            let port = daemon.server.address.port
            let caller = try RawWebSocket(port: port)
            let listener = try RawWebSocket(port: port)
            try caller.send(text: Self.version)
            _ = try caller.receive()
            let add = #"{"jsonrpc":"2.0","id":2,"method":"aria2.addUri","params":["token:sekret",["http://127.0.0.1:1/nothing"]]}"#
            #expect(try Self.post(daemon, add).status == 200)
            for socket in [caller, listener] {
                let first = String(decoding: try socket.receive().payload, as: UTF8.self)
                #expect(first.contains("aria2.onDownloadStart"), "a socket that sent no call hears too: \(first)")
                #expect(String(decoding: try socket.receive().payload, as: UTF8.self).contains("aria2.onDownloadError"))
            }
        }
    }

    @Test func withoutASecretEverySocketHearsNotifications() async throws {
        try await Self.withDaemon(secret: nil) { daemon in
            let listener = try RawWebSocket(port: daemon.server.address.port)
            let add = #"{"jsonrpc":"2.0","id":2,"method":"aria2.addUri","params":[["http://127.0.0.1:1/x"],{"pause":"true"}]}"#
            #expect(try Self.post(daemon, add).status == 200)
            let unpause = #"{"jsonrpc":"2.0","id":3,"method":"aria2.unpauseAll","params":[]}"#
            #expect(try Self.post(daemon, unpause).status == 200)
            #expect(String(decoding: try listener.receive().payload, as: UTF8.self).contains("aria2.onDownloadStart"))
        }
    }

    @Test func afterStopThePortIsClosed() async throws {
        var port = 0
        try await Self.withDaemon { daemon in
            port = daemon.server.address.port
            daemon.stop()
            #expect(throws: RawError.self) { try RawConnection(port: port).exchange(Array(Self.version.utf8)) }
        }
    }
}
