import HaulCore
import HaulDashboard
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One client connection: requests one after another (kept alive), or a WebSocket after an
/// upgrade. Runs on the connection's own thread.
struct DaemonConnection {
    let server: DaemonServer
    let fd: Int32
    let peer: String
    private var received: [UInt8] = []

    init(server: DaemonServer, fd: Int32, peer: String) {
        self.server = server
        self.fd = fd
        self.peer = peer
    }

    var configuration: DaemonServer.Configuration { server.configuration }

    /// Serves requests until the peer closes, a request asks to close, or one is refused.
    mutating func serve() {
        while !server.isStopped, let head = readHead() {
            guard let keepAlive = respond(to: head), keepAlive else { return }
        }
    }

    /// Reads the next request head, answering a malformed or late one; `nil` ends the connection.
    private mutating func readHead() -> HTTPRequestHead? {
        let parser = HTTPRequestParser()
        var deadline = ContinuousClock.now + configuration.idleTimeout
        while true {
            do throws(HTTPRequestError) {
                if case .head(let head, let consumed) = try parser.parse(received) {
                    received.removeFirst(consumed)
                    return head
                }
            } catch {
                send(.text(error.status, error.reason), keepAlive: false)
                return nil
            }
            if !received.isEmpty { deadline = min(deadline, ContinuousClock.now + configuration.requestTimeout) }
            guard receiveMore(until: deadline) else {
                if !received.isEmpty { send(.text(408, "the request did not arrive in time"), keepAlive: false) }
                return nil
            }
        }
    }

    /// Reads more bytes into `received`; `false` at the end of the stream or the deadline.
    private mutating func receiveMore(until deadline: ContinuousClock.Instant) -> Bool {
        guard DaemonSocket.wait(fd, until: deadline) == .readable else { return false }
        let bytes = DaemonSocket.read(fd)
        received += bytes
        return !bytes.isEmpty
    }

    /// Answers one request; returns whether the connection stays open (`nil`: it was handed
    /// to a WebSocket that has ended).
    private mutating func respond(to head: HTTPRequestHead) -> Bool? {
        let route = server.policy.route(head)
        let cors = server.policy.corsFields(for: head)
        switch route {
        case .refused(let status, let reason):
            send(.text(status, reason, fields: status == 405 ? [.init("Allow", head.path == "/jsonrpc" ? "POST, OPTIONS" : "GET, HEAD")] : []),
                 keepAlive: false)
            return false
        case .preflight:
            let fields = cors + [.init("Access-Control-Allow-Methods", "POST, GET, OPTIONS"),
                                 .init("Access-Control-Allow-Headers", "Content-Type"), .init("Access-Control-Max-Age", "600")]
            return send(HTTPResponse(status: 204, fields: fields), keepAlive: head.keepsAlive) && head.keepsAlive
        case .staticFile(let path):
            guard discardBody(of: head) else { return false }
            let tags = head.values("If-None-Match")
            if configuration.servesDashboard, let page = Dashboard.response(
                method: head.method, path: head.target, ifNoneMatch: tags.isEmpty ? nil : tags.joined(separator: ", ")) {
                return send(page, keepAlive: head.keepsAlive) && head.keepsAlive
            }
            guard let file = configuration.staticFiles?.file(at: path) else {
                return send(.text(404, "not found"), keepAlive: head.keepsAlive) && head.keepsAlive
            }
            var response = HTTPResponse(status: 200, contentType: file.contentType, fields: file.fields, body: file.body)
            if head.method == "HEAD" { response.body = [] }
            return send(response, keepAlive: head.keepsAlive) && head.keepsAlive
        case .rpc:
            guard let body = readBody(of: head) else { return false }
            let reply = server.rpc.handle(body)
            if reply.unauthorized { sleep(until: server.throttle.answerTime(guesses: reply.guesses, from: peer)) }
            let response = HTTPResponse(status: reply.status, contentType: "application/json-rpc", fields: cors, body: reply.body)
            return send(response, keepAlive: head.keepsAlive) && head.keepsAlive
        case .webSocket:
            let response = WebSocketHandshake.response(to: head)
            guard response.status == 101, send(response, keepAlive: true) else {
                send(response, keepAlive: false)
                return false
            }
            var session = WebSocketSession(server: server, fd: fd, peer: peer, pending: received)
            received = []
            session.run()
            return nil
        }
    }

    /// The request's body (its `Content-Length`, checked by the policy), or `nil` when it
    /// does not arrive in time.
    private mutating func readBody(of head: HTTPRequestHead) -> [UInt8]? {
        guard let length = try? HTTPRequestParser.contentLength(head) else { return nil }
        let deadline = ContinuousClock.now + configuration.requestTimeout
        while received.count < length {
            guard receiveMore(until: deadline) else {
                send(.text(408, "the request body did not arrive in time"), keepAlive: false)
                return nil
            }
        }
        let body = Array(received.prefix(length))
        received.removeFirst(length)
        return body
    }

    private mutating func discardBody(of head: HTTPRequestHead) -> Bool {
        readBody(of: head) != nil
    }

    @discardableResult
    private func send(_ response: HTTPResponse, keepAlive: Bool) -> Bool {
        DaemonSocket.write(fd, response.serialized(keepAlive: keepAlive))
    }

    /// Writes a dashboard response as it is (its fields are complete, `Content-Length` included).
    private func send(_ page: DashboardResponse, keepAlive: Bool) -> Bool {
        var text = "HTTP/1.1 \(page.status) \(page.reason)\r\n"
        for (name, value) in page.headers { text += "\(name): \(value)\r\n" }
        if !keepAlive { text += "Connection: close\r\n" }
        return DaemonSocket.write(fd, Array((text + "\r\n").utf8) + page.body)
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
