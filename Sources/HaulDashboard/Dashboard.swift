import HaulDaemon

/// The web dashboard `haul daemon` serves at `/`: static HTML, CSS and JavaScript modules,
/// embedded in the binary, that talk to the daemon's JSON-RPC at `/jsonrpc` over a WebSocket.
///
/// A ``PageProvider``: `haul daemon` puts one in ``DaemonServer/Configuration/pages``, and the
/// daemon's HTTP server asks it for every `GET` and `HEAD` outside `/jsonrpc` that passed its
/// Host and Origin checks; a `nil` answer means the path is not the dashboard's and the server
/// goes on (to the next provider, or 404). No path from a request reaches the file system: only
/// the exact paths of the embedded files match.
///
/// The files live in `Sources/HaulDashboard/Assets/`; SwiftPM embeds them in the code at build
/// time (`.embedInCode`), and ``assets`` names each by its request path.
public struct Dashboard: PageProvider {
    /// The policy every dashboard response carries: only the daemon's own origin, for scripts,
    /// styles, images and connections (its WebSocket included); no inline script or style, no
    /// framing, no `<base>`, no form submission.
    public static let contentSecurityPolicy =
        "default-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

    /// The request paths of the embedded files, sorted; `/` serves `/index.html`.
    public static var paths: [String] {
        (["/"] + assets.keys).sorted()
    }

    /// The dashboard, to hand to the daemon's server as one of its pages.
    public init() {}

    /// The dashboard's answer to one request the daemon's server passes on, or `nil` when the
    /// path is not the dashboard's: ``response(method:path:ifNoneMatch:)`` with the request's
    /// `If-None-Match` fields joined.
    ///
    /// - Parameter head: the request's head, as the daemon parsed it.
    /// - Returns: the complete response, or `nil`.
    public func response(to head: HTTPRequestHead) -> PageResponse? {
        let tags = head.values("If-None-Match")
        return Self.response(method: head.method, path: head.target, ifNoneMatch: tags.isEmpty ? nil : tags.joined(separator: ", "))
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
    public static func response(method: String, path: String, ifNoneMatch: String?) -> PageResponse? {
        guard let asset = asset(at: path) else { return nil }
        guard method == "GET" || method == "HEAD" else {
            let body = Array("Method Not Allowed\n".utf8)
            return PageResponse(status: 405, fields: securityHeaders + [
                .init("Allow", "GET, HEAD"),
                .init("Content-Type", "text/plain; charset=utf-8"),
                .init("Content-Length", String(body.count)),
                .init("Cache-Control", "no-store"),
            ], body: body)
        }
        let cacheHeaders = [HTTPResponse.HTTPField("ETag", asset.entityTag), .init("Cache-Control", "no-cache")]
        if let ifNoneMatch, matches(ifNoneMatch, entityTag: asset.entityTag) {
            return PageResponse(status: 304, fields: securityHeaders + cacheHeaders, body: [])
        }
        let body = asset.body
        return PageResponse(status: 200, fields: securityHeaders + cacheHeaders + [
            .init("Content-Type", asset.contentType),
            .init("Content-Length", String(body.count)),
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
    static let securityHeaders: [HTTPResponse.HTTPField] = [
        .init("Content-Security-Policy", contentSecurityPolicy),
        .init("X-Content-Type-Options", "nosniff"),
        .init("Referrer-Policy", "no-referrer"),
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
