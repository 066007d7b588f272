#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A small HTTP/1.1 server on loopback with fault injection, for `haul demo`, examples and tests.
///
/// Each server listens on an ephemeral port of `127.0.0.1` (or `::1`) from `init` until `stop()`
/// or `deinit`, serving every connection on a thread of its own with blocking I/O (and TLS
/// through OpenSSL when `Configuration.tls` is set). Requests are recorded in `requests`.
/// Connections are kept alive (HTTP/1.1) unless the client sends `Connection: close` or a
/// route has to close. Handlers registered with `route(_:_:)` and resources registered with
/// `setResource(_:_:)` are matched first, by exact path. `bodyBytesSent`, `connectionCount` and
/// `resumedTLSHandshakeCount` tell what the server sent, how many connections it accepted and
/// how many of their TLS handshakes resumed a session.
///
/// ## Built-in routes
/// Query options combine freely; values are percent-decoded.
///
/// - `/bytes/N` and `/bytes/N/any-name.ext`: N bytes of `content(seed:)` with `Content-Length`,
///   `ETag: "haul-N-SEED"`, a fixed `Last-Modified`, `Content-Type: application/octet-stream` and
///   `Accept-Ranges: bytes`. A single `Range` (`bytes=a-b`, `a-`, `-n`) gives 206 with
///   `Content-Range` (a last position beyond the end is clamped to the end); an unsatisfiable one
///   416 with `Content-Range: bytes */N`; several ranges 200 with everything. An `If-Range`
///   matching neither the ETag (strong comparison: weak tags never match) nor `Last-Modified`
///   gives 200 with everything. `HEAD` sends the head only. Options:
///   - `seed=S`: content seed (default 0).
///   - `no-ranges`: ignore `Range` (200) and omit `Accept-Ranges`.
///   - `chunked`: `Transfer-Encoding: chunked` in 64 KiB chunks.
///   - `no-length`: no `Content-Length`; the body ends when the connection closes.
///   - `length=V`: send `Content-Length: V` literally, then the real N bytes, then close.
///   - `cd=VALUE`: `Content-Disposition: VALUE`. `type=MIME`: the `Content-Type`.
///   - `etag=VALUE` (including quotes) replaces the ETag; `no-etag` omits it.
///   - `drop-after=K`: head, K body bytes, then close the socket abruptly.
///   - `stall-after=K`: head, K body bytes, then silence until the client closes or `stop()`.
///   - `rate=BPS`: pace this connection to BPS bytes/s (default `Configuration.rateLimit`;
///     `rate=0` lifts the default).
///   - `status=CODE`: answer CODE with a short HTML page instead of the content.
///   - `header=Name:Value`: an extra response header (repeatable).
///   - `gzip`: add `Content-Encoding: gzip` (the body stays as it is).
/// - `/sha256/N?seed=S`: the hexadecimal SHA-256 of `/bytes/N?seed=S`'s body and a newline,
///   never touched by ``Chaos``, so a soak knows what a file should hold.
/// - `/status/CODE`: that status with body `status CODE\n`; `retry-after=V` adds `Retry-After: V`.
/// - `/redirect/N?to=URL&status=302`: N redirects in total (`/redirect/N-1?...` each hop, keeping
///   the query), the last to `to` (default `/bytes/1024`).
/// - `/redirect-to?url=URL&status=30x`: one redirect to `url` (default 302).
/// - `/loop`: 302 to itself.
/// - `/chunked?size=N&mode=M&seed=S`: N content bytes (default 4096) in 1000-byte chunks; `mode` is
///   `valid` (default), `extensions` (chunk extensions), `trailers` (trailer fields), or a broken
///   framing that closes the connection: `negative` (size `-10`), `overflow` (a size above 2⁶⁴),
///   `nonhex` (size `zz`), `missing-last` (no final chunk), `cut` (last chunk half sent).
/// - `/headers?count=N` adds N header lines; `/headers?size=M` one header line of M bytes; body `headers\n`.
/// - `/endless-headers`: a status line, then a header line every 50 ms, forever.
/// - `/trickle-headers?interval=MS`: a valid head, one byte per MS milliseconds (default 10), then a body.
/// - `/silent`: reads the request and never answers.
/// - `/garbage`: answers `SSH-2.0-OpenSSH_9.2\r\n` and closes.
/// - anything else: 404 with a short body.
public final class HaulServer: Sendable {
    /// Where and how the server listens.
    public struct Configuration: Sendable {
        /// The loopback address to listen on: `127.0.0.1` (default) or `::1`.
        public var host: String
        /// The certificate and key to serve HTTPS with; `nil` serves plain HTTP.
        public var tls: TLSIdentity?
        /// The default per-connection cap of `/bytes` bodies in bytes/s (`nil`: unlimited).
        public var rateLimit: Int?
        /// Seeded random faults injected into `GET /bytes/N`, and versions of its files (`nil`:
        /// none); see ``Chaos``.
        public var chaos: Chaos?

        /// Creates a configuration.
        public init(host: String = "127.0.0.1", tls: TLSIdentity? = nil, rateLimit: Int? = nil, chaos: Chaos? = nil) {
            self.host = host
            self.tls = tls
            self.rateLimit = rateLimit
            self.chaos = chaos
        }
    }

