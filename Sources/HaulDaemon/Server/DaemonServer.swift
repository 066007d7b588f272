import HaulCore
import HaulService
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The daemon's HTTP/1.1 server: JSON-RPC over `POST /jsonrpc`, the same over a WebSocket at
/// `/jsonrpc`, the web dashboard (HaulDashboard) at `/`, and (through a ``StaticFileProvider``)
/// files at other paths.
///
/// Threads: one accepts (blocked in `poll` on the listening socket and a wake-up descriptor);
/// each connection has a thread of a ``ThreadPool`` (capped at
/// ``Configuration/maximumConnections``; beyond it a connection is answered 503 and closed),
/// blocked in `poll` until its peer sends or, for a WebSocket, until a notification is queued
/// for it. An idle daemon has no thread that wakes up on its own. A call's reply never waits
/// for a transfer: the RPC changes the service's state in memory and waits only for the state
/// file's commit.
///
/// Every request passes ``RequestPolicy`` first (Host, Origin, size, method); a call without
/// the valid token is answered after ``AuthThrottle``'s delay.
public final class DaemonServer: Sendable {
    /// Where and how the server listens.
    public struct Configuration: Sendable {
        /// The address (port 0 picks a free one).
        public var listen: ListenAddress
        /// Origins accepted besides the daemon's own (`--allow-origin`).
        public var allowedOrigins: [String] = []
        /// Connections served at once.
        public var maximumConnections = 128
        /// The largest request body (and WebSocket message).
        public var maximumBodyBytes = 2 << 20
        /// How long a kept-alive connection may stay silent before it is closed.
        public var idleTimeout: Duration = .seconds(60)
        /// How long a request's head and body may take to arrive once begun.
        public var requestTimeout: Duration = .seconds(30)
        /// The least delay of an answer to a call with a wrong token.
        public var failedAuthenticationDelay: Duration = .seconds(1)
        /// The time each wrong token spends of its peer's budget (10 guesses a second).
        public var guessInterval: Duration = .milliseconds(100)
        /// Whether the web dashboard is served at `/` (its files at their own paths): asked
        /// before ``staticFiles``.
        public var servesDashboard = true
        /// The files served outside `/jsonrpc` besides the dashboard's; `nil` answers 404 there.
        public var staticFiles: (any StaticFileProvider)?

        /// Creates a configuration.
        public init(listen: ListenAddress) {
            self.listen = listen
        }
    }

    /// The configuration, with the port actually bound.
    public let configuration: Configuration
    let rpc: Aria2RPC
    let policy: RequestPolicy
    let throttle: AuthThrottle
    let notifier = Notifier()
    private let listener: Int32
    private let wakeup = WakeupDescriptor()
    private let threads: ThreadPool
    private let observerToken: Int
    /// The sockets of open connections (shut down by ``stop()``), and whether it was called.
    private let connections = SharedStateLock((open: [Int32: Void](), stopped: false))
    private let finished = Monitor()

    /// Binds the listening socket; serving starts with ``start()``.
    ///
    /// - Throws: ``DaemonError`` when the address cannot be bound.
    public init(configuration: Configuration, rpc: Aria2RPC) throws(DaemonError) {
        let (listener, port) = try DaemonSocket.listening(on: configuration.listen)
        var bound = configuration
        bound.listen.port = port
        self.configuration = bound
        self.listener = listener
        self.rpc = rpc
        policy = RequestPolicy(listen: bound.listen, allowedOrigins: bound.allowedOrigins,
                               maximumBodyBytes: bound.maximumBodyBytes)
        throttle = AuthThrottle(delay: bound.failedAuthenticationDelay, interval: bound.guessInterval)
        threads = ThreadPool(maximumThreads: bound.maximumConnections + 1, idleLifetime: .seconds(5))
        let notifier = self.notifier
        observerToken = rpc.service.addObserver { notifier.publish($0) }
    }

    deinit {
        closeListener()
    }

    private let listenerClosed = Atomic<Bool>(false)

    /// Closes the listening socket once (the port is free again).
    private func closeListener() {
        if !listenerClosed.exchange(true, ordering: .acquiringAndReleasing) { closeDescriptor(listener) }
    }

    /// The address served, with its actual port.
    public var address: ListenAddress { configuration.listen }

    /// Starts accepting connections on a thread of the server's own.
    public func start() {
        threads.run(name: "haul-accept") { [self] in acceptUntilStopped() }
    }

    /// Stops accepting, lets calls being answered finish for `grace`, then closes every
    /// connection (WebSockets get a close frame when their thread notices) and returns once
    /// their threads ended, or after `timeout`.
    public func stop(grace: Duration = .milliseconds(200), timeout: Duration = .seconds(5)) {
        connections.withLock { $0.stopped = true }
        wakeup.signal()
        rpc.service.removeObserver(observerToken)
        sleep(until: .now + grace)
        connections.withLock { state in
            // Under the lock: a connection's thread closes its socket only after leaving the list.
            for fd in state.open.keys { shutdown(fd, Int32(SHUT_RDWR)) }
        }
        let deadline = ContinuousClock.now + timeout
        finished.withLock {
            while !connections.withLock({ $0.open.isEmpty }) || acceptRunning.load(ordering: .relaxed) {
                guard finished.wait(until: deadline) else { break }
            }
        }
    }

    private let acceptRunning = Atomic<Bool>(false)

    private func acceptUntilStopped() {
        acceptRunning.store(true, ordering: .relaxed)
        defer {
            closeListener()
            acceptRunning.store(false, ordering: .relaxed)
            finished.withLock { finished.broadcast() }
        }
        while true {
            switch DaemonSocket.wait(listener, wakeup: wakeup.pollDescriptor, until: nil) {
            case .woken, .timedOut: return
            case .readable: break
            }
            guard let (fd, peer) = DaemonSocket.accepting(listener) else { continue }
            let admitted = connections.withLock { state -> Bool in
                guard !state.stopped, state.open.count < configuration.maximumConnections else { return false }
                state.open[fd] = ()
                return true
            }
            guard admitted else {
                DaemonSocket.write(fd, HTTPResponse.text(503, "too many connections").serialized(keepAlive: false))
                closeDescriptor(fd)
                continue
            }
            threads.run(name: "haul-rpc") { [self] in
                var connection = DaemonConnection(server: self, fd: fd, peer: peer)
                connection.serve()
                connections.withLock { _ = $0.open.removeValue(forKey: fd) }
                closeDescriptor(fd)
                finished.withLock { finished.broadcast() }
            }
        }
    }

    /// Whether ``stop()`` was called.
    var isStopped: Bool { connections.withLock { $0.stopped } }
}
