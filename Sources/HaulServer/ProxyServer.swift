#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small proxy on loopback for tests: an HTTP proxy (forwarding absolute-form requests and
/// opening `CONNECT` tunnels, over TLS too) or a SOCKS5 proxy (RFC 1928/1929), with hostile
/// behaviours, that records what reached it.
///
/// It shares no code with Haul's client: its request parsing, tunnels and SOCKS handling are
/// its own. Upstream connections go to loopback only (`localhost`, 127.0.0.0/8, ::1); any
/// other target is refused. Every request head (`CONNECT` included) is kept in ``requests``,
/// every SOCKS5 exchange in ``socksRequests``, so a test can assert which headers and
/// credentials reached the proxy.
public final class ProxyServer: Sendable {
    /// The protocol the proxy speaks.
    public enum Kind: Sendable {
        /// HTTP: forwarding and `CONNECT`.
        case http
        /// SOCKS5.
        case socks5
    }

    /// How the proxy misbehaves, if it does.
    public enum Behaviour: Sendable, Equatable {
        /// A correct proxy.
        case normal
        /// Answers `CONNECT` with `200` followed at once by body bytes (not a tunnel).
        case connectAnsweredWithBody
        /// Answers `CONNECT` with `401 Unauthorized` (an origin's status, from a proxy).
        case unauthorizedOnConnect
        /// Answers every request with 407 offering only `scheme` (`Basic`, `Negotiate`...).
        case alwaysRequireAuthentication(scheme: String)
        /// Answers `CONNECT` with `502` and a `Content-Length` body of N bytes of 'x' (looks like a file).
        case connectRefusedWithBody(bytes: Int)
        /// Forwards requests without their `Range` and `If-Range` (a caching proxy that answers
        /// a ranged request with the whole file).
        case stripsRange
        /// SOCKS5: chooses username/password although only "no authentication" was offered.
        case socksPicksUnofferedMethod
        /// SOCKS5: sends the first two bytes of the reply, then nothing until the client goes.
        case socksTruncatedReply
        /// SOCKS5: answers the request with this reply code (1-8).
        case socksReply(UInt8)
    }

    /// Where and how the proxy listens.
    public struct Configuration: Sendable {
        /// HTTP or SOCKS5.
        public var kind: Kind
        /// The user name the proxy requires (`nil`: no credentials are required).
        public var user: String?
        /// The password that goes with ``user``.
        public var password: String?
        /// How the proxy misbehaves, if it does.
        public var behaviour: Behaviour
        /// TLS between client and proxy (an `https://` proxy); HTTP kind only.
        public var tls: HaulServer.TLSIdentity?
        /// `127.0.0.1` (default) or `::1`.
        public var host: String

        /// Creates a configuration.
        public init(kind: Kind = .http, user: String? = nil, password: String? = nil, behaviour: Behaviour = .normal,
                    tls: HaulServer.TLSIdentity? = nil, host: String = "127.0.0.1") {
            self.kind = kind
            self.user = user
            self.password = password
            self.behaviour = behaviour
            self.tls = tls
            self.host = host
        }
    }

    /// One SOCKS5 exchange as the proxy received it.
    public struct SOCKSRequest: Sendable, Equatable {
        /// The authentication methods the client offered.
        public var methods: [UInt8]
        /// The user name the client sent (RFC 1929), if it did.
        public var user: String?
        /// The password the client sent, if it did.
        public var password: String?
        /// The address type of the request: 1 (IPv4), 3 (name), 4 (IPv6); 0 when none came.
        public var addressType: UInt8
        /// The requested host: a name, or an address in text form.
        public var host: String
        /// The requested port.
        public var port: Int
    }

    /// The configuration the proxy was started with.
    public let configuration: Configuration
    /// The port the proxy listens on.
    public let port: Int
    let core: ProxyCore

