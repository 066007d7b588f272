import HaulCore

/// The hosts that bypass proxies, as curl reads `no_proxy` and `--noproxy`.
///
/// A list separated by commas (and blanks). `*` as the whole list matches every host. A name
/// matches itself and its subdomains at a label boundary (`example.com` matches
/// `www.example.com`, never `notexample.com`), case-insensitively; a leading dot is ignored.
/// An IP address or CIDR block (`127.0.0.0/8`, `::1`, `[::1]`, `fe80::/10`) matches hosts
/// written as IP literals in the URL (names are not resolved to check). Entries carry no port.
package struct NoProxyList: Sendable, Hashable {
    private enum Entry: Hashable {
        case name(String)
        case network(IPAddress, prefixLength: Int)
    }

    private let everything: Bool
    private let entries: [Entry]

    /// Bypasses nothing.
    package static let empty = NoProxyList("")

    /// Parses a list; entries that are neither names nor addresses are ignored.
    package init(_ text: String) {
        let trimmed = text.trimmingOWS()
        everything = trimmed == "*"
        entries = trimmed.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }).compactMap(Self.entry)
    }

    private static func entry(_ raw: Substring) -> Entry? {
        var text = String(raw).lowercased()
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let inside = String(text[text.index(after: text.startIndex)..<close])
            text = inside + String(text[text.index(after: close)...])
        }
        if let slash = text.firstIndex(of: "/") {
            guard let address = IPAddress(String(text[..<slash])),
                  let bits = Int(text[text.index(after: slash)...]), bits >= 0, bits <= address.bytes.count * 8 else { return nil }
            return .network(address, prefixLength: bits)
        }
        if let address = IPAddress(text) { return .network(address, prefixLength: address.bytes.count * 8) }
        while text.hasPrefix(".") { text.removeFirst() }
        while text.hasSuffix(".") { text.removeLast() }
        return text.isEmpty ? nil : .name(text)
    }

    /// Whether `host` (lowercased, an IPv6 literal without brackets) bypasses the proxy.
    package func matches(host: String) -> Bool {
        if everything { return true }
        let address = IPAddress(host)
        var name = host.lowercased()
        if name.hasSuffix(".") { name.removeLast() }
        for entry in entries {
            switch entry {
            case .network(let network, let bits):
                if let address, address.isIn(network, prefixLength: bits) { return true }
            case .name(let suffix):
                guard address == nil else { continue }
                if name == suffix { return true }
                if name.hasSuffix(suffix), name.utf8.dropLast(suffix.utf8.count).last == UInt8(ascii: ".") { return true }
            }
        }
        return false
    }
}

/// Chooses the proxy for each URL (each redirect hop asks again), exactly as curl does.
///
/// From the environment: `http_proxy` for `http` URLs (lowercase only: a CGI request's `Proxy:`
/// header becomes `HTTP_PROXY`), `https_proxy` then `HTTPS_PROXY` for `https` URLs, and
/// `all_proxy` then `ALL_PROXY` for either when its own is not set. A variable that is set but
/// empty means no proxy. `no_proxy` then `NO_PROXY` lists the hosts that bypass it. An explicit
/// proxy (`--proxy`) replaces the environment's for both schemes; an explicit no-proxy list
/// (`--noproxy`) replaces the environment's.
package struct ProxySelector: Sendable, Hashable {
    private let forHTTP: ProxyURL?
    private let forHTTPS: ProxyURL?
    /// The hosts that bypass the proxy.
    package let noProxy: NoProxyList

    /// Every URL goes direct.
    package static let direct = ProxySelector(forHTTP: nil, forHTTPS: nil, noProxy: .empty)

    private init(forHTTP: ProxyURL?, forHTTPS: ProxyURL?, noProxy: NoProxyList) {
        self.forHTTP = forHTTP
        self.forHTTPS = forHTTPS
        self.noProxy = noProxy
    }

    /// The environment variables the selector reads.
    package static let environmentNames = ["no_proxy", "NO_PROXY", "all_proxy", "ALL_PROXY", "http_proxy",
                                           "https_proxy", "HTTPS_PROXY"]

    /// Builds the selector from the environment and the two options.
    ///
    /// - Parameters:
    ///   - environment: the process environment (variable names are case-sensitive).
    ///   - proxy: `--proxy`: `nil` reads the environment, `""` turns proxies off, else the proxy URL.
    ///   - noProxy: `--noproxy`: `nil` reads `no_proxy`/`NO_PROXY`, `""` bypasses nothing, else the list.
    /// - Throws: `.invalidProxy` when a proxy URL that could be used is malformed or has an
    ///   unsupported scheme (before any connection is made).
    package init(environment: [String: String], proxy: String?, noProxy: String?) throws(HTTPClientError) {
        let list = noProxy ?? Self.firstSet(["no_proxy", "NO_PROXY"], in: environment) ?? ""
        self.noProxy = NoProxyList(list)
        if let proxy {
            let url = proxy.isEmpty ? nil : try ProxyURL.parse(proxy)
            forHTTP = url
            forHTTPS = url
            return
        }
        let all = Self.firstSet(["all_proxy", "ALL_PROXY"], in: environment)
        let http = environment["http_proxy"] ?? all
        let https = Self.firstSet(["https_proxy", "HTTPS_PROXY"], in: environment) ?? all
        forHTTP = try http.flatMap { (text) throws(HTTPClientError) in text.isEmpty ? nil : try ProxyURL.parse(text) }
        forHTTPS = try https.flatMap { (text) throws(HTTPClientError) in text.isEmpty ? nil : try ProxyURL.parse(text) }
    }

    /// The value of the first of `names` that is set (even to an empty value).
    private static func firstSet(_ names: [String], in environment: [String: String]) -> String? {
        for name in names { if let value = environment[name] { return value } }
        return nil
    }

    /// The proxy for `url`, or `nil` to go direct.
    package func proxy(for url: HTTPURL) -> ProxyURL? {
        guard let proxy = url.scheme == .http ? forHTTP : forHTTPS else { return nil }
        return noProxy.matches(host: url.host) ? nil : proxy
    }

    /// Whether any URL could go through a proxy.
    package var usesProxies: Bool { forHTTP != nil || forHTTPS != nil }
}
