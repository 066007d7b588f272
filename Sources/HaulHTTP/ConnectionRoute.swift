import HaulCore

/// How a connection reaches an origin, and so which requests it may carry again: the key of
/// ``ConnectionPool``.
///
/// - `direct`: to the origin itself.
/// - `forward`: to an HTTP(S) proxy that forwards `http` requests in absolute form; any `http`
///   origin may use it, so the key is the proxy with its credentials.
/// - `tunnel`: a `CONNECT` tunnel through an HTTP(S) proxy to one `https` origin; keyed by the
///   proxy, its credentials, the target and the TLS settings the origin was verified with.
/// - `socks`: through a SOCKS5 proxy to one origin (plain or TLS), keyed likewise.
package enum ConnectionRoute: Sendable, Hashable {
    case direct(HTTPURL.Origin)
    case forward(proxy: ProxyURL, proxyTLS: TLSSettings)
    case tunnel(proxy: ProxyURL, proxyTLS: TLSSettings, target: HTTPURL.Origin, tls: TLSSettings)
    case socks(proxy: ProxyURL, target: HTTPURL.Origin, tls: TLSSettings)

    /// The route for a request to `url` through `proxy` (`nil`: direct).
    ///
    /// - Parameters:
    ///   - tls: how origins are verified.
    ///   - proxyTLS: how an `https://` proxy is verified.
    package init(url: HTTPURL, proxy: ProxyURL?, tls: TLSSettings, proxyTLS: TLSSettings) {
        guard let proxy else {
            self = .direct(url.origin)
            return
        }
        // Only an https proxy's TLS settings matter to its connections.
        let proxyTLS = proxy.scheme == .https ? proxyTLS : TLSSettings()
        if proxy.scheme.isSOCKS {
            self = .socks(proxy: proxy, target: url.origin, tls: url.scheme == .https ? tls : TLSSettings())
        } else if url.scheme == .http {
            self = .forward(proxy: proxy, proxyTLS: proxyTLS)
        } else {
            self = .tunnel(proxy: proxy, proxyTLS: proxyTLS, target: url.origin, tls: tls)
        }
    }

    /// The proxy, when there is one.
    package var proxy: ProxyURL? {
        switch self {
        case .direct: nil
        case .forward(let proxy, _), .tunnel(let proxy, _, _, _), .socks(let proxy, _, _): proxy
        }
    }

    /// Whether requests go to the proxy in absolute form, with `Proxy-Authorization`.
    package var isForwarding: Bool {
        if case .forward = self { return true }
        return false
    }
}
