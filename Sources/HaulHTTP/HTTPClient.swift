import HaulCore

/// Sends GET requests over Haul's own HTTP/1.1 connections and follows redirects.
///
/// Each hop chooses its route anew (``ProxySelector``: direct, or through a proxy, see
/// ``ConnectionRoute``), its credentials (``BasicCredentials/forRequest(to:onOriginalOrigin:explicit:netrc:)``)
/// and its cookies (``CookieJar``). Connections come from ``ConnectionPool`` when one along the
/// route is idle, else are made anew (host names resolved on ``threads``, TLS from ``tls``). The
/// header budget (bytes and lines) is shared by every response of a redirect chain. A reused
/// connection that fails before its answer (the server closed it while idle) is replaced by a
/// new one, once. A 407 from a forwarding proxy ends the request (Basic credentials, when the
/// proxy URL has them, went with it).
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
        /// Which proxy each URL goes through.
        package var proxies: ProxySelector = .direct
        /// How an `https://` proxy's certificate is verified.
        package var proxyTLS = TLSSettings()
        /// Credentials per host, used on every hop (after the URL's userinfo and the explicit ones).
        package var netrc: Netrc?
        /// Cookies sent where they match, on every hop.
        package var cookies: CookieJar?

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
    /// The TLS context for `https://` proxies (made on first use).
    private let proxyTLS: TLSContextCache

    /// - Parameters:
    ///   - tls: the servers' TLS context; `proxyTLS`, the `https://` proxies' (made here when
    ///     `nil`; a downloader hands both from its ``TLSContexts``).
    package init(settings: Settings, tls: TLSContextCache, proxyTLS: TLSContextCache? = nil, pool: ConnectionPool?,
                 threads: ThreadPool) {
        self.settings = settings
        self.tls = tls
        self.pool = pool
        self.threads = threads
        self.proxyTLS = proxyTLS ?? TLSContextCache(options: settings.proxyTLS)
    }

    /// Sends a GET for `url` (with `range` and `ifRange` when given) and follows redirects under
    /// ``RedirectPolicy`` until a final answer.
    ///
    /// - Parameters:
    ///   - credentials: Basic credentials for `url`'s origin only (`-u`): never sent after a
    ///     redirect to another origin.
    ///   - buffer: the receive buffer, owned by the caller and reused for the body.
    /// - Throws: network, TLS, protocol, proxy and redirect errors; `cancelled`.
    package func get(_ url: HTTPURL, userHeaders: [(name: String, value: String)], credentials: BasicCredentials? = nil,
                     range: ByteRangeRequest? = nil, ifRange: String? = nil, cancellation: CancellationSignal,
                     buffer: UnsafeMutableRawBufferPointer) throws(HTTPClientError) -> Response {
        var policy = RedirectPolicy(original: url, userHeaders: userHeaders, maximumRedirects: settings.maximumRedirects,
                                    allowsInsecureRedirects: settings.allowsInsecureRedirects)
        var budget = HeaderBudget()
        var mayReuse = pool != nil
        while true {
            let current = policy.current
            let route = ConnectionRoute(url: current, proxy: settings.proxies.proxy(for: current), tls: tls.options,
                                        proxyTLS: settings.proxyTLS)
            let reused = mayReuse ? pool?.take(for: route, cancellation: cancellation) : nil
            let connection: Connection
            if let reused {
                connection = reused
            } else {
                connection = try connect(to: current, route: route, cancellation: cancellation)
            }
            let request = try makeRequest(current, route: route, policy: policy, credentials: credentials, range: range,
                                          ifRange: ifRange)
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
            if head.status == 407, route.isForwarding, let proxy = route.proxy {
                connection.close()
                throw ConnectHandshake.proxyAuthenticationError(head, credentialsSent: proxy.user != nil, proxy: proxy.description)
            }
            guard RedirectPolicy.isRedirect(head.status) else {
                return Response(reader: reader, head: head, finalURL: current)
            }
            connection.close()
            _ = try policy.follow(status: head.status, location: head.headers["Location"])
        }
    }

    /// The request for one hop: its credentials and cookies, and the proxy's form when forwarded.
    private func makeRequest(_ url: HTTPURL, route: ConnectionRoute, policy: RedirectPolicy, credentials: BasicCredentials?,
                             range: ByteRangeRequest?, ifRange: String?) throws(HTTPClientError) -> RequestHead {
        let authorization = BasicCredentials.forRequest(to: url, onOriginalOrigin: policy.sendsUserinfo, explicit: credentials,
                                                        netrc: settings.netrc)
        return try RequestHead.make(
            method: .get, url: url, userAgent: settings.userAgent, userHeaders: policy.userHeaders, sendUserinfo: false,
            range: range, ifRange: range == nil ? nil : ifRange, authorization: authorization?.authorization,
            cookie: settings.cookies?.header(for: url),
            proxyAuthorization: route.isForwarding ? route.proxy?.proxyAuthorization : nil, absoluteForm: route.isForwarding)
    }

    /// A new connection along `route`; the pool learns a direct origin is reachable.
    private func connect(to url: HTTPURL, route: ConnectionRoute, cancellation: CancellationSignal) throws(HTTPClientError) -> Connection {
        let connection = try Connection(to: url, route: route, tls: try tls.get(),
                                        proxyTLS: route.proxy?.scheme == .https ? try proxyTLS.get() : nil,
                                        userAgent: settings.userAgent, connectTimeout: settings.connectTimeout,
                                        cancellation: cancellation, threads: threads)
        if case .direct = route { pool?.unreachable.reached(url.origin) }
        return connection
    }
}
