#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HaulHTTP

/// A URL as ``DownloadRequest/checkedURL(_:parsed:)`` let it through: the URL, and the engine's
/// parse of its text when a download can reuse it (a command line checks every URL before it
/// starts any download, and need not parse them again).
public struct CheckedURL: Sendable, Equatable {
    /// The URL.
    public let url: URL
    /// The engine's parse of the URL's own text, or `nil` when the download parses it.
    package let parsed: HTTPURL?

    /// A checked URL and its parse.
    package init(url: URL, parsed: HTTPURL?) {
        self.url = url
        self.parsed = parsed
    }

    /// A URL another check let through (an `s3://` or `oss://` one that a signer turns into
    /// http(s)): the download parses what the signer makes of it.
    public init(unparsed url: URL) {
        self.init(url: url, parsed: nil)
    }
}

extension DownloadRequest {
    /// Takes `checked`'s URL, with its parse so that the download does not parse it again.
    public mutating func setURL(_ checked: CheckedURL) {
        url = checked.url
        parsedURL = checked.parsed
    }

    /// Checks URL text the way every download checks its URL, with no network I/O.
    ///
    /// Accepts an absolute `http` or `https` URL whose host is an ASCII name, an international
    /// name (which `URL(string:)` turns into its `xn--` form), an IPv4 address or a bracketed
    /// IPv6 literal, with an optional port from 1 to 65535, no spaces or control characters and
    /// well-formed `%` escapes. Stricter than `URL(string:)`, which quietly encodes a space or a
    /// stray `%`. A command line checks every URL with it before starting any download.
    ///
    /// - Parameter text: the URL as typed.
    /// - Returns: the URL.
    /// - Throws: `.unsupportedScheme` for a scheme other than http(s); `.invalidURL` otherwise.
    ///   The message does not repeat the URL (callers print it, redacted): `invalid URL: <reason>`.
    public static func validatedURL(_ text: String) throws(DownloadError) -> URL {
        try validatedURL(text, parsed: URL(string: text))
    }

    /// ``validatedURL(_:)`` for a caller that has `URL(string: text)` already (a command line
    /// checking 1,000 URLs parsed each of them twice).
    ///
    /// - Parameters:
    ///   - text: the URL as typed.
    ///   - url: `URL(string: text)`, of this very `text`.
    /// - Returns: the URL.
    /// - Throws: as ``validatedURL(_:)``.
    package static func validatedURL(_ text: String, parsed url: URL?) throws(DownloadError) -> URL {
        try checkedURL(text, parsed: url).url
    }

    /// ``validatedURL(_:parsed:)`` that also returns the engine's parse of the URL, for
    /// ``parsedURL``: `nil` when `URL(string:)` wrote the URL otherwise than `text` (an
    /// international host, a non-ASCII path), since a download parses the URL's own text.
    ///
    /// - Throws: as ``validatedURL(_:)``.
    package static func checkedURL(_ text: String, parsed url: URL?) throws(DownloadError) -> CheckedURL {
        assert(url == URL(string: text), "parsed must be URL(string: text)")
        var parsed: HTTPURL?
        do throws(HTTPClientError) {
            parsed = try HTTPURL.parse(text)
        } catch where error.kind == .invalidURL && hasInternationalHost(text) && url != nil {
            // The host as URL(string:) converted it; the rest of the text as typed, strictly.
            try checkInternational(text, converted: url!.absoluteString)
        } catch {
            throw withoutQuotedURL(DownloadError(error), quoted: text)
        }
        guard let url else { throw DownloadError(.invalidURL, "invalid URL") }
        return CheckedURL(url: url, parsed: url.absoluteString == text ? parsed : nil)
    }

    /// Whether the authority of `text` (after `://`, up to `/`, `?` or `#`) has a non-ASCII byte.
    private static func hasInternationalHost(_ text: String) -> Bool {
        authority(of: Array(text.utf8)).map { $0.contains { $0 >= 0x80 } } ?? false
    }

    /// The authority's bytes, or `nil` when there is no `://`.
    private static func authority(of bytes: [UInt8]) -> ArraySlice<UInt8>? {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), bytes[colon...].starts(with: "://".utf8) else { return nil }
        let start = colon + 3
        let end = bytes[start...].firstIndex { isOneOf($0, "/?#") } ?? bytes.endIndex
        return bytes[start..<end]
    }

    /// Parses the converted URL (its `xn--` host) and the typed text with a placeholder host.
    private static func checkInternational(_ text: String, converted: String) throws(DownloadError) {
        let bytes = Array(text.utf8)
        guard let authority = authority(of: bytes) else { return }
        let placeholder = String(decoding: bytes[..<authority.startIndex] + Array("h".utf8) + bytes[authority.endIndex...],
                                 as: UTF8.self)
        do throws(HTTPClientError) {
            _ = try HTTPURL.parse(placeholder)
            _ = try HTTPURL.parse(converted)
        } catch {
            throw withoutQuotedURL(withoutQuotedURL(DownloadError(error), quoted: placeholder), quoted: converted)
        }
    }

    /// `invalid URL '<url>': <reason>` as `invalid URL: <reason>`; other errors unchanged.
    private static func withoutQuotedURL(_ error: DownloadError, quoted url: String) -> DownloadError {
        let prefix = "invalid URL '\(quotedForMessage(url))': "
        guard error.code == .invalidURL, error.message.hasPrefix(prefix) else { return error }
        return DownloadError(.invalidURL, "invalid URL: " + error.message.dropFirst(prefix.count))
    }
}

extension DownloadRequest {
    /// The URL text with its secrets removed, safe to print, log or store.
    ///
    /// The same redaction the library applies to its own messages and events: the userinfo is
    /// removed and the value of every query or fragment parameter whose name looks secret
    /// (signatures, tokens, keys, passwords, credentials, sessions, policies, `X-Amz-*`,
    /// `X-Oss-*`) becomes `REDACTED`. Text that is not a valid URL is redacted too; there, an
    /// `@` after a `/` also ends the userinfo, since a password may hold a raw `/`.
    ///
    /// - Parameter text: a URL as typed by a user, valid or not.
    /// - Returns: the text without its secrets.
    public static func redactedURL(_ text: String) -> String {
        let parses = (try? HTTPURL.parse(text)) != nil
        return redactedURLString(text, aggressive: !parses)
    }

    /// `text` with every occurrence of `secret` replaced by `REDACTED`, also where some of its
    /// bytes are percent-encoded (as they may be in a URL); an empty secret leaves it as it is.
    public static func hiding(_ secret: String, in text: String) -> String {
        redactingSecret(secret, in: text)
    }
}
