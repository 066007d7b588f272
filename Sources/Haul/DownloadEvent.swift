#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulHTTP

/// What a download reports, in order, on its own ``Download/events`` stream.
public enum DownloadEvent: Sendable {
    /// The response head arrived and the destination is chosen; bytes start flowing.
    case started(DownloadStart)
    /// Bytes arrived. Throttled to about ten a second; the last state is always sent.
    case progress(DownloadProgress)
    /// An attempt failed with a retryable error; the next one starts after `delay` seconds.
    case retrying(attempt: Int, delay: Double, error: DownloadError)
    /// The download is paused (connections closed, partial file kept).
    case paused
    /// A paused download continues.
    case resumed
    /// What was on disk could not be used (no or a damaged resume record, a changed file, a
    /// server that ignored the range): the download starts over from byte 0. Said once.
    case startingOver(reason: String)
    /// Something the user should know that does not stop the download, such as a server clock
    /// far from the local one (signed URLs then fail). Safe to print (secrets redacted).
    case warning(String)
    /// The destination already existed and the conflict policy is `.skip`: nothing was downloaded.
    case skipped(URL)
    /// The file is complete, verified and under its final name. Always the last event.
    case finished(URL)
}

/// Facts known when a download starts.
public struct DownloadStart: Sendable {
    /// The URL as given, secrets redacted (safe to print).
    public var redactedURL: String
    /// The final file (it appears only when the download succeeds).
    public var fileURL: URL
    /// The file's full length, when known.
    public var totalBytes: Int64?
    /// Bytes already on disk from an earlier attempt.
    public var resumedFrom: Int64
    /// Connections used for this download.
    public var connections: Int
    /// The final response head (after redirects).
    public var response: ResponseHead
    /// Servers the download may take its bytes from (its URL, its mirrors, those its server
    /// named); 1 for a download from one server.
    public var servers: Int = 1
    /// The Metalink document the response says describes the file (`Link: <…>; rel=describedby;
    /// type="application/metalink4+xml"`, RFC 6249: http or https, never https to http, no
    /// userinfo), if it names one. Haul does not fetch it; a caller may (`haul --metalink=follow`).
    public var metalinkURL: URL? = nil
}

/// The outcome of a finished download.
public struct DownloadResult: Sendable {
    /// The final response head (after redirects).
    public var response: ResponseHead
    /// The file, under its final name.
    public var fileURL: URL
    /// Its length in bytes.
    public var byteCount: Int64
    /// True when the file existed and the conflict policy said `.skip` (nothing was downloaded).
    public var skipped: Bool
    /// The SHA-256 of the file (lowercase hex) when it was verified against a checksum or a
    /// server digest, else `nil`.
    public var sha256: String? = nil
    /// True when `fileURL` is this URL's file, finished by an earlier run and unchanged since,
    /// on disk and on the server (same resource, length and ETag or Last-Modified, a strong ETag
    /// when the URL has a query; checksums checked again): nothing was downloaded. A rerun after
    /// an interruption thus leaves the files that were done as they are, under the policies
    /// ``ConflictPolicy/rename`` and ``ConflictPolicy/fail`` and for `.file` destinations; not
    /// with ``ConflictPolicy/overwrite`` or ``ConflictPolicy/skip`` (they do what they say), nor
    /// with ``DownloadRequest/startOver``.
    public var alreadyComplete: Bool = false
    /// What each server gave, when the file came from several (its URL, its mirrors, those its
    /// server named); empty when one server sent it all.
    public var sources: [SourceReport] = []
}

/// What one server gave a download that several served.
public struct SourceReport: Sendable, Equatable {
    /// Its URL, redacted (no userinfo, no signature).
    public var url: String
    /// The bytes written from it.
    public var bytes: Int64
    /// Why it was set aside, when it was (a status, another length, a failed piece, slowness...).
    public var setAsideReason: String?
}
