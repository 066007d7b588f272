import HaulCore
import HaulJSON
import HaulService
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's HTTP/1.1 server: JSON-RPC over `POST /jsonrpc`, the same over a WebSocket at
/// `/jsonrpc`, and at other paths the pages of its ``PageProvider``s (the web dashboard, which
/// `haul daemon` hands in).
///
/// Threads: one event loop holds every connection that waits (for a request's bytes, for a
/// WebSocket's next message or notification, for a throttled answer's time) in one `poll`, and
/// hands a connection with work (a whole request, a message, a notification, an answer due) to
/// a worker of a ``ThreadPool``; the worker answers and gives it back. A waiting connection
/// costs a descriptor and its unserved bytes, never a thread, so thousands of idle, half-sent
/// or throttled sockets leave the workers to the clients with requests. At
/// ``Configuration/maximumConnections`` the connection that has waited longest (not an
/// authenticated WebSocket) is closed to make room. The loop's `poll` wakes only for sockets,
/// a worker's hand-back or the nearest deadline.
///
/// Every request passes ``RequestPolicy`` first (Host, Origin, size, method). A call from a
/// connection that has not shown the valid token waits in the loop for its turn to be checked,
/// and the answer to a call with wrong tokens until ``AuthThrottle`` lets it go; both are
/// dropped if the peer leaves first.
public final class DaemonServer: Sendable {
    /// The configuration, with the port actually bound.
    public let configuration: Configuration
    let rpc: Aria2RPC
    let policy: RequestPolicy
    let throttle: AuthThrottle
    let notifier = Notifier()
    let listener: Int32
    let wakeup = WakeupDescriptor()
    let threads: ThreadPool
    private let observerToken: Int
    /// The shared state; ``stop()`` waits on it for the connections and the loop to end.
    let state = ConditionLock(SharedState())

    /// What the loop and the workers share.
    struct SharedState {
        /// Every open connection's socket (shut down by ``stop()``).
        var open = Set<Int32>()
        var stopped = false
        /// Connections the workers gave back, for the loop to hold.
        var handedBack: [ServerConnection] = []
        /// WebSockets without the valid token.
        var unauthenticatedWebSockets = 0
        var loopRunning = false
        /// Whether the listening socket was closed.
        var listenerClosed = false
    }

    /// Binds the listening socket; serving starts with ``start()``.
    ///
    /// - Throws: ``DaemonError`` when the address cannot be bound.
    public init(configuration: Configuration, rpc: Aria2RPC) throws(DaemonError) {
        let (listener, port) = try DaemonSocket.listening(on: configuration.listen)
        var bound = configuration
        bound.listen.port = port
        bound.maximumConnections = DescriptorLimit.connections(upTo: configuration.maximumConnections)
        self.configuration = bound
        self.listener = listener
        self.rpc = rpc
        policy = RequestPolicy(listen: bound.listen, allowedOrigins: bound.allowedOrigins,
                               maximumBodyBytes: bound.maximumBodyBytes)
        throttle = AuthThrottle(delay: bound.failedAuthenticationDelay, interval: bound.guessInterval)
        threads = ThreadPool(maximumThreads: bound.workerThreads + 1, idleLifetime: .seconds(5), starter: bound.threadStarter)
        let notifier = self.notifier
        observerToken = rpc.service.addObserver { notifier.publish($0) }
    }

    deinit {
        closeListener()
    }

    /// Closes the listening socket once (the port is free again).
    func closeListener() {
        let first = state.withLock { state -> Bool in
            defer { state.listenerClosed = true }
            return !state.listenerClosed
        }
        if first { closeDescriptor(listener) }
    }

    /// The address served, with its actual port.
    public var address: ListenAddress { configuration.listen }

    /// Starts the event loop on a thread of the server's own.
    ///
    /// - Throws: ``DaemonError`` when the system gives no thread or wake-up descriptor for the
    ///   loop (nothing is served then; ``stop()`` still works).
    public func start() throws(DaemonError) {
        state.withLock { $0.loopRunning = true }
        do throws(ResourceError) {
            _ = try wakeup.pollDescriptor   // made now: the loop cannot run without it
            try threads.run(name: "haul-loop") { [self] in
                runLoop()
                loopEnded()
            }
        } catch {
            loopEnded()
            throw DaemonError(error.message)
        }
    }

    /// The loop is over (or never started): the port is free and ``stop()`` stops waiting for it.
    private func loopEnded() {
        closeListener()
        state.withLockBroadcasting { $0.loopRunning = false }
    }

