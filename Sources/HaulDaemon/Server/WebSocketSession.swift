import HaulCore

/// A worker's turn on a WebSocket: sends the notifications queued for it, then answers the
/// JSON-RPC calls in its text messages in order; pings answered; a close answered and the
/// connection ended. A call that waits for its turn to be checked, or whose answer about wrong
/// tokens the throttle holds, is held by the loop, and the messages after it wait for it.
struct WebSocketSession {
    let server: DaemonServer
    var connection: ServerConnection
    /// The messages received and not answered yet.
    private var messages: [WebSocketMessage] = []

    init(server: DaemonServer, connection: ServerConnection) {
        self.server = server
        self.connection = connection
        messages = connection.webSocket?.pending ?? []
        self.connection.webSocket?.pending = []
    }

    /// Serves the socket's turn; returns it to wait again, or `nil` once it is to close.
    mutating func serve() -> ServerConnection? {
        guard let subscriber = connection.webSocket?.subscriber else { return nil }
        guard let notifications = subscriber.take() else {
            write(WebSocketFrame.close(code: 1008, reason: "too many notifications unread"))
            return nil
        }
        for text in notifications where !write(WebSocketFrame.encode(.text, text)) { return nil }
        guard takeMessages() else { return nil }
        while !messages.isEmpty {
            if server.isStopped {
                write(WebSocketFrame.close(code: 1001, reason: "the daemon is stopping"))
                return nil
            }
            let message = messages.removeFirst()
            guard handle(message) else { return nil }
            switch connection.phase {
            case .answerDue, .awaitingTurn:
                connection.webSocket?.pending = messages
                return connection
            case .awaitingRequest, .webSocket:
                continue
            }
        }
        return connection
    }

    /// Parses the bytes received into messages; `false` (after a close frame) when they break
    /// the protocol.
    private mutating func takeMessages() -> Bool {
        guard !connection.received.isEmpty, var webSocket = connection.webSocket else { return true }
        defer { connection.webSocket = webSocket }
        do throws(WebSocketError) {
            messages += try webSocket.parser.feed(connection.received)
            connection.received = []
            return true
        } catch {
            write(WebSocketFrame.close(code: error.closeCode, reason: error.reason))
            return false
        }
    }

    /// Answers one message; returns `false` once the socket is to close.
    private mutating func handle(_ message: WebSocketMessage) -> Bool {
        switch message {
        case .text(let text):
            guard let (reply, due) = server.answer(Array(text.utf8), for: &connection) else {
                messages.insert(message, at: 0)
                connection.phase = .awaitingTurn(since: .now)
                return true
            }
            if reply.authorized, connection.webSocket?.authenticated == false {
                connection.webSocket?.authenticated = true
                server.webSocketAuthenticated()
            }
            let frame = WebSocketFrame.encode(.text, reply.body)
            if let due {
                connection.phase = .answerDue(bytes: frame, at: due, keepAlive: true)
                return true
            }
            return write(frame)
        case .binary:
            write(WebSocketFrame.close(code: 1003, reason: "JSON-RPC comes in text messages"))
            return false
        case .ping(let data):
            return write(WebSocketFrame.encode(.pong, data))
        case .pong:
            return true
        case .close(let code, _):
            write(WebSocketFrame.close(code: code ?? 1000))
            return false
        }
    }

    @discardableResult
    private func write(_ bytes: [UInt8]) -> Bool {
        DaemonSocket.write(connection.fd, bytes, until: .now + server.configuration.writeTimeout)
    }
}
