import HaulCore

/// A URL's host and port (RFC 3986 sections 3.2.2 and 3.2.3), parsed by bytes: the one parser of
/// authorities, for request URLs (``HTTPURL``) and proxy URLs (``ProxyURL``), which word their
/// own errors.
package struct Authority: Equatable {
    /// The host, lowercased; an IPv6 literal without its brackets.
    package var host: String
    /// Whether the host was a bracketed IPv6 literal.
    package var isIPv6Literal: Bool
    /// The port, when one was given.
    package var port: Int?

    /// An authority of these parts.
    package init(host: String, isIPv6Literal: Bool, port: Int?) {
        self.host = host
        self.isIPv6Literal = isIPv6Literal
        self.port = port
    }

    /// Why an authority is refused.
    package enum Failure: Error, Equatable {
        /// `[` without `]`.
        case unclosedBracket
        /// Brackets around something that is not an IPv6 address (the text, lowercased).
        case notIPv6(String)
        /// Something other than `:port` after `]`.
        case junkAfterBracket
        /// No host.
        case emptyHost
        /// A byte over 0x7F in a host name (no IDNA here).
        case nonASCIIHost
        /// A byte that is not a letter, digit, `-`, `.` or `_` in a host name.
        case badHostCharacter
        /// A port that is not 1 to 65535 (or empty where an empty one is not allowed).
        case badPort

        /// The failure in words, naming the host as `host` (`the host`, `the proxy host`).
        package func reason(host: String) -> String {
            switch self {
            case .unclosedBracket: "'[' is not closed by ']'"
            case .notIPv6(let literal): "'[\(quotedForMessage(literal))]' is not a valid IPv6 address"
            case .junkAfterBracket: "unexpected characters after ']'"
            case .emptyHost: "\(host) is empty"
            case .nonASCIIHost: "non-ASCII host names are not supported (no IDNA); use the xn-- (punycode) form"
            case .badHostCharacter: "\(host) contains a character that is not allowed in a host name"
            case .badPort: "the port must be a number from 1 to 65535"
            }
        }
    }

    /// Parses `bytes`, the authority without userinfo.
    ///
    /// - Parameter emptyPortAllowed: whether `host:` stands for no port (RFC 3986 allows it in a
    ///   URL; a proxy setting that ends in `:` is refused as a likely mistake).
    package static func parse(_ bytes: ArraySlice<UInt8>, emptyPortAllowed: Bool) throws(Failure) -> Authority {
        var authority = Authority(host: "", isIPv6Literal: false, port: nil)
        var portText: ArraySlice<UInt8>?
        if bytes.first == UInt8(ascii: "[") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { throw .unclosedBracket }
            let literal = String(decoding: bytes[(bytes.startIndex + 1)..<close], as: UTF8.self).lowercased()
            guard isIPv6Address(literal) else { throw .notIPv6(literal) }
            let after = bytes[(close + 1)...]
            if let first = after.first {
                guard first == UInt8(ascii: ":") else { throw .junkAfterBracket }
                portText = after.dropFirst()
            }
            authority.host = literal
            authority.isIPv6Literal = true
        } else {
            let colon = bytes.firstIndex(of: UInt8(ascii: ":"))
            let name = bytes[..<(colon ?? bytes.endIndex)]
            portText = colon.map { bytes[($0 + 1)...] }
            guard !name.isEmpty else { throw .emptyHost }
            guard !name.contains(where: { $0 >= 0x80 }) else { throw .nonASCIIHost }
            guard name.allSatisfy({ isAlphanumeric($0) || isOneOf($0, "-._") }) else { throw .badHostCharacter }
            authority.host = String(decoding: name, as: UTF8.self).lowercased()
        }
        if let portText, !(portText.isEmpty && emptyPortAllowed) {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(isDigit),
                  let port = Int(String(decoding: portText, as: UTF8.self)), (1...65535).contains(port) else { throw .badPort }
            authority.port = port
        }
        return authority
    }

    /// Whether `text` is an IPv6 address: only hex digits, `:` and `.` (so no NUL can end the C
    /// string early), and `inet_pton` takes it.
    private static func isIPv6Address(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.allSatisfy({ Hex.value(of: $0) != nil || isOneOf($0, ":.") }) else { return false }
        return IPAddress(text)?.isIPv6 == true
    }
}
