import HaulCore
import HaulCrypto
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulHTTP

/// Signs GET URLs for Aliyun (Alibaba Cloud) Object Storage Service, with the V4 algorithm
/// (`x-oss-signature-version=OSS4-HMAC-SHA256`, the default) or the older V1 one
/// (`OSSAccessKeyId`, `Expires`, `Signature`).
///
/// Accepts `oss://bucket/key` (built into `https://bucket.oss-REGION.aliyuncs.com/key`, or onto
/// ``endpoint``) or an `http(s)` object URL: virtual-hosted (`bucket.host/key`, the bucket is the
/// first label of the host) unless its host is the custom ``endpoint``'s, which means path
/// style (`host/bucket/key`). No header is signed, so Haul may add `Range` freely.
/// See <https://www.alibabacloud.com/help/en/oss/developer-reference/add-signatures-to-urls>
/// (V4) and <https://www.alibabacloud.com/help/en/oss/developer-reference/ddd-signatures-to-urls> (V1).
public struct OSSSigner: URLSigner {
    /// An AccessKey pair, with the token of temporary (STS) credentials.
    public struct Credentials: Sendable, CustomStringConvertible {
        /// The AccessKey ID (`OSS_ACCESS_KEY_ID`).
        public var accessKeyID: String
        /// The AccessKey secret (`OSS_ACCESS_KEY_SECRET`); never printed.
        public var accessKeySecret: String
        /// The STS security token; never printed.
        public var securityToken: String?

        /// Creates credentials.
        public init(accessKeyID: String, accessKeySecret: String, securityToken: String? = nil) {
            self.accessKeyID = accessKeyID
            self.accessKeySecret = accessKeySecret
            self.securityToken = securityToken
        }

        /// The key ID only: secrets are never part of a description.
        public var description: String {
            "Credentials(accessKeyID: \(accessKeyID), secret: <redacted>\(securityToken == nil ? "" : ", security token: <redacted>"))"
        }
    }

    /// The signature algorithm.
    public enum Version: Sendable, Hashable {
        /// HMAC-SHA1 over the verb, `Expires` and the resource (`Signature=` base64).
        case v1
        /// HMAC-SHA256 with a derived key scoped to day, region and product (`x-oss-signature=` hex).
        case v4
    }

    /// The longest lifetime of a V4 signature: seven days.
    public static let maximumExpiry = 604_800

    /// The key that signs.
    public var credentials: Credentials
    /// V4 (default) or V1.
    public var version: Version
    /// The region ID without the `oss-` prefix (`cn-hangzhou`), in the V4 scope and default host.
    public var region: String
    /// A custom server for `oss://` URLs (path style); `nil` for `https://oss-REGION.aliyuncs.com`.
    public var endpoint: URL?
    /// Seconds a signature stays valid (1 to ``maximumExpiry``).
    public var expiresIn: Int

    /// Creates a signer.
    ///
    /// - Parameters:
    ///   - credentials: the AccessKey pair.
    ///   - version: the signature algorithm.
    ///   - region: the region ID (`cn-hangzhou`).
    ///   - endpoint: a custom server for `oss://` URLs.
    ///   - expiresIn: lifetime of a signature in seconds (clamped to 1...604800).
    public init(credentials: Credentials, version: Version = .v4, region: String = "cn-hangzhou",
                endpoint: URL? = nil, expiresIn: Int = 3600) {
        self.credentials = credentials
        self.version = version
        self.region = region
        self.endpoint = endpoint
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
        let (target, bucket, key) = try resolve(url)
        let time = SigningTime(now)
        let expires = min(max(expiresIn, 1), Self.maximumExpiry)
        let query: [(name: String, value: String)]
        switch version {
        case .v1:
            let parameters = target.query.filter { !["OSSAccessKeyId", "Expires", "Signature", "security-token"].contains($0.name) }
            query = v1Query(bucket: bucket, key: key, parameters: parameters, expires: time.secondsSince1970 + Int64(expires))
        case .v4:
            let parameters = target.query.filter { !Self.v4SignatureParameters.contains($0.name) }
            query = v4Query(method: "GET", bucket: bucket, key: key, parameters: parameters, headers: [], time: time, expires: expires)
        }
        let signed = try target.url(encodedQuery: query)
        return SignedRequest(url: signed, signedAt: now, expiresAt: now.addingTimeInterval(Double(expires)))
    }

