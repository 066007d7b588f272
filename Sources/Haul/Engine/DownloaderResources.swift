/// What every download of one ``Downloader`` shares: the rate limit, the per-host connection cap,
/// the idle keep-alive connections and the hosts given up on.
struct DownloaderResources: Sendable {
    let limiter: RateLimiter?
    let hostSlots: HostSlots?
    let pool: ConnectionPool?
    var unreachable = UnreachableHosts()
}
