/// The daemon's security rules for one request, as a pure function of its head: which requests
/// reach the RPC, the WebSocket or the static files, and which are refused with what status.
///
/// In order:
/// 1. `Host` must name a loopback address (`127.0.0.0/8`, `::1`, `localhost`) or the listen
///    address (with a wildcard listen address, any IP literal): a name that merely resolves
///    here (DNS rebinding) is refused with 403.
/// 2. `Origin`, when present, must be the daemon's own (`http://` a loopback name or the listen
///    address, with the daemon's port) or one of the allowed origins: 403 otherwise. This
///    holds for POST and for the WebSocket handshake alike.
/// 3. A body may not exceed ``maximumBodyBytes`` (413).
/// 4. `/jsonrpc` takes `POST` (the RPC), `GET` with `Upgrade: websocket` (the WebSocket) and
///    `OPTIONS` (a CORS preflight); a plain `GET` is refused (405): no JSONP, no method call in
///    a query string. Any other path takes `GET` (the static files) and nothing else (405).
public struct RequestPolicy: Sendable {
    /// The address the daemon listens on.
    public var listen: ListenAddress
    /// Origins allowed besides the daemon's own (`--allow-origin`), lowercased, without a
    /// trailing slash.
    public var allowedOrigins: Set<String>
    /// The largest request body accepted.
    public var maximumBodyBytes: Int

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - listen: the listen address (its port is the actual one).
    ///   - allowedOrigins: more origins to accept, such as `https://dashboard.example`.
    ///   - maximumBodyBytes: the largest body accepted (default 2 MiB).
    public init(listen: ListenAddress, allowedOrigins: [String] = [], maximumBodyBytes: Int = 2 << 20) {
        self.listen = listen
        self.allowedOrigins = Set(allowedOrigins.map(Self.normalizedOrigin))
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// Where a request goes.
    public enum Route: Sendable, Equatable {
        /// A JSON-RPC call over `POST /jsonrpc`.
        case rpc
        /// The WebSocket handshake at `/jsonrpc`.
        case webSocket
        /// A CORS preflight (`OPTIONS`).
        case preflight
        /// A static file (`GET`), by path.
        case staticFile(String)
        /// Refused: the status and why.
        case refused(status: Int, reason: String)
    }

    /// Applies the rules to a request head.
    ///
    /// - Parameter head: the parsed head.
    /// - Returns: where the request goes, or why it is refused.
    public func route(_ head: HTTPRequestHead) -> Route {
        guard let host = head["Host"], acceptsHost(host) else {
            return .refused(status: 403, reason: "the Host is neither a loopback address nor the listen address")
        }
        if let origin = head["Origin"], !acceptsOrigin(origin) {
            return .refused(status: 403, reason: "the Origin is not allowed")
        }
        guard let length = try? HTTPRequestParser.contentLength(head) else {
            return .refused(status: 400, reason: "invalid Content-Length")
        }
        if length > maximumBodyBytes { return .refused(status: 413, reason: "the body is over \(maximumBodyBytes) bytes") }
        let path = String(head.path)
        guard path == "/jsonrpc" else {
            return head.method == "GET" || head.method == "HEAD"
                ? .staticFile(path) : .refused(status: 405, reason: "only GET here")
        }
        switch head.method {
        case "POST": return .rpc
        case "OPTIONS": return .preflight
        case "GET" where WebSocketHandshake.isUpgrade(head): return .webSocket
        case "GET": return .refused(status: 405, reason: "JSON-RPC over GET (JSONP) is not served; use POST or a WebSocket")
        default: return .refused(status: 405, reason: "use POST or a WebSocket")
        }
    }

    /// Whether `Host` (with or without a port) names a loopback address or the listen address.
    public func acceptsHost(_ value: String) -> Bool {
        guard let (host, _) = Self.split(hostAndPort: value) else { return false }
        if ListenAddress.isLoopback(host) || host == listen.host.lowercasedASCII() { return true }
        return listen.isWildcard && ListenAddress.isIPLiteral(host)
    }

    /// Whether `Origin` is the daemon's own or an allowed one.
    public func acceptsOrigin(_ value: String) -> Bool {
        let origin = Self.normalizedOrigin(value)
        if allowedOrigins.contains(origin) { return true }
        guard origin.hasPrefix("http://"), let (host, port) = Self.split(hostAndPort: String(origin.dropFirst(7))),
              port == listen.port else { return false }
        return ListenAddress.isLoopback(host) || host == listen.host.lowercasedASCII()
    }

    /// The headers that let an allowed origin read a response (none without an `Origin`).
    public func corsFields(for head: HTTPRequestHead) -> [HTTPResponse.HTTPField] {
        guard let origin = head["Origin"], acceptsOrigin(origin) else { return [] }
        return [.init("Access-Control-Allow-Origin", origin), .init("Vary", "Origin")]
    }

    /// `host` and `port` of `host[:port]` or `[v6][:port]`, the host lowercased; `nil` when malformed.
    static func split(hostAndPort value: String) -> (String, Int?)? {
        let text = value.lowercasedASCII()
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty { return (host, nil) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (0...65535).contains(port) else { return nil }
            return (host, port)
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard !text.isEmpty, parts.count <= 2, !parts[0].isEmpty else { return nil }
        if parts.count == 1 { return (String(parts[0]), nil) }
        guard let port = Int(parts[1]), (0...65535).contains(port) else { return nil }
        return (String(parts[0]), port)
    }

    static func normalizedOrigin(_ origin: String) -> String {
        var text = origin.trimmingSpaces().lowercasedASCII()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
