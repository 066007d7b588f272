import HaulCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A worker's turn on one connection: writes an answer that was due, then answers every whole
/// request the connection holds (kept alive), or hands it to ``WebSocketSession`` after an
/// upgrade. Never waits for a peer to send: the event loop holds the connection until it has.
struct DaemonConnection {
    let server: DaemonServer
    var connection: ServerConnection

    /// What a request's answer leaves the connection to.
    private enum Next {
        /// Answer the next request.
        case next
        /// Close the connection.
        case close
        /// Give it back to the loop as it is (an answer due later, a WebSocket).
        case hold
    }

    var configuration: DaemonServer.Configuration { server.configuration }

    /// Serves what the connection holds; returns it to wait again, or `nil` to close it.
    mutating func serve() -> ServerConnection? {
        if case .answerDue(let bytes, _, let keepAlive) = connection.phase {
            guard write(bytes), keepAlive else { return nil }
            connection.awaitNext(now: .now)
        }
        if case .awaitingTurn = connection.phase {
            connection.awaitNext(now: .now)
            if let call = connection.heldCall {
                connection.heldCall = nil
                switch answer(call) {
                case .next: break
                case .close: return nil
                case .hold: return connection
                }
            }
        }
        if connection.webSocket != nil {
            var session = WebSocketSession(server: server, connection: connection)
            let next = session.serve()
            connection = session.connection   // what the socket became, closed or not
            return next
        }
        while !server.isStopped,
              ServerConnection.completeness(of: connection.received, maximumBodyBytes: configuration.maximumBodyBytes) == .complete {
            connection.requestTaken()
            switch respondToNext() {
            case .next: continue
            case .close: return nil
            case .hold: return connection.webSocket != nil && !connection.received.isEmpty ? serve() : connection
            }
        }
        guard !server.isStopped else { return nil }
        connection.awaitNext(now: .now)
        return connection
    }

    /// Takes the next request off the buffer and answers it.
    private mutating func respondToNext() -> Next {
        let step: HTTPRequestParser.Step
        do throws(HTTPRequestError) {
            step = try HTTPRequestParser().parse(connection.received)
        } catch {
            send(.text(error.status, error.reason), keepAlive: false)
            return .close
        }
        guard case .head(let head, let consumed) = step else { return .close }
        connection.received.removeFirst(consumed)
        return respond(to: head)
    }

    /// Answers one request whose body is in the buffer.
    private mutating func respond(to head: HTTPRequestHead) -> Next {
        let route = server.policy.route(head)
        if case .refused(let status, let reason) = route {
            let allow = head.path == "/jsonrpc" ? "POST, OPTIONS" : "GET, HEAD"
            send(.text(status, reason, fields: status == 405 ? [.init("Allow", allow)] : []), keepAlive: false)
            return .close
        }
        let body = takeBody(of: head)
        let keepAlive = head.keepsAlive
        switch route {
        case .refused:
            return .close
        case .preflight:
            let fields = server.policy.corsFields(for: head) + [
                .init("Access-Control-Allow-Methods", "POST, GET, OPTIONS"),
                .init("Access-Control-Allow-Headers", "Content-Type"), .init("Access-Control-Max-Age", "600"),
            ]
            return after(send(HTTPResponse(status: 204, fields: fields), keepAlive: keepAlive), keepAlive)
        case .staticFile:
            return after(sendPage(head), keepAlive)
        case .rpc:
            return answer(.init(body: body, keepAlive: keepAlive, fields: server.policy.corsFields(for: head)))
        case .webSocket:
            return upgrade(head)
        }
    }

    /// Answers a call, or holds it until its turn comes or its answer about wrong tokens until
    /// the throttle lets it go.
    private mutating func answer(_ call: ServerConnection.HeldCall) -> Next {
        guard let (reply, due) = server.answer(call.body, for: &connection) else {
            connection.heldCall = call
            connection.phase = .awaitingTurn(since: .now)
            return .hold
        }
        let response = HTTPResponse(status: reply.status, contentType: "application/json-rpc", fields: call.fields, body: reply.body)
        let bytes = response.serialized(keepAlive: call.keepAlive)
        if let due {
            connection.phase = .answerDue(bytes: bytes, at: due, keepAlive: call.keepAlive)
            return .hold
        }
        return after(write(bytes), call.keepAlive)
    }

    /// Answers the handshake and turns the connection into a WebSocket, within the budget of
    /// unauthenticated ones and of descriptors (its notifications need a wake-up descriptor).
    private mutating func upgrade(_ head: HTTPRequestHead) -> Next {
        let response = WebSocketHandshake.response(to: head)
        let authenticated = !server.rpc.requiresToken
        guard response.status == 101 else {
            send(response, keepAlive: false)
            return .close
        }
        let subscriber = Notifier.Subscriber()
        do throws(ResourceError) {
            _ = try subscriber.wakeup.pollDescriptor
        } catch {
            send(.text(503, "no descriptor for another WebSocket: \(error.message)"), keepAlive: false)
            return .close
        }
        guard server.admitWebSocket(authenticated: authenticated) else {
            send(.text(503, "too many WebSockets without a token"), keepAlive: false)
            return .close
        }
        connection.webSocket = .init(parser: WebSocketFrameParser(maximumMessageBytes: configuration.maximumBodyBytes),
                                     subscriber: subscriber, authenticated: authenticated, lastHeard: .now)
        server.notifier.add(subscriber)
        connection.phase = .webSocket
        return send(response, keepAlive: true) ? .hold : .close
    }

    /// Answers a `GET` or `HEAD` outside `/jsonrpc`: the first page provider's answer, or 404.
    private func sendPage(_ head: HTTPRequestHead) -> Bool {
        guard let page = configuration.pages.lazy.compactMap({ $0.response(to: head) }).first else {
            return send(.text(404, "not found"), keepAlive: head.keepsAlive)
        }
        return write(page.serialized(keepAlive: head.keepsAlive))
    }

    private func after(_ sent: Bool, _ keepAlive: Bool) -> Next {
        sent && keepAlive ? .next : .close
    }

    /// The request's body, which the loop made sure is in the buffer.
    private mutating func takeBody(of head: HTTPRequestHead) -> [UInt8] {
        let length = min((try? HTTPRequestParser.contentLength(head)) ?? 0, connection.received.count)
        defer { connection.received.removeFirst(length) }
        return Array(connection.received.prefix(length))
    }

    /// Writes `bytes` within the write timeout.
    func write(_ bytes: [UInt8]) -> Bool {
        DaemonSocket.write(connection.fd, bytes, until: .now + configuration.writeTimeout)
    }

    @discardableResult
    private func send(_ response: HTTPResponse, keepAlive: Bool) -> Bool {
        write(response.serialized(keepAlive: keepAlive))
    }
}

/// Sleeps the calling thread until `instant`.
func sleep(until instant: ContinuousClock.Instant) {
    while true {
        let left = instant - .now
        guard left > .zero else { return }
        let (seconds, attoseconds) = left.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        _ = nanosleep(&request, nil)
    }
}
