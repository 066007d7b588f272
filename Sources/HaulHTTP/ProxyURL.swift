import HaulCore

/// A proxy as the user names it: `[scheme://][user[:password]@]host[:port][/]`.
///
/// The schemes are curl's: `http` (the default when none is given), `https` (TLS to the proxy),
/// `socks5` (the origin's name is resolved here and its address sent) and `socks5h` (the name
/// is sent and the proxy resolves it). Without a port, 443 for `https` and 1080 for the others,
/// as curl documents. The userinfo is percent-decoded and never shown: ``description`` is
/// `scheme://host:port`.
package struct ProxyURL: Sendable, Hashable, CustomStringConvertible {
    /// How Haul talks to the proxy.
    package enum Scheme: String, Sendable, Hashable, CaseIterable {
        case http, https, socks5, socks5h

        /// 443 for `https`, 1080 for the others.
        package var defaultPort: Int { self == .https ? 443 : 1080 }
        /// Whether this is a SOCKS proxy.
        package var isSOCKS: Bool { self == .socks5 || self == .socks5h }
    }

    package var scheme: Scheme
    /// The lowercased host; an IPv6 literal without brackets.
    package var host: String
    package var isIPv6Literal: Bool
    package var port: Int
    /// The percent-decoded user name, `nil` without userinfo.
    package var user: String?
    /// The percent-decoded password, `nil` when absent.
    package var password: String?

    package init(scheme: Scheme, host: String, isIPv6Literal: Bool = false, port: Int? = nil, user: String? = nil,
                 password: String? = nil) {
        self.scheme = scheme
        self.host = host
        self.isIPv6Literal = isIPv6Literal
        self.port = port ?? scheme.defaultPort
        self.user = user
        self.password = password
    }

    /// `host:port`, an IPv6 literal in brackets.
    package var hostAndPort: String { isIPv6Literal ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `scheme://host:port`: no credentials.
    package var description: String { "\(scheme.rawValue)://\(hostAndPort)" }

    /// The `Proxy-Authorization` value (`Basic ...`) when the URL carries a user.
    package var proxyAuthorization: String? {
        guard let user else { return nil }
        return "Basic " + Base64.encode(Array("\(user):\(password ?? "")".utf8))
    }

    /// Parses a proxy URL.
    ///
    /// - Parameter text: the URL, with or without a scheme.
    /// - Returns: the proxy.
    /// - Throws: `.invalidProxy` for a scheme other than the four, a missing host, a port that is
    ///   not 1-65535, a malformed %-escape, or a control character (CR, LF...) anywhere. The
    ///   message never repeats the userinfo.
    package static func parse(_ text: String) throws(HTTPClientError) -> ProxyURL {
        let bytes = Array(text.utf8)
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw invalid("it contains a control character (CR, LF...)")
        }
        if bytes.contains(0x20) { throw invalid("it contains a space") }
        var rest = bytes[...]
        var scheme = Scheme.http
        if let separator = findSeparator(bytes) {
            let name = String(decoding: bytes[..<separator], as: UTF8.self).lowercased()
            guard let known = Scheme(rawValue: name) else {
                throw invalid("unsupported proxy scheme '\(quotedForMessage(name))' (http, https, socks5 or socks5h)")
            }
            scheme = known
            rest = bytes[(separator + 3)...]
        }
        let authorityEnd = rest.firstIndex { isOneOf($0, "/?#") } ?? rest.endIndex
        guard rest[authorityEnd...].allSatisfy({ $0 == UInt8(ascii: "/") }) else {
            throw invalid("a proxy URL has no path, query or fragment")
        }
        var authority = rest[..<authorityEnd]
        var proxy = ProxyURL(scheme: scheme, host: "")
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            let userinfo = authority[..<at]
            authority = authority[(at + 1)...]
            let colon = userinfo.firstIndex(of: UInt8(ascii: ":"))
            guard let user = decodedText(userinfo[..<(colon ?? userinfo.endIndex)]) else {
                throw invalid("the user name has a malformed %-escape")
            }
            proxy.user = user
            if let colon {
                guard let password = decodedText(userinfo[(colon + 1)...]) else {
                    throw invalid("the password has a malformed %-escape")
                }
                proxy.password = password
            }
        }
        try parseHostAndPort(authority, into: &proxy)
        return proxy
    }

    /// The index of `://` when the text starts with a scheme name.
    private static func findSeparator(_ bytes: [UInt8]) -> Int? {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8),
              isSchemeName(bytes[..<colon]) else { return nil }
        return colon
    }

    private static func parseHostAndPort(_ bytes: ArraySlice<UInt8>, into proxy: inout ProxyURL) throws(HTTPClientError) {
        let authority: Authority
        do throws(Authority.Failure) {
            authority = try Authority.parse(bytes, emptyPortAllowed: false)
        } catch {
            throw invalid(error.reason(host: "the proxy host"))
        }
        proxy.host = authority.host
        proxy.isIPv6Literal = authority.isIPv6Literal
        if let port = authority.port { proxy.port = port }
    }

    private static func invalid(_ reason: String) -> HTTPClientError {
        HTTPClientError(.invalidProxy, "invalid proxy URL: \(reason)")
    }
}

