/// What every download of one ``Downloader`` shares: the rate limit, the per-host connection cap
/// and the idle keep-alive connections (with the hosts given up on).
struct DownloaderResources: Sendable {
    let limiter: RateLimiter?
    let hostSlots: HostSlots?
    let pool: ConnectionPool?
}
