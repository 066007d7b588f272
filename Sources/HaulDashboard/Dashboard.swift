/// The web dashboard `haul daemon` serves at `/`: static HTML, CSS and JavaScript modules,
/// embedded in the binary, that talk to the daemon's JSON-RPC at `/jsonrpc` over a WebSocket.
///
/// The daemon's HTTP server asks ``response(method:path:ifNoneMatch:)`` first for every request
/// that passed its Host and Origin checks; a `nil` answer means the path is not the dashboard's
/// (`/jsonrpc`, or nothing at all) and the server goes on with its own routes. No path from a
/// request reaches the file system: only the exact paths of the embedded files match.
///
/// The files live in `Sources/HaulDashboard/Assets/`; SwiftPM embeds them in the code at build
/// time (`.embedInCode`), and ``assets`` names each by its request path.
public enum Dashboard {
    /// The policy every dashboard response carries: only the daemon's own origin, for scripts,
    /// styles, images and connections (its WebSocket included); no inline script or style, no
    /// framing, no `<base>`, no form submission.
    public static let contentSecurityPolicy =
        "default-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

    /// The request paths of the embedded files, sorted; `/` serves `/index.html`.
    public static var paths: [String] {
        (["/"] + assets.keys).sorted()
    }

    /// The dashboard's answer to one request, or `nil` when the path is not the dashboard's.
    ///
    /// Only the exact path of an embedded file matches (`/` and `/index.html` are the page;
    /// `/app.js`, `/style.css`, ... its parts); a query string is ignored, and nothing is decoded,
    /// so `/%2e%2e/`, `/app.js/`, `//app.js` and `/../app.js` are not the dashboard's.
    /// `GET` answers 200 with the body; `HEAD` the same head with an empty body; any other
    /// method 405 with `Allow: GET, HEAD`. A matching `If-None-Match` (weak comparison, as RFC 9110
    /// says for that header; `*` matches) answers 304 without a body.
    ///
    /// - Parameters:
    ///   - method: the request method, as sent (methods are case-sensitive: `get` is not `GET`).
    ///   - path: the request target of the request line, origin form (`/app.js?v=2`).
    ///   - ifNoneMatch: the value of the request's `If-None-Match` header, if any (several
    ///     fields joined with `, `).
    /// - Returns: the complete response: write its status line, its headers as given (they
    ///   include `Content-Length`), then its body; or `nil` for a path that is not the dashboard's.
    public static func response(method: String, path: String, ifNoneMatch: String?) -> DashboardResponse? {
        guard let asset = asset(at: path) else { return nil }
        guard method == "GET" || method == "HEAD" else {
            let body = Array("Method Not Allowed\n".utf8)
            return DashboardResponse(status: 405, headers: securityHeaders + [
                ("Allow", "GET, HEAD"),
                ("Content-Type", "text/plain; charset=utf-8"),
                ("Content-Length", String(body.count)),
                ("Cache-Control", "no-store"),
            ], body: body)
        }
        let cacheHeaders = [("ETag", asset.entityTag), ("Cache-Control", "no-cache")]
        if let ifNoneMatch, matches(ifNoneMatch, entityTag: asset.entityTag) {
            return DashboardResponse(status: 304, headers: securityHeaders + cacheHeaders, body: [])
        }
        let body = asset.body
        return DashboardResponse(status: 200, headers: securityHeaders + cacheHeaders + [
            ("Content-Type", asset.contentType),
            ("Content-Length", String(body.count)),
        ], body: method == "HEAD" ? [] : body)
    }

    /// The address to open the dashboard with, the secret in its fragment (which a browser never
    /// sends to a server); the page reads it, keeps it for the tab and clears it from the address bar.
    ///
    /// - Parameters:
    ///   - host: the listen address (`127.0.0.1`, `::1`, `localhost`); an IPv6 literal is bracketed.
    ///   - port: the listen port.
    ///   - secret: the RPC secret; `nil` or empty gives the address without a fragment.
    /// - Returns: e.g. `http://127.0.0.1:6800/#token=s3cret`, the secret percent-encoded.
    public static func address(host: String, port: Int, secret: String?) -> String {
        let authority = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]:\(port)" : "\(host):\(port)"
        guard let secret, !secret.isEmpty else { return "http://\(authority)/" }
        return "http://\(authority)/#token=\(percentEncoded(secret))"
    }

    /// The headers of every response: the policy above, no MIME sniffing, no referrer.
    static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
    ]

    /// The embedded file a request target names, if any.
    static func asset(at target: String) -> Asset? {
        let path = target.prefix { $0 != "?" && $0 != "#" }
        return assets[path == "/" ? "/index.html" : String(path)]
    }

    /// Whether an `If-None-Match` value names `entityTag`: `*`, or a list holding the same opaque
    /// tag, weak (`W/`) or not.
    static func matches(_ ifNoneMatch: String, entityTag: String) -> Bool {
        ifNoneMatch.split(separator: ",").contains { candidate in
            var tag = candidate.drop { $0 == " " || $0 == "\t" }
            while let last = tag.last, last == " " || last == "\t" { tag = tag.dropLast() }
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = tag.dropFirst(2) }
            return tag == entityTag
        }
    }

    /// `text` with everything but unreserved characters (RFC 3986) percent-encoded as UTF-8.
    static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var encoded: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.append(byte)
            default:
                encoded += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }
}

/// An HTTP response of the dashboard, complete: the daemon writes it as it is.
public struct DashboardResponse: Sendable {
    /// The status code: 200, 304 or 405.
    public var status: Int
    /// The header fields in order, `Content-Length` included (the size of the file for `HEAD`).
    public var headers: [(name: String, value: String)]
    /// The body; empty for `HEAD` and 304.
    public var body: [UInt8]

    /// The reason phrase of ``status``, for the status line.
    public var reason: String {
        switch status {
        case 200: "OK"
        case 304: "Not Modified"
        case 405: "Method Not Allowed"
        default: "Unknown"
        }
    }

    /// The value of the first header field named `name` (compared without regard to case).
    ///
    /// - Parameter name: a field name, such as `Content-Type`.
    /// - Returns: its value, or `nil` when the response has no such field.
    public func value(forHeader name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// A response from its parts.
    ///
    /// - Parameters:
    ///   - status: the status code.
    ///   - headers: the header fields in order.
    ///   - body: the body bytes.
    public init(status: Int, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.headers = headers.map { (name: $0.0, value: $0.1) }
        self.body = body
    }
}
