#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulHTTP

/// What to download: a URL plus the headers sent with it.
public struct DownloadRequest: Sendable {
    /// The URL the user gave (`http` or `https`). Its last path component names the file when
    /// the server sends no `Content-Disposition`.
    public var url: URL {
        didSet { parsedURL = nil }
    }
    /// ``url`` as the engine parses it, when the caller has that already (a command line checks
    /// every URL before it starts any): each download then skips a second parse. `nil` once
    /// ``url`` changes.
    package var parsedURL: HTTPURL?
    /// Extra request headers. They are sent to the URL's own origin only: a redirect to another
    /// scheme, host or port drops all of them.
    public var headers: [(name: String, value: String)]
    /// What to do when the chosen name already exists (`nil`: the downloader's default).
    public var conflictPolicy: ConflictPolicy?
    /// Identifies the download among the downloader's running ones; defaults to the URL.
    /// `nil`: the URL together with the destination, so one URL fetched into two places is two downloads.
    public var key: String?
    /// Discard any partial download of this file and start over (`--no-continue`). Default `false`:
    /// a partial file with a valid resume record is continued, and a file an earlier run finished
    /// is recognised (``DownloadResult/alreadyComplete``).
    public var startOver: Bool = false
    /// The digest the file must have. It is checked before the file gets its final name; on a
    /// mismatch the download fails with `checksumMismatch` and the partial file is removed.
    /// With one connection from byte 0 the bytes are hashed as they arrive; otherwise the
    /// finished partial file is read once more.
    public var checksum: Checksum?
    /// Signs the URL afresh for every attempt and every connection (S3, OSS or your own
    /// scheme); `nil` sends ``url`` as it is. With a signer ``url`` may use a scheme the signer
    /// knows, such as `s3://bucket/key`. An expired signature (a 403 that says so, or a
    /// signature older than its lifetime) is renewed and the download continues from the bytes
    /// on disk.
    public var signer: (any URLSigner)?
    /// Basic credentials for the URL's origin (scheme, host and port) only: a redirect to
    /// another origin never carries them. Userinfo in ``url`` wins over them.
    public var credentials: Credentials?
    /// Connections for this download, 1–16 (`nil`: the downloader's
    /// ``Downloader/Configuration/connectionsPerDownload``).
    public var connections: Int?
    /// A speed cap for this download alone, in bytes per second, on top of the downloader's
    /// ``Downloader/Configuration/rateLimit`` (`nil`: none of its own).
    public var rateLimit: Int64?
    /// Other servers of the same file (mirrors): with a file that allows ranges, its segments
    /// come from ``url`` and these together, each server up to ``connections`` connections.
    /// Every source must report the same length; one that fails for good (a 404, another
    /// length, a redirect refused), more often in a row than the retries allow, or that stays far
    /// slower than the others is set aside with a warning, and the download fails only when no
    /// source is left. Each source's headers, credentials and signer go to it alone.
    public var mirrors: [DownloadSource] = []
    /// The checksum of each piece of the file (a Metalink document's `<pieces>`): with a file
    /// that allows ranges, every piece is hashed once complete and fetched again when it does not
    /// match (with mirrors, from another server: the ones that sent it are set aside). The pieces
    /// must cut the server's length exactly (`lengthMismatch` otherwise).
    public var pieces: PieceChecksums?
    /// Asked once the file is complete and verified, right before it gets its name (a fleet's
    /// node asks PostgreSQL whether the download is still its own): `false` leaves it a partial
    /// file and the download fails with `locked` (another owner has it).
    public var commitGate: (@Sendable () -> Bool)?

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - url: an `http` or `https` URL.
    ///   - headers: extra headers, sent to the URL's own origin only.
    ///   - conflictPolicy: overrides the downloader's default conflict policy.
    ///   - key: identifies the download; by default the URL and the destination do.
    ///   - checksum: the digest the file must have.
    ///   - signer: signs the URL for every request.
    public init(url: URL, headers: [(name: String, value: String)] = [], conflictPolicy: ConflictPolicy? = nil, key: String? = nil,
                checksum: Checksum? = nil, signer: (any URLSigner)? = nil) {
        self.url = url
        self.headers = headers
        self.conflictPolicy = conflictPolicy
        self.key = key
        self.checksum = checksum
        self.signer = signer
    }
}

/// Another server of a request's file (see ``DownloadRequest/mirrors``): its URL, and what goes to
/// that server alone.
public struct DownloadSource: Sendable {
    /// An `http` or `https` URL of the same file (or, with a signer, a scheme the signer knows).
    public var url: URL
    /// Extra request headers, sent to this URL's own origin only.
    public var headers: [(name: String, value: String)]
    /// Basic credentials for this URL's origin only.
    public var credentials: Credentials?
    /// Signs this URL afresh for every request.
    public var signer: (any URLSigner)?

    /// Creates a source.
    public init(url: URL, headers: [(name: String, value: String)] = [], credentials: Credentials? = nil,
                signer: (any URLSigner)? = nil) {
        self.url = url
        self.headers = headers
        self.credentials = credentials
        self.signer = signer
    }
}
