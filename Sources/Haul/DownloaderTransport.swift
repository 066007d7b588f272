extension Downloader {
    /// The HTTP client that moves a download's bytes.
    ///
    /// Either way the engine is the same: resume records, segments, naming, locking, checksums,
    /// status and `Content-Range` checks and the redirect policy are Haul's. Only the request and
    /// the response travel differently.
    public enum Transport: String, Sendable, Equatable, CaseIterable {
        /// Haul's own HTTP/1.1 client (sockets, OpenSSL, keep-alive pool). The default.
        ///
        /// It enforces Haul's header size limits, reports framing errors itself and honours
        /// ``TLSOptions`` on every platform.
        case native
        /// Foundation's `URLSession` (data tasks, one session per ``Downloader``).
        ///
        /// `URLSession` keeps its own connections and parses responses itself, so Haul's header
        /// limits and framing checks do not apply, and the connect and header timeouts add up to
        /// one deadline for the response head (it does not say when it connected). It verifies
        /// certificates itself: an extra CA file or `insecure` in ``TLSOptions`` fails with
        /// ``DownloadError/Code/notSupported``. On Linux (FoundationNetworking) a task cannot be
        /// paused, so ranged requests are sent in windows of 16 MiB to keep memory bounded.
        case urlSession
    }
}
