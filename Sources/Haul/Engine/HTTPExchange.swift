/// A request sent and its final response head received, redirects followed.
///
/// The engine's only view of a response, over one of two backends chosen by
/// ``Downloader/Configuration/transport``: Haul's own HTTP/1.1 client (a ``ResponseReader`` over
/// a ``Connection``) or another client's (an ``AlternateTransport``, such as `URLSession` from
/// the `HaulURLSession` module).
struct HTTPExchange {
    /// The final response head (not a redirect).
    let head: ResponseHead
    /// The URL that answered it.
    let finalURL: HTTPURL
    private let backend: Backend

    private enum Backend {
        /// Haul's own client: the reader positioned at the start of the final response's body.
        case native(ResponseReader)
        /// Another client's response (a `URLSession` data task).
        case alternate(any AlternateResponse)
    }

    /// Sends a GET for `url` and follows redirects under ``RedirectPolicy`` until a final answer,
    /// over the configured transport.
    ///
    /// - Parameters:
    ///   - pool: the downloader's idle connections (native) and its other client's transport.
    ///   - buffer: the receive buffer (another client's chunks are gathered in it).
    /// - Throws: network, TLS, protocol and redirect errors; `notSupported` for settings the
    ///   transport cannot honour.
    static func open(url: HTTPURL, userHeaders: [(name: String, value: String)], range: ByteRangeRequest? = nil,
                     ifRange: String? = nil, configuration: Downloader.Configuration,
                     tls: TLSContextCache, pool: ConnectionPool?, cancellation: CancellationSignal,
                     buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> HTTPExchange {
        guard let make = configuration.transport.make else {
            return try openNative(url: url, userHeaders: userHeaders, range: range, ifRange: ifRange,
                                  configuration: configuration, tls: tls, pool: pool, cancellation: cancellation,
                                  buffer: buffer)
        }
        let transport = pool?.alternateTransport(configuration, make: make) ?? make(configuration)
        let (reader, head, finalURL) = try transport.open(
            url: url, userHeaders: userHeaders, range: range, ifRange: ifRange, configuration: configuration,
            cancellation: cancellation, buffer: buffer)
        return HTTPExchange(head: head, finalURL: finalURL, backend: .alternate(reader))
    }

    /// Haul's own client: connects (or takes an idle connection from `pool`), sends a GET and
    /// follows redirects.
    ///
    /// The header budget (bytes and lines) is shared by every response of the chain. A reused
    /// connection that fails before its answer (the server closed it while idle) is replaced by
    /// a new one, once.
    private static func openNative(url: HTTPURL, userHeaders: [(name: String, value: String)], range: ByteRangeRequest?,
                                   ifRange: String?, configuration: Downloader.Configuration,
                                   tls: TLSContextCache, pool: ConnectionPool?, cancellation: CancellationSignal,
                                   buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> HTTPExchange {
        var policy = RedirectPolicy(original: url, userHeaders: userHeaders, maximumRedirects: configuration.maximumRedirects,
                                    allowsInsecureRedirects: configuration.allowsInsecureRedirects)
        var budget = HeaderBudget()
        var mayReuse = pool != nil
        while true {
            let current = policy.current
            let reused = mayReuse ? pool?.take(for: current, cancellation: cancellation) : nil
            let connection: Connection
            if let reused {
                connection = reused
            } else {
                connection = try Connection(to: current, tls: try tls.get(), connectTimeout: configuration.connectTimeout,
                                            cancellation: cancellation)
                pool?.unreachable.reached(current.origin)
            }
            let request = try RequestHead.make(method: .get, url: current, userAgent: configuration.userAgent,
                                               userHeaders: policy.userHeaders, sendUserinfo: policy.sendsUserinfo,
                                               range: range, ifRange: range == nil ? nil : ifRange)
            let reader = ResponseReader(connection: connection, method: .get, budget: budget, buffer: buffer)
            reader.lowSpeedLimit = configuration.lowSpeedLimit
            let head: ResponseHead
            do throws(DownloadError) {
                try connection.write(request.serialized(), timeout: configuration.stallTimeout)
                head = try reader.readHead(deadline: ContinuousClock.now + configuration.headerTimeout)
            } catch {
                connection.close()
                if reused != nil, error.code == .connectionReset || error.code == .networkError, !cancellation.isCancelled {
                    mayReuse = false   // the server closed the idle connection: ask again on a new one
                    continue
                }
                throw error
            }
            budget = reader.parser.budget
            guard RedirectPolicy.isRedirect(head.status) else {
                return HTTPExchange(head: head, finalURL: current, backend: .native(reader))
            }
            connection.close()
            _ = try policy.follow(status: head.status, location: head.headers["Location"])
        }
    }

    /// How the body is delimited (length, chunks, or the close).
    var framing: ResponseParser.Framing? {
        switch backend {
        case .native(let reader): reader.parser.framing
        case .alternate(let reader): reader.framing
        }
    }

    /// Whether the rest of the body is in the receive buffer already (Haul's own client only;
    /// see ``ResponseReader/bodyIsBuffered``).
    var bodyIsBuffered: Bool {
        switch backend {
        case .native(let reader): reader.bodyIsBuffered
        case .alternate: false
        }
    }

    /// The most bytes one read may ask for (a rate limit keeps reads small so its sleeps stay short).
    func limitReads(to size: Int) {
        switch backend {
        case .native(let reader): reader.readLimit = size
        case .alternate(let reader): reader.readLimit = size
        }
    }

    /// Reads the body, calling `sink` with each slice in order, until the body ends or `sink`
    /// returns `false` (see ``ResponseReader/readBody(stallTimeout:_:)``).
    @discardableResult
    func readBody(stallTimeout: Duration, _ sink: (UnsafeRawBufferPointer) throws(DownloadError) -> Bool) throws(DownloadError) -> Bool {
        switch backend {
        case .native(let reader): try reader.readBody(stallTimeout: stallTimeout, sink)
        case .alternate(let reader): try reader.readBody(stallTimeout: stallTimeout, sink)
        }
    }

    /// Moves the exchange to another cancellation signal (cancelling that one ends it).
    func rebind(to signal: CancellationSignal) {
        switch backend {
        case .native(let reader): reader.connection.rebind(to: signal)
        case .alternate(let reader): reader.rebind(to: signal)
        }
    }

    /// Ends the exchange without reusing its connection.
    func close() {
        switch backend {
        case .native(let reader): reader.connection.close()
        case .alternate(let reader): reader.close()
        }
    }

    /// Ends the exchange after its body: the connection goes to `pool` when the whole response was
    /// read and both sides allow keep-alive, else it is closed. (Another client keeps its own
    /// connections: a `URLSession` task is cancelled if its body was not read to the end.)
    func finish(pool: ConnectionPool?) {
        switch backend {
        case .native(let reader):
            if let pool, reader.isReusable, head.allowsReuse {
                pool.put(reader.connection, for: finalURL)
            } else {
                reader.connection.close()
            }
        case .alternate(let reader):
            reader.close()
        }
    }
}
