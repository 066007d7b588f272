import HaulCore

/// The client side of a SOCKS5 handshake (RFC 1928, with RFC 1929 username/password): a pure
/// state machine that is handed the proxy's bytes and says what to send or how many to read.
///
/// It offers "no authentication", plus username/password only when credentials are given, and
/// refuses a method it did not offer. The target goes as a name (ATYP 3, `socks5h`) or an
/// address (ATYP 1 or 4, `socks5`). ``bytesWanted`` is always exactly what the current step
/// still needs, so the caller never reads past the reply into the tunnel's first bytes.
package struct SOCKS5Handshake: Sendable {
    /// The destination as sent to the proxy.
    package enum Target: Sendable, Equatable {
        /// A host name the proxy resolves (ATYP 3); at most 255 bytes.
        case name(String)
        /// An IPv4 or IPv6 address (ATYP 1 or 4).
        case address(IPAddress)
    }

    /// What to do after the proxy's bytes.
    package enum Action: Sendable {
        /// Read ``bytesWanted`` more bytes.
        case needMore
        /// Write these bytes, then read ``bytesWanted``.
        case send([UInt8])
        /// The tunnel is open.
        case done
        /// The handshake failed.
        case failed(HTTPClientError)
    }

    private enum Step: Sendable, Equatable {
        case methodChoice, authenticationResult, replyHead, replyNameLength, replyRest(Int), done, failed
    }

    /// The first message: version 5 and the methods offered.
    package let greeting: [UInt8]
    private let connectRequest: [UInt8]
    private let authentication: [UInt8]?
    private let proxy: String
    private var step = Step.methodChoice
    private var pending: [UInt8] = []

    /// - Parameters:
    ///   - target: the origin's name or address.
    ///   - port: the origin's port.
    ///   - user: the proxy's user name (with `password`: RFC 1929 is offered).
    ///   - password: the proxy's password.
    ///   - proxy: how the proxy is named in messages (no credentials).
    /// - Throws: `.invalidRequest` for a name over 255 bytes; `.invalidProxy` for an empty user
    ///   name, or a user name or password over 255 bytes (refused before anything is sent).
    package init(target: Target, port: Int, user: String?, password: String?, proxy: String) throws(HTTPClientError) {
        self.proxy = proxy
        var request: [UInt8] = [5, 1, 0]
        switch target {
        case .name(let name):
            let bytes = Array(name.utf8)
            guard bytes.count <= 255, !bytes.isEmpty else {
                throw HTTPClientError(.invalidRequest, "the host name is longer than the 255 bytes a SOCKS5 proxy accepts")
            }
            request += [3, UInt8(bytes.count)] + bytes
        case .address(let address):
            request += [address.isIPv6 ? 4 : 1] + address.bytes
        }
        request += [UInt8(port >> 8 & 0xFF), UInt8(port & 0xFF)]
        connectRequest = request
        if let user {
            let name = Array(user.utf8), secret = Array((password ?? "").utf8)
            guard !name.isEmpty, name.count <= 255, secret.count <= 255 else {
                throw HTTPClientError(.invalidProxy, "the SOCKS5 user name must be 1 to 255 bytes and the password at most 255")
            }
            authentication = [1, UInt8(name.count)] + name + [UInt8(secret.count)] + secret
            greeting = [5, 2, 0, 2]
        } else {
            authentication = nil
            greeting = [5, 1, 0]
        }
    }

    /// How many more bytes the current step needs (0 when done or failed).
    package var bytesWanted: Int {
        switch step {
        case .methodChoice, .authenticationResult: 2 - pending.count
        case .replyHead: 4 - pending.count
        case .replyNameLength: 1 - pending.count
        case .replyRest(let count): count - pending.count
        case .done, .failed: 0
        }
    }

    /// Takes bytes from the proxy (at most ``bytesWanted``; any more are a protocol error).
    package mutating func received(_ bytes: some Collection<UInt8>) -> Action {
        guard bytes.count <= bytesWanted else {
            return fail(.proxyFailure, "the SOCKS5 proxy \(proxy) sent more than its reply")
        }
        pending += bytes
        guard bytesWanted == 0 else { return .needMore }
        let message = pending
        pending = []
        switch step {
        case .methodChoice: return methodChosen(message)
        case .authenticationResult: return authenticated(message)
        case .replyHead: return replied(message)
        case .replyNameLength:
            step = .replyRest(Int(message[0]) + 2)
            return .needMore
        case .replyRest:
            step = .done
            return .done
        case .done, .failed:
            return .failed(HTTPClientError(.internalError, "SOCKS5 handshake used after its end"))
        }
    }

    /// The proxy closed the connection in the middle of the handshake.
    package mutating func inputEnded() -> HTTPClientError {
        step = .failed
        return HTTPClientError(.proxyFailure, "the SOCKS5 proxy \(proxy) closed the connection during the handshake")
    }

    private mutating func methodChosen(_ message: [UInt8]) -> Action {
        guard message[0] == 5 else { return fail(.proxyFailure, "\(proxy) is not a SOCKS5 proxy (version \(message[0]))") }
        switch message[1] {
        case 0:
            step = .replyHead
            return .send(connectRequest)
        case 2 where authentication != nil:
            step = .authenticationResult
            return .send(authentication!)
        case 0xFF:
            let what = authentication == nil ? "requires authentication: give socks5://USER:PASSWORD@host:port"
                                             : "accepts none of the offered authentication methods"
            return fail(.proxyAuthenticationRefused, "the SOCKS5 proxy \(proxy) \(what)")
        default:
            return fail(.proxyFailure, "the SOCKS5 proxy \(proxy) chose authentication method \(message[1]), which haul did not offer")
        }
    }

    private mutating func authenticated(_ message: [UInt8]) -> Action {
        guard message[1] == 0 else { return fail(.proxyAuthenticationRefused, "the SOCKS5 proxy \(proxy) refused the user name and password") }
        step = .replyHead
        return .send(connectRequest)
    }

    private mutating func replied(_ message: [UInt8]) -> Action {
        guard message[0] == 5 else { return fail(.proxyFailure, "the SOCKS5 proxy \(proxy) sent a reply of version \(message[0])") }
        guard message[1] == 0 else {
            return fail(.proxyFailure, "the SOCKS5 proxy \(proxy) could not connect: \(Self.replyText(message[1]))")
        }
        switch message[3] {
        case 1: step = .replyRest(4 + 2)
        case 4: step = .replyRest(16 + 2)
        case 3: step = .replyNameLength
        default: return fail(.proxyFailure, "the SOCKS5 proxy \(proxy) sent an unknown address type \(message[3])")
        }
        return .needMore
    }

    private mutating func fail(_ kind: HTTPClientError.Kind, _ message: String) -> Action {
        step = .failed
        return .failed(HTTPClientError(kind, message))
    }

    /// The meaning of a reply code (RFC 1928 §6).
    package static func replyText(_ code: UInt8) -> String {
        switch code {
        case 1: "general SOCKS server failure (1)"
        case 2: "connection not allowed by ruleset (2)"
        case 3: "network unreachable (3)"
        case 4: "host unreachable (4)"
        case 5: "connection refused (5)"
        case 6: "TTL expired (6)"
        case 7: "command not supported (7)"
        case 8: "address type not supported (8)"
        default: "unknown reply code \(code)"
        }
    }
}
