#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HaulCore

/// An absolute `http` or `https` URL, parsed strictly and normalised for use in a request.
///
/// Built from user input with ``parse(_:)`` and from `Location` headers with ``resolving(_:)``.
/// The host is lowercased, the path and query are percent-encoded (non-ASCII as UTF-8) with dot
/// segments removed, the fragment is dropped. ``description`` never shows secrets.
package struct HTTPURL: Sendable, Hashable, CustomStringConvertible {
    /// The two schemes Haul speaks.
    package enum Scheme: String, Sendable {
        case http, https

        /// 80 or 443.
        package var defaultPort: Int { self == .http ? 80 : 443 }
    }

    /// Scheme, host and port: what decides whether credentials may be sent.
    package struct Origin: Hashable, Sendable {
        package var scheme: Scheme
        package var host: String
        package var port: Int
    }

    /// `http` or `https`.
    package var scheme: Scheme
    /// The percent-decoded user name, `nil` when the URL has no userinfo.
    package var user: String?
    /// The percent-decoded password, `nil` when absent.
    package var password: String?
    /// The lowercased host; an IPv6 literal without its brackets.
    package var host: String
    /// Whether ``host`` is an IPv6 address literal.
    package var isIPv6Literal: Bool
    /// The explicit port, or 80/443.
    package var port: Int
    /// The percent-encoded path, at least `/`.
    package var path: String
    /// The percent-encoded query without its `?`, `nil` when absent.
    package var query: String?

    /// The request target: path and query.
    package var target: String { query.map { path + "?" + $0 } ?? path }

    /// The `Host` header value: the port only when it is not the scheme's default.
    package var hostHeader: String {
        if !isIPv6Literal && port == scheme.defaultPort { return host }
        var text = ""
        appendHostHeader(to: &text)
        return text
    }

    /// Appends ``hostHeader`` (built with appends: interpolation cost several times more).
    private func appendHostHeader(to text: inout String) {
        if isIPv6Literal {
            text += "["
            text += host
            text += "]"
        } else {
            text += host
        }
        if port != scheme.defaultPort {
            text += ":"
            text += String(port)
        }
    }

    /// Scheme, host and port.
    package var origin: Origin { Origin(scheme: scheme, host: host, port: port) }

    /// The URL without userinfo (but with every query value).
    package var stringWithoutUserinfo: String {
        var text = ""
        text.reserveCapacity(16 + host.utf8.count + path.utf8.count + (query?.utf8.count ?? 0))
        text += scheme == .http ? "http://" : "https://"
        appendHostHeader(to: &text)
        text += path
        if let query {
            text += "?"
            text += query
        }
        return text
    }

    /// The URL with its secrets redacted, safe for messages (see ``redactedURLString(_:aggressive:)``).
    package var description: String { redactedURLString(stringWithoutUserinfo) }

    /// Parses an absolute `http`/`https` URL.
    ///
    /// - Parameter string: the URL text.
    /// - Returns: the normalised URL.
    /// - Throws: `.unsupportedScheme` for any scheme but http(s); `.invalidURL` for an empty
    ///   host, spaces, control characters, malformed %-escapes, a bad port, a bad IPv6 literal or
    ///   a non-ASCII host.
    package static func parse(_ string: String) throws(HTTPClientError) -> HTTPURL {
        let bytes = Array(string.utf8)
        try checkCharacters(bytes, original: string)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), isSchemeName(bytes[..<colon]) else {
            throw invalid(string, "it has no scheme (expected http:// or https://)")
        }
        let schemeName = String(decoding: bytes[..<colon], as: UTF8.self).lowercased()
        guard let scheme = Scheme(rawValue: schemeName) else {
            throw HTTPClientError(.unsupportedScheme, "unsupported scheme '\(schemeName)' (only http and https)")
        }
        guard bytes[(colon + 1)...].starts(with: "//".utf8) else {
            throw invalid(string, "'\(schemeName):' must be followed by '//' and a host")
        }
        let authorityStart = colon + 3
        let authorityEnd = bytes[authorityStart...].firstIndex { isOneOf($0, "/?#") } ?? bytes.endIndex
        let pathEnd = bytes[authorityEnd...].firstIndex { isOneOf($0, "?#") } ?? bytes.endIndex
        let queryEnd = bytes[pathEnd...].firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex

        var url = HTTPURL(scheme: scheme, user: nil, password: nil, host: "", isIPv6Literal: false,
                          port: scheme.defaultPort, path: "/", query: nil)
        var authority = bytes[authorityStart..<authorityEnd]
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            let userinfo = authority[..<at]
            authority = authority[(at + 1)...]
            let separator = userinfo.firstIndex(of: UInt8(ascii: ":"))
            let user = decodedText(userinfo[..<(separator ?? userinfo.endIndex)])
            let password = separator.flatMap { decodedText(userinfo[($0 + 1)...]) }
            guard user != nil, (separator == nil) == (password == nil) else {
                throw invalid(string, "the user name or password has a malformed %-escape")
            }
            if !userinfo.isEmpty {
                url.user = user
                url.password = password
            }
        }
        try parseHostAndPort(authority, into: &url, original: string)

        let rawPath = bytes[authorityEnd..<pathEnd]
        guard let path = percentEncoded(rawPath, allowingQuestionMark: false) else {
            throw invalid(string, "the path has a malformed %-escape")
        }
        // Escaping adds or removes no `.` or `/`: the dot segments are those of the raw bytes.
        url.path = path.isEmpty ? "/" : hasDotSegment(rawPath) ? removingDotSegments(path) : path
        if pathEnd < queryEnd {  // bytes[pathEnd] == "?"
            guard let query = percentEncoded(bytes[(pathEnd + 1)..<queryEnd], allowingQuestionMark: true) else {
                throw invalid(string, "the query has a malformed %-escape")
            }
            url.query = query
        }
        return url
    }

    /// Rejects spaces, control characters and DEL anywhere in the text.
    package static func checkCharacters(_ bytes: [UInt8], original: String) throws(HTTPClientError) {
        guard !bytes.isEmpty else { throw invalid(original, "it is empty") }
        if let bad = bytes.first(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw invalid(original, bad == 0x20 ? "it contains a space (write it as %20)" : "it contains a control character")
        }
    }

    private static func parseHostAndPort(_ bytes: ArraySlice<UInt8>, into url: inout HTTPURL, original: String) throws(HTTPClientError) {
        let authority: Authority
        do throws(Authority.Failure) {
            authority = try Authority.parse(bytes, emptyPortAllowed: true)
        } catch {
            throw invalid(original, error.reason(host: "the host"))
        }
        url.host = authority.host
        url.isIPv6Literal = authority.isIPv6Literal
        if let port = authority.port { url.port = port }
    }

    /// The error for an unusable URL; quotes it redacted and with control characters escaped.
    package static func invalid(_ string: String, _ reason: String) -> HTTPClientError {
        HTTPClientError(.invalidURL, "invalid URL '\(quotedForMessage(string))': \(reason)")
    }
}

