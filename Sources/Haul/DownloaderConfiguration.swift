#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulCore

extension Downloader {
    /// Settings shared by every download of one ``Downloader``.
    public struct Configuration: Sendable {
        /// How long to wait for a TCP (and TLS) connection. Default 30 s.
        public var connectTimeout: Duration = .seconds(30)
        /// How long to wait for the whole response head once the request is sent. Default 30 s.
        public var headerTimeout: Duration = .seconds(30)
        /// A connection that delivers no byte for this long is dropped. Default 30 s.
        public var stallTimeout: Duration = .seconds(30)
        /// A body that arrives slower than this floor is dropped as stalled (and retried, resuming);
        /// `nil` turns the check off. Default: below 1 KiB/s for 30 s.
        public var lowSpeedLimit: LowSpeedLimit? = LowSpeedLimit()
        /// TLS trust settings.
        public var tls: TLSOptions = TLSOptions()
        /// Redirects followed before failing with ``DownloadError/Code/tooManyRedirects``. Default 20.
        public var maximumRedirects: Int = 20
        /// Whether a redirect from `https` to `http` is followed. Default `false`.
        public var allowsInsecureRedirects: Bool = false
        /// What to do when the chosen name exists, unless a request says otherwise. Default `.rename`.
        public var conflictPolicy: ConflictPolicy = .rename
        /// The `User-Agent` header.
        public var userAgent: String = "haul/\(HaulInfo.version)"
        /// Size of each connection's receive buffer (reused for the whole transfer). Default 1 MiB.
        public var bufferSize: Int = 1 << 20
        /// Minimum time between two progress events of one download. Default 0.1 s.
        public var progressInterval: Duration = .milliseconds(100)
        /// How failed attempts are retried.
        public var retry: RetryPolicy = RetryPolicy()
        /// Connections per download (1–16) when the server supports ranges and the file is large
        /// enough; 1 disables splitting. Default 4.
        public var connectionsPerDownload: Int = 4
        /// Servers one download fetches from at most: its URL, its ``DownloadRequest/mirrors``
        /// and the mirrors its first response names (`Link: <…>; rel=duplicate`, RFC 6249);
        /// each gets up to ``connectionsPerDownload`` connections. 1 uses the URL alone. Default 5.
        public var maximumSources: Int = 5
        /// Whether the mirrors a first response names in `Link` fields (RFC 6249) become sources.
        /// Default `true`.
        public var usesLinkedMirrors: Bool = true
        /// No segment is smaller than this, so small files use one connection. Default 1 MiB.
        public var minimumSegmentSize: Int64 = 1 << 20
        /// Connections open at once to one server (host and port), shared by all downloads: each
        /// download's first request and every segment count. Default 16.
        public var maximumConnectionsPerHost: Int = 16
        /// Downloads transferring at once; the others wait in a queue, in the order they were started. Default 4.
        ///
        /// A small file's last step (its sync and rename) may still run after its slot went to the
        /// next download; its key stays taken, and its result comes, only once the file has its name.
        public var maximumActiveDownloads: Int = 4
        /// Overall speed cap in bytes per second, shared by every connection of every download (`nil`: none).
        public var rateLimit: Int64?
        /// How often the resume record is brought up to date (after an `fdatasync` of the data).
        /// A crash or a kill loses at most the bytes of this interval (and what each connection
        /// had staged); a transfer slower than 16 KiB a second (a trickle) is recorded every 5 s
        /// (a crash loses at most 80 KiB of it) and a stalled one not at all. Default 25 ms.
        public var resumeRecordInterval: Duration = .milliseconds(25)
        /// The HTTP client that moves the bytes: Haul's own (``Transport/native``, the default)
        /// or Foundation's `URLSession` (`.urlSession`, from the `HaulURLSession` module).
        public var transport: Transport = .native
        /// Which proxy each request goes through. Default: the environment, as curl reads it
        /// (`http_proxy`, `https_proxy`, `all_proxy`, `no_proxy`).
        public var proxy: ProxyOptions = .environment
        /// Credentials per host (`.netrc`), for every host a download reaches. Default: none.
        public var netrc: NetrcFile?
        /// Cookies sent with every request they match, redirects included. Default: none.
        public var cookies: CookieFile?

        /// Creates the default configuration.
        public init() {}
    }

