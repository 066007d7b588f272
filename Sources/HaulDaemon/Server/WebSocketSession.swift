import HaulCore

/// A WebSocket after the handshake: JSON-RPC calls in text messages, answered in order;
/// notifications sent once the socket made a call with the valid token (or authentication is
/// off); pings answered; a close answered and the connection ended.
struct WebSocketSession {
    let server: DaemonServer
    let fd: Int32
    let peer: String
    var pending: [UInt8]
    private var parser: WebSocketFrameParser
    private let subscriber = Notifier.Subscriber()

    init(server: DaemonServer, fd: Int32, peer: String, pending: [UInt8]) {
        self.server = server
        self.fd = fd
        self.peer = peer
        self.pending = pending
        parser = WebSocketFrameParser(maximumMessageBytes: server.configuration.maximumBodyBytes)
        if !server.rpc.requiresToken { subscriber.authenticate() }
    }

    /// Serves the socket until either side closes it.
    mutating func run() {
        server.notifier.add(subscriber)
        defer { server.notifier.remove(subscriber) }
        var bytes = pending
        while true {
            if !bytes.isEmpty {
                guard handle(bytes) else { return }
                bytes = []
            }
            if server.isStopped {
                DaemonSocket.write(fd, WebSocketFrame.close(code: 1001, reason: "the daemon is stopping"))
                return
            }
            switch DaemonSocket.wait(fd, wakeup: subscriber.wakeup.pollDescriptor, until: nil) {
            case .woken:
                guard let notifications = subscriber.take() else {
                    DaemonSocket.write(fd, WebSocketFrame.close(code: 1008, reason: "too many notifications unread"))
                    return
                }
                for text in notifications where !DaemonSocket.write(fd, WebSocketFrame.encode(.text, text)) { return }
            case .readable:
                bytes = DaemonSocket.read(fd)
                if bytes.isEmpty { return }
            case .timedOut:
                return
            }
        }
    }

    /// Takes bytes from the peer; returns `false` once the socket is to close.
    private mutating func handle(_ bytes: [UInt8]) -> Bool {
        let messages: [WebSocketMessage]
        do throws(WebSocketError) {
            messages = try parser.feed(bytes)
        } catch {
            DaemonSocket.write(fd, WebSocketFrame.close(code: error.closeCode, reason: error.reason))
            return false
        }
        for message in messages {
            switch message {
            case .text(let text):
                let reply = server.rpc.handle(Array(text.utf8))
                if reply.unauthorized { sleep(until: server.throttle.answerTime(guesses: reply.guesses, from: peer)) }
                if reply.authorized { subscriber.authenticate() }
                guard DaemonSocket.write(fd, WebSocketFrame.encode(.text, reply.body)) else { return false }
            case .binary:
                DaemonSocket.write(fd, WebSocketFrame.close(code: 1003, reason: "JSON-RPC comes in text messages"))
                return false
            case .ping(let data):
                guard DaemonSocket.write(fd, WebSocketFrame.encode(.pong, data)) else { return false }
            case .pong:
                continue
            case .close(let code, _):
                DaemonSocket.write(fd, WebSocketFrame.close(code: code ?? 1000))
                return false
            }
        }
        return true
    }
}