    // MARK: V1

    /// The V1 string to sign: verb, Content-MD5, Content-Type, Expires (or Date), the `x-oss-`
    /// headers (`name:value\n`, sorted) and the canonical resource, separated by newlines.
    static func v1StringToSign(verb: String, contentMD5: String = "", contentType: String = "", expires: String,
                               ossHeaders: [(String, String)] = [], resource: String) -> String {
        let headers = ossHeaders.map { ($0.0.lowercased(), String($0.1.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())) }
            .filter { $0.0.hasPrefix("x-oss-") }
            .sorted { $0.0 < $1.0 }
            .map { "\($0.0):\($0.1)\n" }.joined()
        return "\(verb)\n\(contentMD5)\n\(contentType)\n\(expires)\n\(headers)\(resource)"
    }

    /// Base64 of the HMAC-SHA1 of `stringToSign` under `secret`.
    static func v1Signature(_ stringToSign: String, secret: String) -> String {
        Base64.encode(HMAC.code(.sha1, key: Array(secret.utf8), message: stringToSign))
    }

    /// Query parameters that take part in the V1 canonical resource (sub-resources and
    /// response overrides), from the OSS documentation.
    static let v1SubResources: Set<String> = [
        "acl", "append", "bucketInfo", "cname", "comp", "cors", "delete", "endTime", "img", "lifecycle", "live",
        "location", "logging", "objectMeta", "partNumber", "position", "qos", "referer", "replication",
        "replicationLocation", "replicationProgress", "response-cache-control", "response-content-disposition",
        "response-content-encoding", "response-content-language", "response-content-type", "response-expires",
        "restore", "security-token", "startTime", "status", "style", "styleName", "symlink", "tagging",
        "uploadId", "uploads", "versionId", "versioning", "versions", "vod", "website", "x-oss-process",
        "x-oss-traffic-limit",
    ]

    private func v1Query(bucket: String, key: String, parameters: [(name: String, value: String)], expires: Int64) -> [(name: String, value: String)] {
        var all = parameters
        if let token = credentials.securityToken { all.append((name: "security-token", value: token)) }
        let subresources = all.filter { Self.v1SubResources.contains($0.name) }.sorted { $0.name < $1.name }
            .map { $0.value.isEmpty ? $0.name : "\($0.name)=\($0.value)" }
        let resource = "/\(bucket)/\(key)" + (subresources.isEmpty ? "" : "?" + subresources.joined(separator: "&"))
        let stringToSign = Self.v1StringToSign(verb: "GET", expires: String(expires), resource: resource)
        let signature = Self.v1Signature(stringToSign, secret: credentials.accessKeySecret)
        return [
            (name: "OSSAccessKeyId", value: SigningTarget.encode(credentials.accessKeyID)),
            (name: "Expires", value: String(expires)),
            (name: "Signature", value: SigningTarget.encode(signature)),
        ] + all.map { (name: SigningTarget.encode($0.name), value: SigningTarget.encode($0.value)) }
    }

    // MARK: V4

    /// The query parameters a V4 signed URL carries (re-signing replaces them; others such as
    /// `x-oss-process` are the user's and stay).
    static let v4SignatureParameters: Set<String> = [
        "x-oss-signature-version", "x-oss-credential", "x-oss-date", "x-oss-expires", "x-oss-signature",
        "x-oss-security-token", "x-oss-additional-headers",
    ]

