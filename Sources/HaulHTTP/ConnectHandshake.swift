import HaulCore

/// Opens a tunnel through an HTTP proxy with `CONNECT host:port` (RFC 9110 §9.3.6): a pure
/// state machine that is handed the proxy's bytes and says what to do.
///
/// The request carries only `Host`, `User-Agent` and, when the proxy URL has a user,
/// `Proxy-Authorization`: never the origin's `Authorization`, cookies or the user's headers.
/// Any 2xx opens the tunnel and its `Content-Length` and `Transfer-Encoding` are ignored
/// (RFC 9112 §6.3); a byte after that head is not a tunnel (a TLS server never speaks first).
/// 407, 401 and 403 are refusals (see ``proxyAuthenticationError(_:credentialsSent:proxy:)``);
/// any other answer is not a tunnel, whatever its body.
package struct ConnectHandshake: Sendable {
    /// What to do after the proxy's bytes.
    package enum Action: Sendable {
        /// Read more.
        case needMore
        /// The tunnel is open: speak to the origin.
        case established
        /// The proxy refused, or did not answer as a tunnel.
        case failed(HTTPClientError)
    }

    /// The request to write.
    package let request: [UInt8]
    private let target: String
    private let proxy: String
    private let credentialsSent: Bool
    private var parser = ResponseParser(method: .head)

    /// - Parameters:
    ///   - host: the origin's host (an IPv6 literal without brackets).
    ///   - isIPv6Literal: whether `host` is an IPv6 literal (sent in brackets).
    ///   - port: the origin's port.
    ///   - userAgent: the `User-Agent` value.
    ///   - proxy: the proxy (its credentials go into `Proxy-Authorization`).
    package init(host: String, isIPv6Literal: Bool, port: Int, userAgent: String, proxy: ProxyURL) {
        let target = isIPv6Literal ? "[\(host)]:\(port)" : "\(host):\(port)"
        var text = "CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\nUser-Agent: \(userAgent)\r\n"
        if let authorization = proxy.proxyAuthorization { text += "Proxy-Authorization: \(authorization)\r\n" }
        text += "\r\n"
        request = Array(text.utf8)
        self.target = target
        self.proxy = proxy.description
        credentialsSent = proxy.user != nil
    }

    /// Takes the next bytes from the proxy.
    package mutating func received(_ bytes: UnsafeRawBufferPointer) -> Action {
        var offset = 0
        let event: ResponseParser.Event
        do throws(HTTPClientError) {
            event = try parser.parse(bytes, offset: &offset)
        } catch {
            return .failed(HTTPClientError(.tunnelRefused, "the proxy \(proxy) answered CONNECT with something that is not HTTP (\(error.message))"))
        }
        guard case .head(let head) = event else { return .needMore }
        let said = head.reason.isEmpty ? "\(head.status)" : "\(head.status) \(head.reason)"
        switch head.status {
        case 200..<300:
            if offset < bytes.count {
                return .failed(HTTPClientError(.tunnelRefused, "the proxy \(proxy) sent data after its \(said) answer to CONNECT \(target), so it is not a tunnel"))
            }
            return .established
        case 407:
            return .failed(Self.proxyAuthenticationError(head, credentialsSent: credentialsSent, proxy: proxy))
        case 401, 403:
            return .failed(HTTPClientError(.proxyAuthenticationRefused, "the proxy \(proxy) refused CONNECT \(target) (\(said))"))
        default:
            return .failed(HTTPClientError(.tunnelRefused, "the proxy \(proxy) did not open a tunnel to \(target) (\(said))"))
        }
    }

    /// The proxy closed the connection before its answer was complete.
    package func inputEnded() -> HTTPClientError {
        HTTPClientError(.connectionReset, "the proxy \(proxy) closed the connection before answering CONNECT \(target)")
    }

    /// The error for a 407 answer, to CONNECT or to a forwarded request.
    ///
    /// Haul sends Basic credentials with the first request when the proxy URL has them, and never
    /// tries twice: without credentials it says to give some; with them, that they were refused;
    /// when the proxy offers only other schemes (Digest, Negotiate, NTLM), that Haul has none of those.
    package static func proxyAuthenticationError(_ head: ResponseHead, credentialsSent: Bool, proxy: String) -> HTTPClientError {
        let schemes = head.headers.values(for: "Proxy-Authenticate").compactMap { value in
            value.trimmingOWS().split(separator: " ", maxSplits: 1).first.map(String.init)
        }
        if !schemes.isEmpty, !schemes.contains(where: { $0.lowercased() == "basic" }) {
            return HTTPClientError(.proxyAuthenticationRefused,
                                   "the proxy \(proxy) asks for \(schemes.joined(separator: ", ")) authentication; haul sends Basic only (407)")
        }
        if credentialsSent {
            return HTTPClientError(.proxyAuthenticationRefused, "the proxy \(proxy) refused the credentials (407)")
        }
        return HTTPClientError(.proxyAuthenticationRefused,
                               "the proxy \(proxy) requires authentication (407): give them as http://USER:PASSWORD@host:port")
    }
}