    /// PEM files of a server certificate chain (leaf first) and its private key.
    public struct TLSIdentity: Sendable {
        /// The certificate chain file (PEM).
        public var certificateChainFile: String
        /// The private key file (PEM, unencrypted).
        public var privateKeyFile: String

        /// Creates an identity from two file paths.
        public init(certificateChainFile: String, privateKeyFile: String) {
            self.certificateChainFile = certificateChainFile
            self.privateKeyFile = privateKeyFile
        }
    }

    /// The configuration the server was started with.
    public let configuration: Configuration
    /// The port the server listens on (chosen by the system).
    public let port: Int
    let core: ServerCore

    /// Starts a server on an ephemeral port; it serves until `stop()` or `deinit`.
    ///
    /// With TLS on Linux, `SIGPIPE` is ignored process-wide from here on: OpenSSL writes with
    /// `write(2)`, which would otherwise kill the process when a client hangs up.
    ///
    /// - Parameter configuration: host, TLS identity and default rate.
    /// - Throws: `HaulServerError` when the address cannot be bound or the TLS files cannot be loaded.
    public init(configuration: Configuration = .init()) throws {
        let tls = try configuration.tls.map { try TLSContext(identity: $0) }
        #if canImport(Glibc)
        if tls != nil { _ = signal(SIGPIPE, SIG_IGN) }
        #endif
        let (listener, port) = try POSIX.listen(host: configuration.host)
        let core: ServerCore
        do {
            core = try ServerCore(configuration: configuration, listener: listener, tls: tls)
        } catch {
            _ = close(listener)
            throw error
        }
        self.configuration = configuration
        self.port = port
        self.core = core
        POSIX.spawnThread { core.acceptLoop() }
    }

    deinit {
        core.stop()
    }

    /// `scheme://host:port` of the server: `http://127.0.0.1:PORT`, `http://[::1]:PORT`, or
    /// `https://localhost:PORT` with TLS on `127.0.0.1` (the test certificates name `localhost`).
    public var baseURL: String {
        let scheme = configuration.tls == nil ? "http" : "https"
        if configuration.host.contains(":") { return "\(scheme)://[\(configuration.host)]:\(port)" }
        if configuration.tls != nil && configuration.host == "127.0.0.1" { return "https://localhost:\(port)" }
        return "\(scheme)://\(configuration.host):\(port)"
    }

    /// `baseURL` followed by `pathAndQuery`, e.g. `url("/bytes/10?seed=2")`.
    public func url(_ pathAndQuery: String) -> String {
        baseURL + (pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery)
    }

    /// Stops serving: closes the listener and shuts every open connection down, so their
    /// threads end promptly (sleeps and stalls wake up). Idempotent; `deinit` calls it.
    public func stop() {
        core.stop()
    }

    /// Every request received so far, in arrival order.
    public var requests: [RecordedRequest] {
        core.state.withLock { $0.requests }
    }

    /// The body bytes sent to clients so far, over all connections.
    ///
    /// Counts the content bytes of `/bytes/N` and of resources as they are handed to the
    /// socket (a client killed mid-body may not have received the last of them), without heads,
    /// chunk framing, the short text bodies of status and error responses, or anything a
    /// `route(_:_:)` handler writes. By the time a client has read a body byte, it is counted.
    public var bodyBytesSent: Int64 {
        core.bodyBytesSent.load(ordering: .sequentiallyConsistent)
    }

    /// The number of connections accepted so far (open or closed), to assert connection reuse.
    public var connectionCount: Int {
        core.state.withLock { $0.nextConnectionID }
    }

    /// The number of TLS handshakes that resumed an earlier session instead of a full handshake
    /// (the server issues session tickets; `SSL_session_reused`). A handshake is counted before
    /// the server reads the connection's first request.
    public var resumedTLSHandshakeCount: Int {
        Int(core.resumedHandshakes.load(ordering: .sequentiallyConsistent))
    }

    /// The number of connections whose threads are still running.
    public var openConnectionCount: Int {
        core.state.withLock { $0.connections.count }
    }

    /// Serves requests for exactly `path` (no query) with `handler`, ahead of the built-in routes.
    ///
    /// The handler writes raw bytes (a head and body, or hostile bytes) through the connection;
    /// when it returns or throws, the connection is closed. It runs on the connection's thread.
    /// Registering a path again replaces the handler, or the resource of `setResource(_:_:)`:
    /// the last registration for a path wins.
    ///
    /// - Parameters:
    ///   - path: the request path to match, e.g. `/bad-content-length`.
    ///   - handler: called with the recorded request and the connection.
    public func route(_ path: String, _ handler: @escaping @Sendable (RecordedRequest, ServerConnection) throws -> Void) {
        core.state.withLock { state in
            state.resources[path] = nil
            state.routes[path] = handler
        }
    }

    /// The content `/bytes/N?seed=S` serves, to compute expected bytes and digests.
    ///
    /// - Parameter seed: the `seed=` option (default 0).
    public static func content(seed: UInt64 = 0) -> DeterministicContent {
        DeterministicContent(seed: seed)
    }
}
