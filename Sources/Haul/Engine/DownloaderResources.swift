import HaulCore
import HaulHTTP
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the downloads of one ``Downloader`` share, and nothing outside it does: threads, receive
/// buffers, the progress ticker, the committer of small files, the folders and names in use,
/// the rate limit, the per-host connection cap, the idle keep-alive connections and the TLS
/// contexts.
///
/// Two downloaders in one program share none of it.
final class DownloaderResources: Sendable {
    let threads: ThreadPool
    let buffers: ReceiveBuffers
    let ticker: ProgressTicker
    let committer: BatchCommitter
    let folders: FolderRegistry
    /// The downloader's rate limit: every connection's, unless its download has its own (whose
    /// parent this is). Uncapped while `Configuration.rateLimit` is `nil` and until
    /// ``Downloader/setRateLimit(_:)``.
    let limiter: RateLimiter
    let hostSlots: HostSlots
    let pool: ConnectionPool
    /// The TLS contexts (trust stores loaded once), one per set of settings.
    let tlsContexts = TLSContexts()
    /// The permissions of finished files (0666 less the umask when the downloader was made).
    let finishedFileMode: mode_t
    /// The proxy selector of every download, or why the proxy settings cannot be used; `nil`
    /// when each download reads the process environment as it starts.
    let proxies: Result<ProxySelector, DownloadError>?
    /// The transport of another client (`URLSession`), made on first use: it keeps its own
    /// connections, so it is held for the downloader's lifetime.
    private let alternate = SharedStateLock<(any AlternateTransport)?>(nil)

    /// - Parameters:
    ///   - configuration: the downloader's settings.
    ///   - threadStarter: starts the pool's threads (tests make it fail).
    init(configuration: Downloader.Configuration, threadStarter: @escaping ThreadPool.Starter = ThreadPool.systemStarter) {
        let buffers = ReceiveBuffers()
        self.buffers = buffers
        // Every running download may hold its own thread, one per connection (up to
        // connectionsPerDownload per server, maximumSources servers) and the writers of their
        // rings (one each, two each for one or two connections), a checkpoint thread and a
        // resolver; the rest is room for the committer and lookups in flight. A ring whose writer
        // finds no thread free is written by its reader; a connection that gets none leaves its
        // range to the others.
        let perDownload = 2 * configuration.connectionsPerDownload * max(1, configuration.maximumSources) + 2
        threads = ThreadPool(maximumThreads: min(4096, max(1, configuration.maximumActiveDownloads) * perDownload + 16),
                             retired: { buffers.trim() }, starter: threadStarter)
        ticker = ProgressTicker(longestSleep: max(.milliseconds(10), configuration.progressInterval))
        committer = BatchCommitter(threads: threads)
        folders = FolderRegistry()
        limiter = RateLimiter(bytesPerSecond: configuration.rateLimit)
        hostSlots = HostSlots(maximumPerHost: configuration.maximumConnectionsPerHost)
        pool = ConnectionPool()
        finishedFileMode = FileMode.forFinishedFiles()
        proxies = configuration.proxy.readsProcessEnvironment ? nil : configuration.proxy.selectorResult()
    }

    /// The downloader's transport of another client (one for every download), made on first use.
    func alternateTransport(_ configuration: Downloader.Configuration,
                            make: (Downloader.Configuration) -> any AlternateTransport) -> any AlternateTransport {
        alternate.withLock { alternate in
            if let alternate { return alternate }
            let made = make(configuration)
            alternate = made
            return made
        }
    }
}
