#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Haul
import HaulSigning

/// `s3://bucket/key` and `oss://bucket/key`: the signer each needs, with credentials from the
/// usual environment variables.
///
/// - `s3://`: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, optional `AWS_SESSION_TOKEN`, and
///   `AWS_REGION` (else `AWS_DEFAULT_REGION`, else `us-east-1`); AWS Signature Version 4.
/// - `oss://`: `OSS_ACCESS_KEY_ID`, `OSS_ACCESS_KEY_SECRET`, optional `OSS_SESSION_TOKEN`, and
///   `OSS_REGION` (else `cn-hangzhou`); OSS V4 signatures.
///
/// `--endpoint` points either at a compatible server (MinIO, a local test server...).
enum StorageURL {
    /// The schemes that need a signer.
    static let schemes: Set<String> = ["s3", "oss"]

    /// The signer for `url`, or `nil` for an `http(s)` URL.
    ///
    /// - Parameters:
    ///   - url: the URL as given.
    ///   - endpoint: `--endpoint`.
    ///   - environment: where the credentials come from.
    /// - Throws: `invalidArgument` (exit 2) when the credentials are missing, naming the
    ///   variables (never their values).
    static func signer(for url: URL, endpoint: URL?,
                       environment: @autoclosure () -> [String: String]) throws(DownloadError) -> (any URLSigner)? {
        guard let scheme = url.scheme?.lowercased(), schemes.contains(scheme) else { return nil }
        // Read only for storage URLs: building the dictionary was a sixth of haul's user time
        // for 1,000 plain URLs.
        let environment = environment()
        func value(_ name: String) -> String? {
            guard let text = environment[name], !text.isEmpty else { return nil }
            return text
        }
        switch scheme {
        case "s3":
            guard let id = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") else {
                throw DownloadError(.invalidArgument, "s3:// URLs need AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment")
            }
            let credentials = S3Presigner.Credentials(accessKeyID: id, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
            return S3Presigner(credentials: credentials, region: value("AWS_REGION") ?? value("AWS_DEFAULT_REGION") ?? "us-east-1",
                               endpoint: endpoint)
        case "oss":
            guard let id = value("OSS_ACCESS_KEY_ID"), let secret = value("OSS_ACCESS_KEY_SECRET") else {
                throw DownloadError(.invalidArgument, "oss:// URLs need OSS_ACCESS_KEY_ID and OSS_ACCESS_KEY_SECRET in the environment")
            }
            let credentials = OSSSigner.Credentials(accessKeyID: id, accessKeySecret: secret, securityToken: value("OSS_SESSION_TOKEN"))
            return OSSSigner(credentials: credentials, region: value("OSS_REGION") ?? "cn-hangzhou", endpoint: endpoint)
        default:
            return nil
        }
    }
}