// MARK: - Character classes and percent-encoding

/// A URL quoted for a one-line message: redacted, control characters as %XX, at most ~200 bytes.
package func quotedForMessage(_ string: String) -> String {
    var out: [UInt8] = []
    for byte in redactedURLString(string, aggressive: true).utf8 {
        if out.count >= 200 {
            out.append(contentsOf: "...".utf8)
            break
        }
        if byte < 0x20 || byte == 0x7F {
            out.append(contentsOf: percentEscape(byte))
        } else {
            out.append(byte)
        }
    }
    return String(decoding: out, as: UTF8.self)
}

private let hexDigits = Array("0123456789ABCDEF".utf8)

private func percentEscape(_ byte: UInt8) -> [UInt8] {
    [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
}

package func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

package func isAlphanumeric(_ byte: UInt8) -> Bool {
    let lower = byte | 0x20
    return isDigit(byte) || (lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "z"))
}

package func isOneOf(_ byte: UInt8, _ set: StaticString) -> Bool {
    set.withUTF8Buffer { $0.contains(byte) }
}

/// `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )` (RFC 3986 §3.1).
package func isSchemeName(_ bytes: ArraySlice<UInt8>) -> Bool {
    guard let first = bytes.first, isAlphanumeric(first), !isDigit(first) else { return false }
    return bytes.allSatisfy { isAlphanumeric($0) || isOneOf($0, "+-.") }
}

