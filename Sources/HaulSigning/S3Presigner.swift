import Haul
import HaulCore
import HaulCrypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Presigns GET URLs with AWS Signature Version 4 in the query string, for Amazon S3 and
/// S3-compatible servers (MinIO, Ceph, moto, R2, ...).
///
/// Accepts `s3://bucket/key` (the object URL is built from ``region``, ``endpoint`` and
/// ``addressingStyle``) or an `http(s)` object URL, which is signed as it is. The result carries
/// `X-Amz-Algorithm`, `X-Amz-Credential`, `X-Amz-Date`, `X-Amz-Expires`, `X-Amz-SignedHeaders=host`,
/// `X-Amz-Security-Token` with temporary credentials, and `X-Amz-Signature`; the payload is
/// `UNSIGNED-PAYLOAD` and only `host` is signed, so Haul may add `Range` and other headers.
/// See <https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html>.
public struct S3Presigner: URLSigner {
    /// An access key, with its session token for temporary (STS) credentials.
    public struct Credentials: Sendable, CustomStringConvertible {
        /// The access key ID (`AWS_ACCESS_KEY_ID`).
        public var accessKeyID: String
        /// The secret access key (`AWS_SECRET_ACCESS_KEY`); never printed.
        public var secretAccessKey: String
        /// The session token of temporary credentials (`AWS_SESSION_TOKEN`); never printed.
        public var sessionToken: String?

        /// Creates credentials.
        public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil) {
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
            self.sessionToken = sessionToken
        }

        /// The key ID only: secrets are never part of a description.
        public var description: String {
            "Credentials(accessKeyID: \(accessKeyID), secret: <redacted>\(sessionToken == nil ? "" : ", session token: <redacted>"))"
        }
    }

    /// Where the bucket name goes in an object URL built from `s3://bucket/key`.
    public enum AddressingStyle: Sendable, Hashable {
        /// `https://bucket.host/key` (AWS's default).
        case virtualHosted
        /// `https://host/bucket/key` (most S3-compatible servers, and bucket names with dots).
        case path
    }

    /// The longest lifetime AWS accepts: seven days.
    public static let maximumExpiry = 604_800

    /// The key that signs.
    public var credentials: Credentials
    /// The AWS region in the credential scope (`us-east-1`, `eu-west-3`, ...).
    public var region: String
    /// The server for `s3://` URLs: `nil` for AWS (`https://s3.REGION.amazonaws.com`), or an
    /// S3-compatible server such as `http://127.0.0.1:9000`.
    public var endpoint: URL?
    /// How `s3://` URLs address the bucket; `nil` chooses: path style with a custom endpoint or a
    /// bucket name that is not a DNS label, virtual-hosted otherwise.
    public var addressingStyle: AddressingStyle?
    /// Seconds a signature stays valid, 1 to ``maximumExpiry``.
    public var expiresIn: Int

    /// Creates a presigner.
    ///
    /// - Parameters:
    ///   - credentials: the access key.
    ///   - region: the region in the credential scope.
    ///   - endpoint: a custom server for `s3://` URLs.
    ///   - addressingStyle: forces virtual-hosted or path style.
    ///   - expiresIn: lifetime of a signature in seconds (clamped to 1...604800).
    public init(credentials: Credentials, region: String = "us-east-1", endpoint: URL? = nil,
                addressingStyle: AddressingStyle? = nil, expiresIn: Int = 3600) {
        self.credentials = credentials
        self.region = region
        self.endpoint = endpoint
        self.addressingStyle = addressingStyle
        self.expiresIn = min(max(expiresIn, 1), Self.maximumExpiry)
    }

    /// Signs `url` (see the type's description).
    ///
    /// - Throws: ``DownloadError`` `invalidURL` or `unsupportedScheme` for a URL it cannot sign.
    public func sign(_ url: URL, now: Date) async throws -> SignedRequest {
        try presign(url, now: now)
    }

    /// The synchronous core of ``sign(_:now:)``.
    func presign(_ url: URL, now: Date) throws(DownloadError) -> SignedRequest {
        let target = try target(for: url)
        let time = SigningTime(now)
        let scope = "\(time.day)/\(region)/s3/aws4_request"
        let expires = min(max(expiresIn, 1), Self.maximumExpiry)
        // Re-signing a presigned URL replaces its old signature parameters.
        var parameters = target.query.filter { !Self.signatureParameters.contains($0.name) }
        parameters += [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            ("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope)"),
            ("X-Amz-Date", time.timestamp),
            ("X-Amz-Expires", String(expires)),
            ("X-Amz-SignedHeaders", "host"),
        ]
        if let token = credentials.sessionToken { parameters.append(("X-Amz-Security-Token", token)) }
        let query = Self.canonicalQuery(parameters)
        let canonicalRequest = [
            "GET",
            SigningTarget.encode(target.path, keepingSlashes: true),
            query.map { "\($0.name)=\($0.value)" }.joined(separator: "&"),
            "host:\(target.hostHeader)\n",
            "host",
            "UNSIGNED-PAYLOAD",
        ].joined(separator: "\n")
        let stringToSign = Self.stringToSign(timestamp: time.timestamp, scope: scope, canonicalRequest: canonicalRequest)
        let signature = Hex.encode(HMAC.code(.sha256, key: signingKey(day: time.day), message: stringToSign))
        let signed = try target.url(encodedQuery: query + [("X-Amz-Signature", signature)])
        return SignedRequest(url: signed, signedAt: now, expiresAt: now.addingTimeInterval(Double(expires)))
    }

    /// The query parameters a presigned URL carries.
    static let signatureParameters: Set<String> = [
        "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
        "X-Amz-Security-Token", "X-Amz-Signature",
    ]

    /// The object URL for `bucket` and `key`, unsigned.
    ///
    /// - Throws: `invalidURL` when the endpoint or bucket cannot make a URL.
    public func objectURL(bucket: String, key: String) throws(DownloadError) -> URL {
        try target(bucket: bucket, key: key).url(encodedQuery: []).removingEmptyQuery()
    }

    /// `AWS4-HMAC-SHA256`, the timestamp, the scope and the hex SHA-256 of the canonical request.
    static func stringToSign(timestamp: String, scope: String, canonicalRequest: String) -> String {
        "AWS4-HMAC-SHA256\n\(timestamp)\n\(scope)\n\(Hex.encode(Digest.hash(.sha256, Array(canonicalRequest.utf8))))"
    }

    /// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, day), region), "s3"), "aws4_request").
    func signingKey(day: String) -> [UInt8] {
        var key = Array("AWS4\(credentials.secretAccessKey)".utf8)
        for part in [day, region, "s3", "aws4_request"] { key = HMAC.code(.sha256, key: key, message: part) }
        return key
    }

    /// Parameters encoded (RFC 3986) and sorted by encoded name, then value; an empty value
    /// keeps its `=`.
    static func canonicalQuery(_ parameters: [(String, String)]) -> [(name: String, value: String)] {
        parameters.map { (name: SigningTarget.encode($0.0), value: SigningTarget.encode($0.1)) }
            .sorted { $0.name != $1.name ? $0.name < $1.name : $0.value < $1.value }
    }

    private func target(for url: URL) throws(DownloadError) -> SigningTarget {
        guard url.scheme?.lowercased() == "s3" else { return try SigningTarget(url: url) }
        let (bucket, key) = try BucketURL.split(url, scheme: "s3")
        return try target(bucket: bucket, key: key)
    }

    private func target(bucket: String, key: String) throws(DownloadError) -> SigningTarget {
        let base = try endpoint.map { url throws(DownloadError) in try SigningTarget(url: url) }
            ?? SigningTarget(scheme: "https", host: "s3.\(region).amazonaws.com", port: nil, path: "/", query: [])
        let style = addressingStyle
            ?? (endpoint == nil && BucketURL.isDNSLabel(bucket) ? .virtualHosted : .path)
        var prefix = base.path.hasSuffix("/") ? String(base.path.dropLast()) : base.path
        var host = base.host
        switch style {
        case .virtualHosted: host = "\(bucket).\(host)"
        case .path: prefix += "/\(bucket)"
        }
        return SigningTarget(scheme: base.scheme, host: host, port: base.port, path: "\(prefix)/\(key)", query: [])
    }
}

