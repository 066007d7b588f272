import HaulCore
import HaulHTTP
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

    /// What opening a request needs from its download and downloader.
    struct Context: Sendable {
        let configuration: Downloader.Configuration
        /// Haul's own client, with the download's TLS context and the downloader's connections.
        let client: HTTPClient
        let resources: DownloaderResources
        /// The proxy selector, or why the proxy settings cannot be used.
        let proxies: Result<ProxySelector, DownloadError>

        init(configuration: Downloader.Configuration, resources: DownloaderResources) {
            self.configuration = configuration
            self.resources = resources
            proxies = resources.proxies ?? configuration.proxy.selectorResult()
            let floor = configuration.lowSpeedLimit.map {
                LowSpeedMonitor.SpeedFloor(bytesPerSecond: $0.bytesPerSecond, period: $0.period)
            }
            var settings = HTTPClient.Settings(
                connectTimeout: configuration.connectTimeout, headerTimeout: configuration.headerTimeout,
                stallTimeout: configuration.stallTimeout, userAgent: configuration.userAgent,
                maximumRedirects: configuration.maximumRedirects,
                allowsInsecureRedirects: configuration.allowsInsecureRedirects, lowSpeedFloor: floor)
            settings.proxies = (try? proxies.get()) ?? .direct
            settings.proxyTLS = TLSSettings(extraCAFile: configuration.proxy.tls.extraCAFile, insecure: configuration.proxy.tls.insecure)
            settings.netrc = configuration.netrc?.netrc
            settings.cookies = configuration.cookies?.jar
            let tls = resources.tlsContexts.cache(for: TLSSettings(extraCAFile: configuration.tls.extraCAFile,
                                                                   insecure: configuration.tls.insecure))
            client = HTTPClient(settings: settings, tls: tls, proxyTLS: resources.tlsContexts.cache(for: settings.proxyTLS),
                                pool: resources.pool, threads: resources.threads)
        }

        /// Fails when the proxy settings are unusable (a bad proxy URL): before any connection.
        func checkProxies() throws(DownloadError) {
            _ = try proxies.get()
        }

        /// What another transport (`URLSession`) cannot do for a request to `url`, if anything.
        func unsupportedByAlternate(url: HTTPURL, credentials: Credentials?) -> String? {
            if (try? proxies.get())?.proxy(for: url) != nil { return "proxies" }
            if credentials != nil { return "--user credentials" }
            if configuration.netrc != nil { return "netrc credentials" }
            if configuration.cookies != nil { return "cookies" }
            return nil
        }
    }

    /// Sends a GET for `url` and follows redirects under ``RedirectPolicy`` until a final answer,
    /// over the configured transport.
    ///
    /// - Parameter buffer: the receive buffer (another client's chunks are gathered in it).
    /// - Parameter credentials: Basic credentials for `url`'s origin only.
    /// - Throws: network, TLS, protocol, proxy and redirect errors; `invalidArgument` for a bad
    ///   proxy URL; `notSupported` for settings the transport cannot honour (another transport:
    ///   proxies, credentials, netrc, cookies).
    static func open(url: HTTPURL, userHeaders: [(name: String, value: String)], credentials: Credentials? = nil,
                     range: ByteRangeRequest? = nil, ifRange: String? = nil, context: Context, cancellation: CancellationSignal,
                     buffer: UnsafeMutableRawBufferPointer) throws(DownloadError) -> HTTPExchange {
        try context.checkProxies()
        guard let make = context.configuration.transport.make else {
            let response = try mappingHTTPErrors { () throws(HTTPClientError) in
                try context.client.get(url, userHeaders: userHeaders, credentials: credentials?.basic, range: range,
                                       ifRange: ifRange, cancellation: cancellation, buffer: buffer)
            }
            return HTTPExchange(head: response.head, finalURL: response.finalURL, backend: .native(response.reader))
        }
        if let feature = context.unsupportedByAlternate(url: url, credentials: credentials) {
            throw DownloadError(.notSupported, "the urlsession engine does not support \(feature); use --engine=native")
        }
        let transport = context.resources.alternateTransport(context.configuration, make: make)
        let (reader, head, finalURL) = try transport.open(
            url: url, userHeaders: userHeaders, range: range, ifRange: ifRange, configuration: context.configuration,
            cancellation: cancellation, buffer: buffer)
        return HTTPExchange(head: head, finalURL: finalURL, backend: .alternate(reader))
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
    /// returns `false` (see ``ResponseReader/readBody(stallTimeout:into:_:)``): into
    /// `destination`'s memory when it offers some and the transport can (the native one).
    @discardableResult
    func readBody(stallTimeout: Duration, into destination: (() -> UnsafeMutableRawBufferPointer?)? = nil,
                  _ sink: (UnsafeRawBufferPointer) throws(DownloadError) -> Bool) throws(DownloadError) -> Bool {
        switch backend {
        case .native(let reader):
            // The reader knows no download errors: the sink's failure waits here while it stops.
            var failure: DownloadError?
            let ended = try mappingHTTPErrors { () throws(HTTPClientError) in
                try reader.readBody(stallTimeout: stallTimeout, into: destination) { slice in
                    do throws(DownloadError) {
                        return try sink(slice)
                    } catch {
                        failure = error
                        return false
                    }
                }
            }
            if let failure { throw failure }
            return ended
        case .alternate(let reader):
            return try reader.readBody(stallTimeout: stallTimeout, sink)
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
                pool.put(reader.connection)
            } else {
                reader.connection.close()
            }
        case .alternate(let reader):
            reader.close()
        }
    }
}
