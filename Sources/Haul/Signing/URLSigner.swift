#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulCore

/// Turns a URL into a freshly signed request, for storage services whose URLs expire.
///
/// The downloader calls ``sign(_:now:)`` for every attempt and every connection, so each
/// request carries a signature made moments before it is sent; resuming re-validates the file
/// (ETag, length), not the URL. Implementations must be cheap and safe to call concurrently.
/// Built in, in the module `HaulSigning`: `S3Presigner` (AWS Signature Version 4) and
/// `OSSSigner` (Aliyun OSS V1 and V4).
public protocol URLSigner: Sendable {
    /// Signs `url` as of `now`.
    ///
    /// - Parameters:
    ///   - url: the URL the user gave (`https://…`, or a scheme the signer knows such as `s3://`).
    ///   - now: the signing time; the signature is valid from then for the signer's lifetime.
    /// - Returns: the URL to fetch, any headers to send with it, and when it expires.
    /// - Throws: any error; Haul reports a ``DownloadError`` as it is and wraps others.
    func sign(_ url: URL, now: Date) async throws -> SignedRequest
}

/// What a ``URLSigner`` returns: the URL to fetch, extra headers, and its validity.
public struct SignedRequest: Sendable {
    /// The URL to request, signature included (for query-string signing).
    public var url: URL
    /// Headers to send with the request (for header signing, or a session token).
    public var headers: [(name: String, value: String)]
    /// When the signature was made.
    public var signedAt: Date
    /// When the signature stops being accepted, `nil` when it does not expire.
    public var expiresAt: Date?

    /// Creates a signed request.
    ///
    /// - Parameters:
    ///   - url: the URL to request.
    ///   - headers: extra request headers.
    ///   - signedAt: the signing time.
    ///   - expiresAt: when the signature expires (`nil`: never).
    public init(url: URL, headers: [(name: String, value: String)] = [], signedAt: Date, expiresAt: Date?) {
        self.url = url
        self.headers = headers
        self.signedAt = signedAt
        self.expiresAt = expiresAt
    }

    /// How long the signature is valid for, `nil` when it does not expire.
    public var lifetime: Duration? {
        expiresAt.map { .milliseconds(Int64(($0.timeIntervalSince(signedAt) * 1000).rounded())) }
    }

    /// Whether the signature has expired at `now`, or will within `margin`.
    ///
    /// - Parameters:
    ///   - now: the time to check.
    ///   - margin: how close to expiry counts as expired (time for the request to arrive).
    public func isExpired(at now: Date, margin: Duration = .zero) -> Bool {
        guard let expiresAt else { return false }
        let (seconds, attoseconds) = margin.components
        return now.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18) >= expiresAt
    }
}

/// A ``URLSigner`` made of a closure, for signing schemes Haul does not know.
public struct ClosureURLSigner: URLSigner {
    private let body: @Sendable (URL, Date) async throws -> SignedRequest

    /// Wraps a signing closure.
    ///
    /// - Parameter body: called like ``URLSigner/sign(_:now:)``.
    public init(_ body: @escaping @Sendable (URL, Date) async throws -> SignedRequest) {
        self.body = body
    }

    /// Calls the closure.
    public func sign(_ url: URL, now: Date) async throws -> SignedRequest {
        try await body(url, now)
    }
}
