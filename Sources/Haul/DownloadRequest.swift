#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What to download: a URL plus the headers sent with it.
public struct DownloadRequest: Sendable {
    /// The URL the user gave (`http` or `https`). Its last path component names the file when
    /// the server sends no `Content-Disposition`.
    public var url: URL
    /// Extra request headers. They are sent to the URL's own origin only: a redirect to another
    /// scheme, host or port drops all of them.
    public var headers: [(name: String, value: String)]
    /// What to do when the chosen name already exists (`nil`: the downloader's default).
    public var conflictPolicy: ConflictPolicy?
    /// Identifies the download among the downloader's running ones; defaults to the URL.
    /// `nil`: the URL together with the destination, so one URL fetched into two places is two downloads.
    public var key: String?
    /// Discard any partial download of this file and start over (`--no-continue`). Default `false`:
    /// a partial file with a valid resume record is continued.
    public var startOver: Bool = false

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - url: an `http` or `https` URL.
    ///   - headers: extra headers, sent to the URL's own origin only.
    ///   - conflictPolicy: overrides the downloader's default conflict policy.
    ///   - key: identifies the download; by default the URL and the destination do.
    public init(url: URL, headers: [(name: String, value: String)] = [], conflictPolicy: ConflictPolicy? = nil, key: String? = nil) {
        self.url = url
        self.headers = headers
        self.conflictPolicy = conflictPolicy
        self.key = key
    }
}
