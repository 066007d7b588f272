import HaulCore

/// Cookies loaded from a Netscape `cookies.txt` (what curl `-b`, wget `--load-cookies` and
/// aria2 `--load-cookies` read), and the `Cookie` header each URL gets.
///
/// Each line holds seven tab-separated fields: domain, include-subdomains (`TRUE`/`FALSE`),
/// path, secure (`TRUE`/`FALSE`), expiry (seconds since 1970; 0 for a session cookie), name
/// and value (six fields: an empty value). A `#HttpOnly_` prefix on the domain is taken off;
/// other lines starting with `#`, and blank lines, are comments. Expired cookies are dropped
/// on load. Any other line is malformed, skipped and counted (never quoted: it may hold a secret).
package struct CookieJar: Sendable, Hashable {
    /// One cookie.
    package struct Cookie: Sendable, Hashable {
        /// Lowercased, without a leading dot.
        package var domain: String
        package var includesSubdomains: Bool
        package var path: String
        package var secure: Bool
        /// Seconds since 1970; 0 for a session cookie.
        package var expires: Int64
        package var name: String
        package var value: String
    }

    /// The cookies in file order.
    package private(set) var cookies: [Cookie] = []
    /// How many lines were neither cookies nor comments.
    package private(set) var malformedLines = 0

    /// Parses a cookies.txt file's text.
    ///
    /// - Parameters:
    ///   - text: the file's text (LF or CRLF lines).
    ///   - now: the current time in seconds since 1970: cookies that expired before it are dropped.
    package init(parsing text: String, now: Int64) {
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            var line = Substring(rawLine)
            if line.hasSuffix("\r") { line = line.dropLast() }
            if line.hasPrefix("#HttpOnly_") {
                line = line.dropFirst("#HttpOnly_".count)
            } else if line.hasPrefix("#") || line.allSatisfy({ $0 == " " || $0 == "\t" }) {
                continue
            }
            guard let cookie = Self.cookie(line) else {
                malformedLines += 1
                continue
            }
            if cookie.expires != 0 && cookie.expires < now { continue }
            cookies.append(cookie)
        }
    }

    private static func cookie(_ line: Substring) -> Cookie? {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 7 || fields.count == 6 else { return nil }
        var domain = fields[0].lowercased()
        while domain.hasPrefix(".") { domain.removeFirst() }
        guard !domain.isEmpty, domain.utf8.allSatisfy({ isAlphanumeric($0) || isOneOf($0, "-._:") }),
              let subdomains = flag(fields[1]), fields[2].hasPrefix("/"), let secure = flag(fields[3]),
              let expires = Int64(fields[4]), expires >= 0, !fields[5].isEmpty else { return nil }
        let name = String(fields[5]), value = fields.count == 7 ? String(fields[6]) : ""
        guard isCookieText(name, forbidding: "="), isCookieText(value, forbidding: ""), isCookieText(String(fields[2]), forbidding: "") else {
            return nil
        }
        return Cookie(domain: domain, includesSubdomains: subdomains, path: String(fields[2]), secure: secure,
                      expires: expires, name: name, value: value)
    }

    private static func flag(_ field: Substring) -> Bool? {
        switch field.uppercased() {
        case "TRUE": true
        case "FALSE": false
        default: nil
        }
    }

    /// No control characters, no `;`, and none of `forbidden`.
    private static func isCookieText(_ text: String, forbidding forbidden: String) -> Bool {
        text.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x7F && $0 != UInt8(ascii: ";") && !forbidden.utf8.contains($0) }
    }

    /// The `Cookie` header value for a request to `url`, or `nil` when no cookie matches.
    ///
    /// A cookie matches when the host is its domain (or, with include-subdomains, ends with
    /// `.` + its domain; never for an IP address), its path path-matches the URL's (RFC 6265
    /// §5.1.4), and, if it is secure, the URL is `https` or the host is loopback (`localhost`,
    /// 127.0.0.0/8, ::1), as curl allows. Longer paths come first.
    package func header(for url: HTTPURL) -> String? {
        let isIP = IPAddress(url.host) != nil
        let loopback = url.host == "localhost" || IPAddress(url.host)?.isLoopback == true
        let matching = cookies.filter { cookie in
            let domainMatches = url.host == cookie.domain
                || (cookie.includesSubdomains && !isIP && url.host.hasSuffix("." + cookie.domain))
            return domainMatches && Self.pathMatches(url.path, cookie.path)
                && (!cookie.secure || url.scheme == .https || loopback)
        }
        guard !matching.isEmpty else { return nil }
        let ordered = matching.enumerated().sorted { a, b in
            a.element.path.utf8.count != b.element.path.utf8.count
                ? a.element.path.utf8.count > b.element.path.utf8.count : a.offset < b.offset
        }
        return ordered.map { "\($0.element.name)=\($0.element.value)" }.joined(separator: "; ")
    }

    /// RFC 6265 §5.1.4: equal, or a prefix ending in `/` or followed by `/`.
    package static func pathMatches(_ requestPath: String, _ cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || requestPath.utf8.dropFirst(cookiePath.utf8.count).first == UInt8(ascii: "/")
    }
}
