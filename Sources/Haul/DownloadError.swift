import HaulHTTP
/// The one error type Haul throws.
///
/// Switch on ``code``: codes are stable (new ones may be added without breaking callers), each
/// maps to one command-line exit status (``Code/exitStatus``) and says whether another attempt
/// could succeed (``isRetryable``). ``message`` is one readable sentence with every secret
/// (URL userinfo, signatures, tokens) already redacted.
public struct DownloadError: Error, Sendable, CustomStringConvertible {
    /// A stable identifier for a kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable text of the code, as used in `--json` output (for example `"rangeMismatch"`).
        public let name: String
        /// The command-line exit status for this code (README.md, "Exit status").
        public let exitStatus: Int32
        let retryable: Bool

        init(_ name: String, exit: Int32, retryable: Bool = false) {
            self.name = name
            self.exitStatus = exit
            self.retryable = retryable
        }

        /// The stable name of the code.
        public var description: String { name }

        /// Two codes are equal when their stable names are.
        public static func == (lhs: Code, rhs: Code) -> Bool { lhs.name == rhs.name }
        /// Hashes the stable name.
        public func hash(into hasher: inout Hasher) { hasher.combine(name) }

        // 1: generic
        /// An unexpected internal failure.
        public static let internalError = Code("internalError", exit: 1)
        /// The system had no thread, descriptor or memory to give (at a process or system limit).
        public static let resourceExhausted = Code("resourceExhausted", exit: 1)

        // 2: usage
        /// The URL could not be parsed (bad port, spaces, control characters, unclosed `[`...).
        public static let invalidURL = Code("invalidURL", exit: 2)
        /// The URL's scheme is not `http` or `https`.
        public static let unsupportedScheme = Code("unsupportedScheme", exit: 2)
        /// An option or argument has an invalid value.
        public static let invalidArgument = Code("invalidArgument", exit: 2)
        /// The option is recognised but its feature is not available yet.
        public static let notSupported = Code("notSupported", exit: 2)

        // 3: local files
        /// A local file or folder could not be created, opened, written or renamed.
        public static let fileSystem = Code("fileSystem", exit: 3)
        /// The disk (or quota) is full.
        public static let diskFull = Code("diskFull", exit: 3)
        /// The destination is not a regular file, or the path is unsafe (symlink, outside the folder).
        public static let unsafePath = Code("unsafePath", exit: 3)

        // 4: network
        /// The host name could not be resolved.
        public static let dnsFailure = Code("dnsFailure", exit: 4, retryable: true)
        /// The server refused the connection.
        public static let connectionRefused = Code("connectionRefused", exit: 4, retryable: true)
        /// The connection was reset or broke while in use.
        public static let connectionReset = Code("connectionReset", exit: 4, retryable: true)
        /// No connection could be made within the connect timeout.
        public static let connectTimeout = Code("connectTimeout", exit: 4, retryable: true)
        /// The response head did not arrive within its deadline.
        public static let headerTimeout = Code("headerTimeout", exit: 4, retryable: true)
        /// No byte arrived for longer than the stall timeout.
        public static let stalled = Code("stalled", exit: 4, retryable: true)
        /// The body ended before its announced length (or last chunk).
        public static let truncatedBody = Code("truncatedBody", exit: 4, retryable: true)
        /// Any other network failure.
        public static let networkError = Code("networkError", exit: 4, retryable: true)
        /// A SOCKS5 proxy failed its handshake or could not reach the origin (its reply code is in the message).
        public static let proxyFailure = Code("proxyFailure", exit: 4, retryable: true)

        // 5: TLS
        /// The server's certificate is not trusted.
        public static let tlsCertificateUntrusted = Code("tlsCertificateUntrusted", exit: 5)
        /// The certificate does not name the host.
        public static let tlsHostnameMismatch = Code("tlsHostnameMismatch", exit: 5)
        /// The TLS handshake failed for another reason.
        public static let tlsHandshakeFailed = Code("tlsHandshakeFailed", exit: 5)

        // 6: authentication
        /// The server answered 401, 403 or 407, or a proxy refused (407, 401 or 403 to `CONNECT`, SOCKS5 credentials).
        public static let authenticationRefused = Code("authenticationRefused", exit: 6)

        // 7: protocol
        /// The response is not valid HTTP/1.x.
        public static let malformedResponse = Code("malformedResponse", exit: 7)
        /// The response head exceeded the header byte or line limits.
        public static let headersTooLarge = Code("headersTooLarge", exit: 7)
        /// `Content-Length` is negative, not a number, overflowing, or given twice with different values.
        public static let invalidContentLength = Code("invalidContentLength", exit: 7)
        /// A chunk size line is malformed or overflows.
        public static let invalidChunk = Code("invalidChunk", exit: 7)
        /// A 206 answer does not match the requested range, or Range was answered wrongly.
        public static let rangeMismatch = Code("rangeMismatch", exit: 7)
        /// A redirect was refused (scheme not allowed, https to http, missing or bad Location).
        public static let redirectRefused = Code("redirectRefused", exit: 7)
        /// A ranged request found a different file (a 200, or another ETag): the download must
        /// start over. Handled inside the engine; it surfaces only if starting over fails too.
        package static let resourceChanged = Code("resourceChanged", exit: 7)
        /// A proxy's answer to `CONNECT` is not a tunnel (a non-2xx status, or data after its 2xx head).
        public static let tunnelRefused = Code("tunnelRefused", exit: 7)
        /// Redirects loop or exceed the hop limit.
        public static let tooManyRedirects = Code("tooManyRedirects", exit: 7)

        // 8: server status
        /// The server answered with a 4xx or 5xx status (other than authentication).
        public static let httpStatus = Code("httpStatus", exit: 8)

        // 9: integrity
        /// The downloaded bytes do not match the expected checksum.
        public static let checksumMismatch = Code("checksumMismatch", exit: 9)
        /// The downloaded length does not match the announced length.
        public static let lengthMismatch = Code("lengthMismatch", exit: 9)

        // 10, 11
        /// The destination exists and the conflict policy is `.fail`.
        public static let destinationExists = Code("destinationExists", exit: 10)
        /// Another download (this process or another) holds the lock on this destination.
        public static let locked = Code("locked", exit: 11)

        // 130
        /// The download was cancelled (the partial file is kept for resume).
        public static let cancelled = Code("cancelled", exit: 130)
    }

    /// What kind of failure this is.
    public var code: Code
    /// One readable sentence, secrets redacted.
    public var message: String
    /// The HTTP status when the failure is a status response.
    public var httpStatus: Int?
    /// The lower-level error, when there is one.
    public var underlying: (any Error & Sendable)?
    /// How long the server asked to wait before another attempt (`Retry-After`), when it did.
    var retryAfter: Duration?
    /// The origin no TCP connection could be made to (refused, not resolved, timed out), when
    /// that is the failure (see ``UnreachableHosts``).
    var unreachableOrigin: HTTPURL.Origin?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: the stable code.
    ///   - message: one readable sentence, with secrets already redacted.
    ///   - httpStatus: the HTTP status, for status failures.
    ///   - underlying: the lower-level error.
    public init(_ code: Code, _ message: String, httpStatus: Int? = nil, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.httpStatus = httpStatus
        self.underlying = underlying
    }

    /// Whether another attempt could succeed: network failures and statuses 408, 429, 500, 502, 503, 504.
    public var isRetryable: Bool {
        if code == .httpStatus, let status = httpStatus {
            return [408, 429, 500, 502, 503, 504].contains(status)
        }
        return code.retryable
    }

    /// `code: message`.
    public var description: String { "\(code.name): \(message)" }
}