    /// Starts the proxy on an ephemeral port of `configuration.host`.
    ///
    /// - Throws: `HaulServerError` when it cannot listen or load its TLS files.
    public init(configuration: Configuration = .init()) throws {
        let tls = try configuration.tls.map { try TLSContext(identity: $0) }
        #if canImport(Glibc)
        if tls != nil { _ = signal(SIGPIPE, SIG_IGN) }
        #endif
        let (listener, port) = try POSIX.listen(host: configuration.host)
        self.configuration = configuration
        self.port = port
        self.core = ProxyCore(configuration: configuration, listener: listener, tls: tls)
        POSIX.spawnThread { [core] in core.acceptLoop() }
    }

    deinit { core.stop() }

    /// Stops listening and ends every connection.
    public func stop() { core.stop() }

    /// The proxy URL: `http://`, `https://` or `socks5h://` with the host and port (no credentials).
    public var url: String {
        let scheme = configuration.kind == .socks5 ? "socks5h" : configuration.tls == nil ? "http" : "https"
        let host = configuration.host.contains(":") ? "[\(configuration.host)]"
            : configuration.tls != nil && configuration.host == "127.0.0.1" ? "localhost" : configuration.host
        return "\(scheme)://\(host):\(port)"
    }

    /// Every HTTP request head received (`CONNECT` and forwarded requests), in order.
    public var requests: [RecordedRequest] { core.state.withLock { $0.requests } }
    /// Every SOCKS5 exchange, in order.
    public var socksRequests: [SOCKSRequest] { core.state.withLock { $0.socks } }
    /// How many client connections were accepted.
    public var connectionCount: Int { core.state.withLock { $0.accepted } }
}

/// The state the proxy's threads share.
final class ProxyCore: Sendable {
    struct State {
        var stopped = false
        var listener: Int32
        var open: [Int: Int32] = [:]
        var accepted = 0
        var nextID = 0
        var requests: [RecordedRequest] = []
        var socks: [ProxyServer.SOCKSRequest] = []
    }

    let configuration: ProxyServer.Configuration
    let tls: TLSContext?
    let state: ServerLock<State>

    init(configuration: ProxyServer.Configuration, listener: Int32, tls: TLSContext?) {
        self.configuration = configuration
        self.tls = tls
        self.state = ServerLock(State(listener: listener))
    }

    func stop() {
        state.withLock { state in
            guard !state.stopped else { return }
            state.stopped = true
            _ = shutdown(state.listener, Int32(SHUT_RDWR))
            _ = close(state.listener)
            for fd in state.open.values { _ = shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }

    /// Tracks a descriptor so `stop()` can shut it down; `nil` once stopped.
    func track(_ fd: Int32, isClient: Bool = true) -> Int? {
        state.withLock { state in
            guard !state.stopped else { return nil }
            if isClient { state.accepted += 1 }
            state.nextID += 1
            state.open[state.nextID] = fd
            return state.nextID
        }
    }

    func untrack(_ id: Int) {
        state.withLock { _ = $0.open.removeValue(forKey: id) }
    }

    func acceptLoop() {
        while true {
            let listener = state.withLock { $0.stopped ? -1 : $0.listener }
            guard listener >= 0 else { return }
            _ = POSIX.pollReadable([listener], timeoutMilliseconds: 100)
            guard let fd = state.withLock({ $0.stopped ? nil : POSIX.accept($0.listener) }) else { continue }
            POSIX.spawnThread { [self] in serve(fd) }
        }
    }

    private func serve(_ fd: Int32) {
        guard let id = track(fd) else {
            _ = close(fd)
            return
        }
        let client = ProxyStream(fd: fd, ssl: nil)
        defer {
            client.close()
            untrack(id)
        }
        if let tls {
            guard let ssl = tls.accept(fd: fd) else { return }
            client.ssl = ssl
        }
        switch configuration.kind {
        case .http: serveHTTP(client)
        case .socks5: serveSOCKS(client)
        }
    }
}