/// Splitting of `s3://bucket/key` and `oss://bucket/key` URLs.
enum BucketURL {
    /// The bucket (the URL's host) and the decoded key (the path without its first `/`).
    ///
    /// - Throws: `invalidURL` when the bucket or the key is missing.
    static func split(_ url: URL, scheme: String) throws(DownloadError) -> (bucket: String, key: String) {
        let text = url.absoluteString
        let rest = text.dropFirst(scheme.count + 3)     // "s3://"
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let bucket = String(rest[..<slash])
        let key = SigningTarget.percentDecoded(rest[slash...].dropFirst().prefix { $0 != "?" && $0 != "#" })
        guard !bucket.isEmpty, !key.isEmpty else {
            throw DownloadError(.invalidURL, "'\(scheme)://\(bucket)/…' needs a bucket and an object key")
        }
        return (bucket, key)
    }

    /// Whether `bucket` can be the first label of a host name (lowercase letters, digits and
    /// hyphens, 3 to 63 characters, no dots: a dotted name breaks the TLS wildcard certificate).
    static func isDNSLabel(_ bucket: String) -> Bool {
        (3...63).contains(bucket.utf8.count) && bucket.utf8.allSatisfy {
            ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "-")
        } && !bucket.hasPrefix("-") && !bucket.hasSuffix("-")
    }
}

extension URL {
    /// The URL without a trailing empty `?`.
    fileprivate func removingEmptyQuery() -> URL {
        let text = absoluteString
        guard text.hasSuffix("?"), let url = URL(string: String(text.dropLast())) else { return self }
        return url
    }
}