    /// The slowest a response body may arrive: fewer than ``bytesPerSecond`` over ``period`` of
    /// waiting counts as stalled (``DownloadError/Code/stalled``).
    ///
    /// Only the time spent waiting for the server counts, so a slow download caused by Haul
    /// itself (a `rateLimit`, a slow disk) is never taken for a slow server.
    public struct LowSpeedLimit: Sendable, Equatable {
        /// The floor in bytes per second. Default 1024.
        public var bytesPerSecond: Int64
        /// How long the body may stay below the floor. Default 30 s.
        public var period: Duration

        /// Creates a low-speed limit.
        ///
        /// - Parameters:
        ///   - bytesPerSecond: the floor, at least 1.
        ///   - period: how long the body may stay below it, positive.
        public init(bytesPerSecond: Int64 = 1024, period: Duration = .seconds(30)) {
            self.bytesPerSecond = bytesPerSecond
            self.period = period
        }
    }

    /// How TLS certificates are verified.
    public struct TLSOptions: Sendable, Equatable {
        /// A PEM file of extra CA certificates trusted besides the system store.
        public var extraCAFile: String?
        /// Skip certificate and hostname verification entirely (`-k`).
        public var insecure: Bool = false

        /// Creates TLS options.
        ///
        /// - Parameters:
        ///   - extraCAFile: extra CA certificates (PEM) to trust.
        ///   - insecure: when `true`, certificates are not verified.
        public init(extraCAFile: String? = nil, insecure: Bool = false) {
            self.extraCAFile = extraCAFile
            self.insecure = insecure
        }
    }
}

/// How retryable failures (network errors, 408, 429, 5xx) are retried: exponential backoff with
/// jitter, capped. A `Retry-After` from the server lengthens a delay, up to the cap.
///
/// One failure is shared between the downloads of a ``Downloader``: once a download has failed to
/// connect to a host (refused, not resolved, connect timeout) in more attempts in a row than
/// ``maximumRetries``, the other downloads that fail to connect to that host (scheme, host and
/// port) do not retry that failure, until a connection to it is made again. A list of files on a
/// host that is down then fails in about one download's backoff instead of one backoff each.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts after the first one. Default 5; 0 disables retrying.
    public var maximumRetries: Int = 5
    /// The first delay; each retry doubles it. Default 1 s.
    public var initialDelay: Duration = .seconds(1)
    /// The longest delay. Default 60 s.
    public var maximumDelay: Duration = .seconds(60)
    /// Whether a refused connection is retried before the server ever answered this download
    /// (a server that is restarting). Default `false`: a wrong port or a host that is down fails
    /// at once, as with curl and wget. A refusal after the server answered is always retried.
    public var retriesRefusedConnections: Bool = false

    /// Creates a retry policy.
    ///
    /// - Parameters:
    ///   - maximumRetries: attempts after the first (0: none).
    ///   - initialDelay: the first backoff delay.
    ///   - maximumDelay: the cap on any delay.
    ///   - retriesRefusedConnections: whether a refused first connection is retried.
    public init(maximumRetries: Int = 5, initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(60),
                retriesRefusedConnections: Bool = false) {
        self.maximumRetries = maximumRetries
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.retriesRefusedConnections = retriesRefusedConnections
    }

    /// The delay before retry number `attempt` (1-based): `initialDelay * 2^(attempt-1)`, capped,
    /// then jittered to between 50% and 100% of that value by `jitter` (a number in 0...1).
    func delay(beforeRetry attempt: Int, jitter: Double) -> Duration {
        let base = initialDelay.seconds * Double(1 << min(max(attempt - 1, 0), 30))
        let capped = min(base, maximumDelay.seconds)
        return .milliseconds(Int64((capped * (0.5 + 0.5 * min(max(jitter, 0), 1))) * 1000))
    }

    /// The delay before retry number `attempt` when the server asked for `retryAfter`
    /// (`Retry-After`): at least that long, never longer than ``maximumDelay``.
    func delay(beforeRetry attempt: Int, jitter: Double, retryAfter: Duration?) -> Duration {
        let backoff = delay(beforeRetry: attempt, jitter: jitter)
        guard let retryAfter else { return backoff }
        return min(max(backoff, retryAfter), maximumDelay)
    }
}
