import Synchronization
/// The HTTP proxy: `CONNECT` tunnels and forwarded absolute-form requests.
extension ProxyCore {
    func serveHTTP(_ client: ProxyStream) {
        guard let head = client.readHead(), let request = RequestHeadParser.parse(head) else {
            client.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        }
        state.withLock { $0.requests.append(request) }
        if case .alwaysRequireAuthentication(let scheme) = configuration.behaviour {
            return refuse(client, scheme: scheme)
        }
        if configuration.user != nil && request.header("proxy-authorization") != expectedAuthorization {
            return refuse(client, scheme: "Basic")
        }
        if request.method == "CONNECT" {
            connect(client, request)
        } else {
            forward(client, request)
        }
    }

    /// `Basic base64(user:password)` of the configured credentials.
    private var expectedAuthorization: String {
        "Basic " + base64Encode(Array("\(configuration.user ?? ""):\(configuration.password ?? "")".utf8))
    }

    private func refuse(_ client: ProxyStream, scheme: String) {
        let body = "proxy authentication required\n"
        client.write("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: \(scheme) realm=\"haul-test\"\r\n"
                     + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
    }

    private func connect(_ client: ProxyStream, _ request: RecordedRequest) {
        switch configuration.behaviour {
        case .unauthorizedOnConnect:
            client.write("HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"x\"\r\nContent-Length: 0\r\n\r\n")
            return
        case .connectRefusedWithBody(let count):
            client.write("HTTP/1.1 502 Bad Gateway\r\nContent-Length: \(count)\r\nContent-Type: application/octet-stream\r\n\r\n")
            client.write([UInt8](repeating: UInt8(ascii: "x"), count: count))
            return
        default:
            break
        }
        guard let (host, port) = Self.hostAndPort(request.target),
              let upstream = connectUpstream(host: host, port: port) else {
            client.write("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        }
        defer { upstream.close() }
        if configuration.behaviour == .connectAnsweredWithBody {
            client.write("HTTP/1.1 200 Connection established\r\nContent-Length: 10\r\n\r\nxxxxxxxxxx")
        } else {
            client.write("HTTP/1.1 200 Connection established\r\n\r\n")
        }
        relay(client, upstream)
    }

    /// Sends the request on in origin form (without the proxy's own fields), then relays the
    /// answer until the origin closes; one request per connection.
    private func forward(_ client: ProxyStream, _ request: RecordedRequest) {
        guard request.target.lowercased().hasPrefix("http://") else {
            client.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        }
        let rest = request.target.dropFirst("http://".count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" }
        let path = rest.dropFirst(authority.count)
        guard let (host, port) = Self.hostAndPort(String(authority), defaultPort: 80),
              let upstream = connectUpstream(host: host, port: port) else {
            client.write("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            return
        }
        defer { upstream.close() }
        var head = "\(request.method) \(path.isEmpty ? "/" : String(path)) HTTP/1.1\r\n"
        for field in request.headers {
            let name = field.name.lowercased()
            if name == "proxy-authorization" || name == "proxy-connection" || name == "connection" { continue }
            if configuration.behaviour == .stripsRange && (name == "range" || name == "if-range") { continue }
            head += "\(field.name): \(field.value)\r\n"
        }
        head += "Connection: close\r\n\r\n"
        guard upstream.write(head) else { return }
        while true {
            let bytes = upstream.read(upTo: 256 * 1024)
            if bytes.isEmpty || !client.write(bytes) { return }
        }
    }

    /// `host:port` (an IPv6 literal in brackets) split; `nil` when malformed.
    static func hostAndPort(_ text: String, defaultPort: Int? = nil) -> (String, Int)? {
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.isEmpty, let defaultPort { return (host, defaultPort) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()) else { return nil }
            return (host, port)
        }
        guard let colon = text.lastIndex(of: ":") else { return defaultPort.map { (text, $0) } }
        guard let port = Int(text[text.index(after: colon)...]) else { return nil }
        return (String(text[..<colon]), port)
    }
}

/// Standard base64 with padding (the proxy's own, for `Proxy-Authorization`).
func base64Encode(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var out: [UInt8] = []
    var index = 0
    while index < bytes.count {
        let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
        let value = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * UInt32($1.offset)) }
        for position in 0..<4 {
            out.append(position <= chunk.count ? alphabet[Int(value >> (18 - 6 * UInt32(position)) & 63)] : UInt8(ascii: "="))
        }
        index += 3
    }
    return String(decoding: out, as: UTF8.self)
}