/// Keeps valid escapes and the characters RFC 3986 allows in a path (or query); encodes the rest.
///
/// - Returns: the encoded text, or `nil` when a `%` is not followed by two hex digits.
private func percentEncoded(_ bytes: ArraySlice<UInt8>, allowingQuestionMark: Bool) -> String? {
    // The usual path or query needs no escape: taken as it is.
    if bytes.allSatisfy({ isPathCharacter($0) || (allowingQuestionMark && $0 == UInt8(ascii: "?")) }) {
        return String(decoding: bytes, as: UTF8.self)
    }
    var result: [UInt8] = []
    result.reserveCapacity(bytes.count)
    var index = bytes.startIndex
    while index < bytes.endIndex {
        let byte = bytes[index]
        if byte == UInt8(ascii: "%") {
            guard index + 2 < bytes.endIndex, Hex.value(of: bytes[index + 1]) != nil, Hex.value(of: bytes[index + 2]) != nil else {
                return nil
            }
            result.append(contentsOf: bytes[index...(index + 2)])
            index += 3
            continue
        }
        if isPathCharacter(byte) || (allowingQuestionMark && byte == UInt8(ascii: "?")) {
            result.append(byte)
        } else {
            result.append(contentsOf: percentEscape(byte))
        }
        index += 1
    }
    return String(decoding: result, as: UTF8.self)
}

/// What RFC 3986 allows unescaped in a path: unreserved, sub-delims, `:`, `@` and `/`
/// (a `switch` rather than a search of the list: this runs for every byte of every URL).
package func isPathCharacter(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "!"), UInt8(ascii: "$"),
         UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"),
         UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
        return true
    default:
        return false
    }
}

/// RFC 3986 §5.2.4 `remove_dot_segments`.
package func removingDotSegments(_ path: String) -> String {
    guard hasDotSegment(path) else { return path }   // the usual case: the loop would copy it unchanged
    var input = Substring(path)
    var output = ""
    func dropLastSegment() {
        if let slash = output.lastIndex(of: "/") {
            output.removeSubrange(slash...)
        } else {
            output = ""
        }
    }
    while !input.isEmpty {
        if input.hasPrefix("../") {
            input.removeFirst(3)
        } else if input.hasPrefix("./") {
            input.removeFirst(2)
        } else if input.hasPrefix("/./") {
            input.removeFirst(2)
        } else if input == "/." {
            input = "/"
        } else if input.hasPrefix("/../") {
            input.removeFirst(3)
            dropLastSegment()
        } else if input == "/.." {
            input = "/"
            dropLastSegment()
        } else if input == "." || input == ".." {
            input = ""
        } else {
            let searchStart = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
            let end = input[searchStart...].firstIndex(of: "/") ?? input.endIndex
            output += input[..<end]
            input = input[end...]
        }
    }
    return output
}

// MARK: - Resolving a reference (RFC 3986 §5.2)

