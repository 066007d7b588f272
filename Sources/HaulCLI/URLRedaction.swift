import Haul

/// Hides the secrets in a URL before it is printed.
///
/// The library's redaction (``DownloadRequest/redactedURL(_:)``), so the command's lines and
/// the library's messages and events hide the same things: the userinfo (`user:password@`, also
/// when an invalid URL's password holds a raw `/`) and the value of every query or fragment
/// parameter whose name looks like a credential (signature, token, key, secret, password, auth,
/// credential, session, policy, `X-Amz-*`...).
enum URLRedaction {
    /// The URL text with its userinfo removed and its secret parameter values replaced.
    static func redact(_ url: String) -> String {
        DownloadRequest.redactedURL(url)
    }
}