    /// The V4 query (canonically encoded, `x-oss-signature` last) for a request.
    ///
    /// - Parameters:
    ///   - method: the HTTP method (GET for downloads; others for the published test vectors).
    ///   - bucket: the bucket, part of the canonical URI.
    ///   - key: the decoded object key.
    ///   - parameters: the request's own decoded query parameters.
    ///   - headers: request headers; `content-type`, `content-md5` and `x-oss-*` are signed.
    ///   - time: the signing time.
    ///   - expires: seconds the signature stays valid.
    func v4Query(method: String, bucket: String, key: String, parameters: [(name: String, value: String)],
                 headers: [(String, String)], time: SigningTime, expires: Int) -> [(name: String, value: String)] {
        let scope = "\(time.day)/\(region)/oss/aliyun_v4_request"
        var encoded: [String: String] = [:]
        for parameter in parameters { encoded[SigningTarget.encode(parameter.name)] = SigningTarget.encode(parameter.value) }
        encoded["x-oss-signature-version"] = "OSS4-HMAC-SHA256"
        encoded["x-oss-date"] = time.timestamp
        encoded["x-oss-expires"] = String(expires)
        encoded["x-oss-credential"] = SigningTarget.encode("\(credentials.accessKeyID)/\(scope)")
        if let token = credentials.securityToken { encoded["x-oss-security-token"] = SigningTarget.encode(token) }
        let query = encoded.map { (name: $0.key, value: $0.value) }
            .sorted { $0.name != $1.name ? $0.name < $1.name : $0.value < $1.value }
        let signedHeaders = headers.map { ($0.0.lowercased(), $0.1) }
            .filter { $0.0.hasPrefix("x-oss-") || $0.0 == "content-type" || $0.0 == "content-md5" }
            .sorted { $0.0 < $1.0 }
        let canonicalRequest = [
            method,
            SigningTarget.encode("/\(bucket)/\(key)", keepingSlashes: true),
            query.map { $0.value.isEmpty ? $0.name : "\($0.name)=\($0.value)" }.joined(separator: "&"),
            signedHeaders.map { "\($0.0):\($0.1)\n" }.joined(),
            "",                                    // additional headers: none
            "UNSIGNED-PAYLOAD",
        ].joined(separator: "\n")
        let hashed = Hex.encode(Digest.hash(.sha256, Array(canonicalRequest.utf8)))
        let stringToSign = "OSS4-HMAC-SHA256\n\(time.timestamp)\n\(scope)\n\(hashed)"
        var signingKey = Array("aliyun_v4\(credentials.accessKeySecret)".utf8)
        for part in [time.day, region, "oss", "aliyun_v4_request"] { signingKey = HMAC.code(.sha256, key: signingKey, message: part) }
        let signature = Hex.encode(HMAC.code(.sha256, key: signingKey, message: stringToSign))
        return query + [(name: "x-oss-signature", value: signature)]
    }

    // MARK: URLs

    private func resolve(_ url: URL) throws(DownloadError) -> (SigningTarget, bucket: String, key: String) {
        if url.scheme?.lowercased() == "oss" {
            let (bucket, key) = try BucketURL.split(url, scheme: "oss")
            if let endpoint {
                var target = try SigningTarget(url: endpoint)
                let prefix = target.path.hasSuffix("/") ? String(target.path.dropLast()) : target.path
                target.path = "\(prefix)/\(bucket)/\(key)"
                target.query = []
                return (target, bucket, key)
            }
            let target = SigningTarget(scheme: "https", host: "\(bucket).oss-\(region).aliyuncs.com", port: nil, path: "/\(key)", query: [])
            return (target, bucket, key)
        }
        let target = try SigningTarget(url: url)
        let pathStyle = try endpoint.map { endpoint throws(DownloadError) in try SigningTarget(url: endpoint).host == target.host } ?? false
        if pathStyle {
            let parts = target.path.dropFirst().split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw DownloadError(.invalidURL, "an OSS URL on the endpoint needs /bucket/key as its path")
            }
            return (target, String(parts[0]), String(parts[1]))
        }
        guard let dot = target.host.firstIndex(of: "."), target.path.count > 1 else {
            throw DownloadError(.invalidURL, "an OSS URL needs bucket.host/key")
        }
        return (target, String(target.host[..<dot]), String(target.path.dropFirst()))
    }
}
