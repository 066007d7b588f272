import HaulCore

extension DaemonServer {
    /// Where and how the server listens, and its limits.
    public struct Configuration: Sendable {
        /// The address (port 0 picks a free one).
        public var listen: ListenAddress
        /// Origins accepted besides the daemon's own (`--allow-origin`).
        public var allowedOrigins: [String] = []
        /// Connections open at once; beyond, the one that has waited longest (not an
        /// authenticated WebSocket) is closed to make room. The server holds fewer when the
        /// descriptor limit is lower (``DescriptorLimit``: half the soft limit less 256, at
        /// least 64).
        public var maximumConnections = 4096
        /// Threads that answer requests (waiting connections need none).
        public var workerThreads = 16
        /// The largest request body (and WebSocket message).
        public var maximumBodyBytes = 2 << 20
        /// The most bytes of unanswered requests the waiting connections hold in all; beyond,
        /// the one holding the most (not an authenticated one) is closed.
        public var maximumBufferedBytes = 256 << 20
        /// How long a kept-alive connection may stay silent before it is closed.
        public var idleTimeout: Duration = .seconds(60)
        /// How long a request's head may take to arrive, from the connection or its first byte.
        public var headTimeout: Duration = .seconds(10)
        /// The same while more than ``crowdedHeads`` heads are awaited.
        public var crowdedHeadTimeout: Duration = .seconds(2)
        /// How many awaited heads make the server crowded.
        public var crowdedHeads = 256
        /// How long a body may take to arrive once its head has.
        public var requestTimeout: Duration = .seconds(30)
        /// How long an answer may take to be read; then the connection is closed.
        public var writeTimeout: Duration = .seconds(10)
        /// The least delay of an answer to a call with a wrong token.
        public var failedAuthenticationDelay: Duration = .seconds(1)
        /// The time each wrong token spends of its peer's budget (10 guesses a second).
        public var guessInterval: Duration = .milliseconds(100)
        /// WebSockets open at once that have made no call with the valid token.
        public var maximumUnauthenticatedWebSockets = 64
        /// A WebSocket silent this long is pinged, and closed when silent as long again.
        public var webSocketPingInterval: Duration = .seconds(30)
        /// What is served outside `/jsonrpc` (`haul daemon` gives the web dashboard), asked in
        /// order; the first answer is sent, and 404 when none answers. Empty, every such path is 404.
        public var pages: [any PageProvider] = []
        /// Starts the server's threads (tests make it fail).
        package var threadStarter: ThreadPool.Starter = ThreadPool.systemStarter

        /// Creates a configuration.
        public init(listen: ListenAddress) {
            self.listen = listen
        }
    }
}