extension HTTPURL {
    /// Resolves a `Location` value (absolute or relative) against this URL, as RFC 3986 §5.2 says.
    ///
    /// Handles absolute URLs, scheme-relative (`//host/path`), absolute-path, relative-path (dot
    /// segments removed), query-only and empty references; the fragment is dropped. Userinfo
    /// written inside the reference is dropped; a reference without an authority keeps this URL's
    /// userinfo. `http:g` (same scheme, no authority) is resolved like `g`, as browsers do.
    ///
    /// - Parameter reference: the reference text.
    /// - Returns: the absolute URL.
    /// - Throws: `.redirectRefused` when the reference has a scheme other than http(s)
    ///   (`file:`, `ftp:`, `data:`...); `.invalidURL` when it is malformed.
    package func resolving(_ reference: String) throws(HTTPClientError) -> HTTPURL {
        let bytes = Array(reference.utf8)
        if bytes.isEmpty { return self }
        try Self.checkCharacters(bytes, original: reference)

        // RFC 3986 Appendix B: scheme, authority, path, query; the fragment is ignored.
        var index = 0
        if let delimiter = bytes.firstIndex(where: { isOneOf($0, ":/?#") }), bytes[delimiter] == UInt8(ascii: ":") {
            let name = bytes[..<delimiter]
            guard isSchemeName(name) else { throw Self.invalid(reference, "it has a malformed scheme") }
            let lowered = String(decoding: name, as: UTF8.self).lowercased()
            guard let scheme = Scheme(rawValue: lowered) else {
                let article = isOneOf(name.first ?? 0, "aeiouAEIOU") ? "an" : "a"
                throw HTTPClientError(.redirectRefused, "redirect to \(article) \(lowered): URL refused")
            }
            let rest = bytes[(delimiter + 1)...]
            if rest.starts(with: "//".utf8) {
                return try Self.parse(reference).withoutUserinfo()
            }
            guard scheme == self.scheme else {
                throw Self.invalid(reference, "'\(lowered):' must be followed by '//' and a host")
            }
            index = delimiter + 1  // "http:g" is resolved like "g"
        }
        let rest = bytes[index...]
        if rest.starts(with: "//".utf8) {
            return try Self.parse(scheme.rawValue + ":" + String(decoding: rest, as: UTF8.self)).withoutUserinfo()
        }
        let pathEnd = rest.firstIndex { isOneOf($0, "?#") } ?? rest.endIndex
        let queryEnd = rest[pathEnd...].firstIndex(of: UInt8(ascii: "#")) ?? rest.endIndex
        let referencePath = String(decoding: rest[..<pathEnd], as: UTF8.self)
        let referenceQuery: String? = pathEnd < queryEnd && rest[pathEnd] == UInt8(ascii: "?")
            ? String(decoding: rest[(pathEnd + 1)..<queryEnd], as: UTF8.self) : nil

        let (targetPath, targetQuery) = merged(referencePath: referencePath, referenceQuery: referenceQuery)
        var text = "\(scheme.rawValue)://\(hostHeader)\(targetPath)"
        if let targetQuery { text += "?" + targetQuery }
        var resolved = try Self.parse(text)
        resolved.user = user
        resolved.password = password
        return resolved
    }

    /// The path and query of a reference without scheme or authority, against this URL's
    /// (RFC 3986 §5.2.2): an empty path keeps this path (and this query unless the reference has
    /// one), an absolute path replaces it, a relative one replaces its last segment. Dot
    /// segments are left to the parse of the result.
    private func merged(referencePath: String, referenceQuery: String?) -> (path: String, query: String?) {
        if referencePath.isEmpty { return (path, referenceQuery ?? query) }
        if referencePath.hasPrefix("/") { return (referencePath, referenceQuery) }
        let directory = path[...(path.lastIndex(of: "/") ?? path.startIndex)]
        return (directory + referencePath, referenceQuery)
    }

    /// This URL without user name and password.
    package func withoutUserinfo() -> HTTPURL {
        var copy = self
        copy.user = nil
        copy.password = nil
        return copy
    }
}

/// Whether a segment of `path` (between slashes) is `.` or `..`.
private func hasDotSegment(_ path: String) -> Bool {
    path.utf8.withContiguousStorageIfAvailable { hasDotSegment($0) } ?? hasDotSegment(path.utf8)
}

/// Whether a segment of `path` (between slashes) is `.` or `..`.
package func hasDotSegment(_ path: some Sequence<UInt8>) -> Bool {
    var length = 0
    var onlyDots = true
    for byte in path {
        if byte == UInt8(ascii: "/") {
            if onlyDots && (length == 1 || length == 2) { return true }
            length = 0
            onlyDots = true
        } else {
            length += 1
            if byte != UInt8(ascii: ".") { onlyDots = false }
        }
    }
    return onlyDots && (length == 1 || length == 2)
}

/// The text `bytes` percent-decode to; `nil` when an escape is malformed.
func decodedText(_ bytes: ArraySlice<UInt8>) -> String? {
    PercentDecoding.strict(bytes).map { String(decoding: $0, as: UTF8.self) }
}
