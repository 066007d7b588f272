import HaulCore

/// Sends GET requests over Haul's own HTTP/1.1 connections and follows redirects.
///
/// Connections come from ``ConnectionPool`` when one to the origin is idle, else are made anew
/// (host names resolved on ``threads``, TLS from ``tls``). The header budget (bytes and lines) is
/// shared by every response of a redirect chain. A reused connection that fails before its
/// answer (the server closed it while idle) is replaced by a new one, once.
package struct HTTPClient: Sendable {
    /// Timeouts, limits and the policy for redirects.
    package struct Settings: Sendable {
        package var connectTimeout: Duration
        package var headerTimeout: Duration
        /// The longest a write (or a read of the body) may wait.
        package var stallTimeout: Duration
        package var userAgent: String
        package var maximumRedirects: Int
        package var allowsInsecureRedirects: Bool
        package var lowSpeedFloor: LowSpeedMonitor.SpeedFloor?

        package init(connectTimeout: Duration, headerTimeout: Duration, stallTimeout: Duration, userAgent: String,
                     maximumRedirects: Int, allowsInsecureRedirects: Bool, lowSpeedFloor: LowSpeedMonitor.SpeedFloor?) {
            self.connectTimeout = connectTimeout
            self.headerTimeout = headerTimeout
            self.stallTimeout = stallTimeout
            self.userAgent = userAgent
            self.maximumRedirects = maximumRedirects
            self.allowsInsecureRedirects = allowsInsecureRedirects
            self.lowSpeedFloor = lowSpeedFloor
        }
    }

    /// A final (non-redirect) response head, with the reader positioned at its body.
    package struct Response {
        package let reader: ResponseReader
        package let head: ResponseHead
        /// The URL that answered.
        package let finalURL: HTTPURL
    }

    package let settings: Settings
    package let tls: TLSContextCache
    package let pool: ConnectionPool?
    package let threads: ThreadPool

    package init(settings: Settings, tls: TLSContextCache, pool: ConnectionPool?, threads: ThreadPool) {
        self.settings = settings
        self.tls = tls
        self.pool = pool
        self.threads = threads
    }

    /// Sends a GET for `url` (with `range` and `ifRange` when given) and follows redirects under
    /// ``RedirectPolicy`` until a final answer.
    ///
    /// - Parameter buffer: the receive buffer, owned by the caller and reused for the body.
    /// - Throws: network, TLS, protocol and redirect errors; `cancelled`.
    package func get(_ url: HTTPURL, userHeaders: [(name: String, value: String)], range: ByteRangeRequest? = nil,
                     ifRange: String? = nil, cancellation: CancellationSignal,
                     buffer: UnsafeMutableRawBufferPointer) throws(HTTPClientError) -> Response {
        var policy = RedirectPolicy(original: url, userHeaders: userHeaders, maximumRedirects: settings.maximumRedirects,
                                    allowsInsecureRedirects: settings.allowsInsecureRedirects)
        var budget = HeaderBudget()
        var mayReuse = pool != nil
        while true {
            let current = policy.current
            let reused = mayReuse ? pool?.take(for: current, cancellation: cancellation) : nil
            let connection: Connection
            if let reused {
                connection = reused
            } else {
                connection = try connect(to: current, cancellation: cancellation)
            }
            let request = try RequestHead.make(method: .get, url: current, userAgent: settings.userAgent,
                                               userHeaders: policy.userHeaders, sendUserinfo: policy.sendsUserinfo,
                                               range: range, ifRange: range == nil ? nil : ifRange)
            let reader = ResponseReader(connection: connection, method: .get, budget: budget, buffer: buffer)
            reader.lowSpeedLimit = settings.lowSpeedFloor
            let head: ResponseHead
            do throws(HTTPClientError) {
                try connection.write(request.serialized(), timeout: settings.stallTimeout)
                head = try reader.readHead(deadline: ContinuousClock.now + settings.headerTimeout,
                                           stallTimeout: settings.stallTimeout)
            } catch {
                connection.close()
                if reused != nil, error.kind == .connectionReset || error.kind == .networkError, !cancellation.isCancelled {
                    mayReuse = false   // the server closed the idle connection: ask again on a new one
                    continue
                }
                throw error
            }
            budget = reader.parser.budget
            guard RedirectPolicy.isRedirect(head.status) else {
                return Response(reader: reader, head: head, finalURL: current)
            }
            connection.close()
            _ = try policy.follow(status: head.status, location: head.headers["Location"])
        }
    }

    /// A new connection to `url`'s origin; the pool learns the origin is reachable.
    private func connect(to url: HTTPURL, cancellation: CancellationSignal) throws(HTTPClientError) -> Connection {
        let connection = try Connection(to: url, tls: try tls.get(), connectTimeout: settings.connectTimeout,
                                        cancellation: cancellation, threads: threads)
        pool?.unreachable.reached(url.origin)
        return connection
    }
}