    /// Stops accepting, lets calls being answered finish for `grace`, then closes every
    /// connection (WebSockets get a close frame) and returns once their work ended, or after
    /// `timeout`.
    public func stop(grace: Duration = .milliseconds(200), timeout: Duration = .seconds(5)) {
        state.withLock { $0.stopped = true }
        wakeup.signal()
        rpc.service.removeObserver(observerToken)
        sleep(until: .now + grace)
        state.withLock { state in
            // Under the lock: a socket is closed only after leaving the set.
            for fd in state.open { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        let deadline = ContinuousClock.now + timeout
        state.wait(until: deadline) { !$0.open.isEmpty || $0.loopRunning }
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { state.withLock { $0.stopped } }

    /// Connections open now.
    var connectionCount: Int { state.withLock { $0.open.count } }

    /// Runs a worker's turn on `connection`, then gives it back to the loop or closes it.
    ///
    /// When the system gives no thread for the turn, the call is answered `503` (a JSON-RPC
    /// error for a `POST`, a close frame `1013` on a WebSocket) and the connection closed; the
    /// server goes on with the others. The loop hands over only a whole request, so nothing of
    /// it is left unread when the socket closes.
    func serve(_ connection: ServerConnection) {
        do throws(ResourceError) {
            try threads.run(name: "haul-rpc") { [self] in
                var worker = DaemonConnection(server: self, connection: connection)
                guard let next = worker.serve() else { return discard(worker.connection) }
                let held = state.withLock { state -> Bool in
                    guard !state.stopped else { return false }
                    state.handedBack.append(next)
                    return true
                }
                if held { wakeup.signal() } else { discard(next) }
            }
        } catch {
            _ = DaemonSocket.sendWithoutWaiting(connection.fd, Self.noThreadFarewell(connection, error.message))
            discard(connection)
        }
    }

    /// What a call that got no thread is told before its connection closes.
    static func noThreadFarewell(_ connection: ServerConnection, _ reason: String) -> [UInt8] {
        let message = "the daemon has no thread for this call now (\(reason)); try again"
        guard connection.webSocket == nil else { return WebSocketFrame.close(code: 1013, reason: "no thread for the call now") }
        let retry = [HTTPResponse.HTTPField("Retry-After", "1")]
        guard connection.received.starts(with: Array("POST ".utf8)) else {
            return HTTPResponse.text(503, message, fields: retry).serialized(keepAlive: false)
        }
        let answer = RPCResponse(id: .null, outcome: .failure(.failure(message)))
        return HTTPResponse(status: 503, contentType: "application/json-rpc", fields: retry,
                            body: JSONWriter.encode(answer.json)).serialized(keepAlive: false)
    }

    /// Closes a connection for good.
    func discard(_ connection: ServerConnection) {
        if let webSocket = connection.webSocket { notifier.remove(webSocket.subscriber) }
        state.withLock { state in
            if let webSocket = connection.webSocket, !webSocket.authenticated { state.unauthenticatedWebSockets -= 1 }
            state.open.remove(connection.fd)
        }
        closeDescriptor(connection.fd)
        state.broadcast()   // after the close: stop() returns once every socket is closed
    }

    /// Runs a call for `connection`, or returns `nil` when it is to wait for its turn: a
    /// connection that has not shown the valid token has its tokens checked only once the
    /// loop admitted it (first come, first served, as ``AuthThrottle`` allows), and at most
    /// the throttle's guesses per request. Returns the reply and, when it carries wrong
    /// tokens, when it may be sent.
    func answer(_ body: [UInt8], for connection: inout ServerConnection) -> (Aria2RPC.Reply, ContinuousClock.Instant?)? {
        let paced = rpc.requiresToken && !connection.authenticated
        if paced, !connection.admitted { return nil }
        connection.admitted = false
        let reply = rpc.handle(body, guessLimit: throttle.guessesPerRequest)
        if reply.authorized { connection.authenticated = true }
        guard reply.guesses > 0 else {
            if paced { throttle.refund(connection.peer) }
            return (reply, nil)
        }
        // A paced check spent its first interval when admitted.
        return (reply, throttle.answerTime(guesses: reply.guesses - (paced ? 1 : 0), from: connection.peer))
    }

    /// Admits a WebSocket: an unauthenticated one only while fewer than
    /// ``Configuration/maximumUnauthenticatedWebSockets`` are open.
    func admitWebSocket(authenticated: Bool) -> Bool {
        guard !authenticated else { return true }
        return state.withLock { state in
            guard state.unauthenticatedWebSockets < configuration.maximumUnauthenticatedWebSockets else { return false }
            state.unauthenticatedWebSockets += 1
            return true
        }
    }

    /// A WebSocket made a call with the valid token: it leaves the unauthenticated budget.
    func webSocketAuthenticated() {
        state.withLock { $0.unauthenticatedWebSockets -= 1 }
    }
}
