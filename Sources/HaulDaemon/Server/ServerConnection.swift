import HaulCore

/// One client connection as a value: the bytes received and not yet served, and what it waits
/// for. The event loop holds it while it waits and hands it to a worker when there is work;
/// each event returns what to do, and the loop or the worker does it.
struct ServerConnection: Sendable {
    /// What a connection waits for between turns of work.
    enum Phase: Sendable {
        /// The next request: `idle` until its first byte (a kept-alive connection), then its
        /// head (and body) must arrive in time.
        case awaitingRequest(since: ContinuousClock.Instant, idle: Bool)
        /// The answer to a call with wrong tokens, held until `at` (``AuthThrottle``).
        case answerDue(bytes: [UInt8], at: ContinuousClock.Instant, keepAlive: Bool)
        /// A call (``heldCall``, or a WebSocket's first pending message) whose tokens wait
        /// for their turn to be checked (``AuthThrottle``), in its peer's queue.
        case awaitingTurn(since: ContinuousClock.Instant)
        /// A WebSocket's next message or notification.
        case webSocket
    }

    /// An HTTP call taken off the buffer that waits for its turn.
    struct HeldCall: Sendable {
        var body: [UInt8]
        var keepAlive: Bool
        var fields: [HTTPResponse.HTTPField]
    }

    /// A WebSocket after its handshake.
    struct WebSocket: Sendable {
        var parser: WebSocketFrameParser
        let subscriber: Notifier.Subscriber
        /// Whether a call on it carried the valid token (or the check is off).
        var authenticated: Bool
        /// When the peer last sent a byte.
        var lastHeard: ContinuousClock.Instant
        /// Whether a ping went out since then.
        var pinged = false
        /// Messages received after a call whose answer the throttle holds.
        var pending: [WebSocketMessage] = []
    }

    /// What the loop does after an event.
    enum Action: Equatable {
        /// Keep waiting.
        case wait
        /// Hand the connection to a worker.
        case serve
        /// Send a WebSocket ping (without blocking) and keep waiting.
        case ping
        /// Send these bytes if the socket takes them at once, then close.
        case close(farewell: [UInt8])
    }

    /// The limits the decisions use.
    struct Limits: Sendable {
        var headTimeout: Duration
        var requestTimeout: Duration
        var idleTimeout: Duration
        var pingInterval: Duration
        var maximumBodyBytes: Int
        /// The most bytes a connection may hold unserved (a body and its head).
        var maximumBufferedBytes: Int { maximumBodyBytes + HTTPRequestParser().maximumHeadBytes }
    }

    let fd: Int32
    let peer: String
    var received: [UInt8] = []
    var phase: Phase
    var webSocket: WebSocket?
    /// Whether a call on it carried the valid token (its calls are then checked at once).
    var authenticated = false
    /// Whether its waiting call had its turn (the loop admitted it).
    var admitted = false
    /// The HTTP call that waits for its turn.
    var heldCall: HeldCall?
    /// When the pending request's head arrived whole (its body then has ``Limits/requestTimeout``).
    private var headArrived: ContinuousClock.Instant?

    init(fd: Int32, peer: String, accepted: ContinuousClock.Instant) {
        self.fd = fd
        self.peer = peer
        phase = .awaitingRequest(since: accepted, idle: false)
    }

    /// Whether the connection may be closed to make room (it is not an authenticated WebSocket).
    var isEvictable: Bool { !(webSocket?.authenticated ?? false) }

    /// Whether it waits for a request's head (not idle between requests, not a WebSocket).
    var isAwaitingHead: Bool {
        if case .awaitingRequest(_, idle: false) = phase { return headArrived == nil }
        return false
    }

    /// Since when it has waited (the oldest is closed first to make room).
    func waitingSince(_ now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        switch phase {
        case .awaitingRequest(let since, _), .awaitingTurn(let since): since
        case .answerDue, .webSocket: webSocket?.lastHeard ?? now
        }
    }

    /// Bytes from the peer (empty: it closed).
    mutating func received(_ bytes: [UInt8], now: ContinuousClock.Instant, limits: Limits) -> Action {
        guard !bytes.isEmpty else { return .close(farewell: []) }
        received += bytes
        switch phase {
        case .awaitingRequest(_, let idle):
            if idle { phase = .awaitingRequest(since: now, idle: false) }
            switch Self.completeness(of: received, maximumBodyBytes: limits.maximumBodyBytes) {
            case .complete: return .serve
            case .headOnly: if headArrived == nil { headArrived = now }
            case .partial: break
            }
            return .wait
        case .answerDue, .awaitingTurn:
            return received.count > limits.maximumBufferedBytes ? .close(farewell: []) : .wait
        case .webSocket:
            webSocket?.lastHeard = now
            webSocket?.pinged = false
            return .serve
        }
    }

    /// When ``deadlinePassed(now:limits:)`` is due.
    func deadline(_ limits: Limits) -> ContinuousClock.Instant {
        switch phase {
        case .awaitingRequest(let since, let idle):
            if let headArrived { return headArrived + limits.requestTimeout }
            return since + (idle ? limits.idleTimeout : limits.headTimeout)
        case .answerDue(_, let at, _):
            return at
        case .awaitingTurn(let since):
            return since + limits.idleTimeout
        case .webSocket:
            guard let webSocket else { return .now }
            return webSocket.lastHeard + limits.pingInterval * (webSocket.pinged ? 2 : 1)
        }
    }

    /// The deadline came.
    mutating func deadlinePassed(now: ContinuousClock.Instant, limits: Limits) -> Action {
        guard now >= deadline(limits) else { return .wait }
        switch phase {
        case .awaitingRequest(_, let idle):
            if idle || received.isEmpty { return .close(farewell: []) }
            return .close(farewell: HTTPResponse.text(408, "the request did not arrive in time").serialized(keepAlive: false))
        case .answerDue:
            return .serve
        case .awaitingTurn:
            return .close(farewell: webSocket == nil ? HTTPResponse.text(503, "no turn to check the token in time").serialized(keepAlive: false)
                : WebSocketFrame.close(code: 1013, reason: "no turn to check the token in time"))
        case .webSocket:
            guard webSocket?.pinged == false else {
                return .close(farewell: WebSocketFrame.close(code: 1001, reason: "no answer to a ping"))
            }
            webSocket?.pinged = true
            return .ping
        }
    }

    /// Waits again for the next request (idle when nothing of it is here yet), or for a
    /// WebSocket's next message.
    mutating func awaitNext(now: ContinuousClock.Instant) {
        phase = webSocket == nil ? .awaitingRequest(since: now, idle: received.isEmpty) : .webSocket
    }

    /// The next request is being served: its head's timer is spent.
    mutating func requestTaken() {
        headArrived = nil
    }

    /// How much of a request `bytes` hold.
    enum Completeness { case partial, headOnly, complete }

    /// Whether `bytes` begin with a whole request (a head that cannot be parsed counts as whole:
    /// its answer is an error), or with a whole head only.
    static func completeness(of bytes: [UInt8], maximumBodyBytes: Int) -> Completeness {
        let step: HTTPRequestParser.Step
        do throws(HTTPRequestError) {
            step = try HTTPRequestParser().parse(bytes)
        } catch {
            return .complete
        }
        guard case .head(let head, let consumed) = step else { return .partial }
        guard let length = try? HTTPRequestParser.contentLength(head), length <= maximumBodyBytes else { return .complete }
        return bytes.count - consumed >= length ? .complete : .headOnly
    }
}
