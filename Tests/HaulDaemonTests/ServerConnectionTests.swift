import Testing
@testable import HaulDaemon

/// A connection's decisions without a socket: when it is served, pinged or closed.
@Suite struct ServerConnectionTests {
    static let limits = ServerConnection.Limits(headTimeout: .seconds(10), requestTimeout: .seconds(30), idleTimeout: .seconds(60),
                                                pingInterval: .seconds(30), maximumBodyBytes: 1 << 20)

    @Test func aRequestIsServedOnceItsHeadAndBodyAreIn() {
        let start = ContinuousClock.now
        var connection = ServerConnection(fd: -1, peer: "127.0.0.1", accepted: start)
        let head = Array("POST /jsonrpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\n\r\n".utf8)
        #expect(connection.received(Array(head.prefix(10)), now: start, limits: Self.limits) == .wait)
        #expect(connection.deadline(Self.limits) == start + .seconds(10), "a head has the head timeout from the connection")
        #expect(connection.received(Array(head.dropFirst(10)) + [0x7B], now: start + .seconds(1), limits: Self.limits) == .wait)
        #expect(connection.deadline(Self.limits) == start + .seconds(31), "its body has the request timeout from the head")
        #expect(connection.received(Array("1}\n".utf8), now: start + .seconds(2), limits: Self.limits) == .serve)
        #expect(connection.received([], now: start + .seconds(2), limits: Self.limits) == .close(farewell: []))
    }

    @Test func aHeadThatDoesNotArriveIsAnswered408AndSilenceClosed() {
        let start = ContinuousClock.now
        var partial = ServerConnection(fd: -1, peer: "127.0.0.1", accepted: start)
        _ = partial.received(Array("GET / HT".utf8), now: start, limits: Self.limits)
        #expect(partial.deadlinePassed(now: start + .seconds(9), limits: Self.limits) == .wait)
        guard case .close(let farewell) = partial.deadlinePassed(now: start + .seconds(10), limits: Self.limits) else {
            Issue.record("not closed")
            return
        }
        #expect(String(decoding: farewell, as: UTF8.self).hasPrefix("HTTP/1.1 408"))
        var silent = ServerConnection(fd: -1, peer: "127.0.0.1", accepted: start)
        #expect(silent.deadlinePassed(now: start + .seconds(10), limits: Self.limits) == .close(farewell: []))
        var idle = silent
        idle.phase = .awaitingRequest(since: start, idle: true)
        #expect(idle.deadline(Self.limits) == start + .seconds(60), "between requests the idle timeout holds")
    }

    @Test func aHeldAnswerIsServedAtItsTimeAndDroppedWhenThePeerLeaves() {
        let start = ContinuousClock.now
        var connection = ServerConnection(fd: -1, peer: "127.0.0.1", accepted: start)
        connection.phase = .answerDue(bytes: [1], at: start + .seconds(3), keepAlive: true)
        #expect(connection.deadlinePassed(now: start + .seconds(2), limits: Self.limits) == .wait)
        #expect(connection.received([0x47], now: start, limits: Self.limits) == .wait, "a pipelined byte waits for the answer")
        #expect(connection.deadlinePassed(now: start + .seconds(3), limits: Self.limits) == .serve)
        #expect(connection.received([], now: start, limits: Self.limits) == .close(farewell: []))
    }

    @Test func aSilentWebSocketIsPingedThenClosed() {
        let start = ContinuousClock.now
        var connection = ServerConnection(fd: -1, peer: "127.0.0.1", accepted: start)
        connection.webSocket = .init(parser: WebSocketFrameParser(maximumMessageBytes: 1 << 20), subscriber: Notifier.Subscriber(),
                                     authenticated: false, lastHeard: start)
        connection.phase = .webSocket
        #expect(connection.deadlinePassed(now: start + .seconds(30), limits: Self.limits) == .ping)
        #expect(connection.deadline(Self.limits) == start + .seconds(60))
        #expect(connection.received([0x8A, 0x80, 0, 0, 0, 0], now: start + .seconds(40), limits: Self.limits) == .serve)
        #expect(connection.deadline(Self.limits) == start + .seconds(70), "a pong (any byte) counts as heard")
        _ = connection.deadlinePassed(now: start + .seconds(70), limits: Self.limits)
        guard case .close = connection.deadlinePassed(now: start + .seconds(100), limits: Self.limits) else {
            Issue.record("a socket silent after its ping stays open")
            return
        }
    }

    @Test func theConnectionsHeldFitTheDescriptorLimit() throws {
        let limit = try #require(DescriptorLimit.current)
        #expect(DescriptorLimit.connections(upTo: 1 << 20) == max(64, (limit - 256) / 2))
        #expect(DescriptorLimit.connections(upTo: 100) <= 100)
    }

    @Test func aCallWithoutAThreadIsToldSoInItsOwnProtocol() {
        var page = ServerConnection(fd: -1, peer: "127.0.0.1", accepted: .now)
        page.received = Array("GET / HTTP/1.1\r\n\r\n".utf8)
        let text = String(decoding: DaemonServer.noThreadFarewell(page, "EAGAIN"), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 503 "))
        #expect(text.contains("text/plain") && text.contains("EAGAIN"))
        var socket = page
        socket.webSocket = .init(parser: WebSocketFrameParser(maximumMessageBytes: 1 << 20), subscriber: Notifier.Subscriber(),
                                 authenticated: true, lastHeard: .now)
        let frame = DaemonServer.noThreadFarewell(socket, "EAGAIN")
        #expect(frame.first == 0x88, "a close frame, not an HTTP answer inside a WebSocket")
        #expect(Array(frame.dropFirst(2).prefix(2)) == [0x03, 0xF5], "code 1013, try again later")
    }
}
