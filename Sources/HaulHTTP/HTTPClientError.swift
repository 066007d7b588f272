import HaulCore
/// The one error type of the HTTP layer: what went wrong on the wire, in words, with no notion of
/// files or downloads. The engine maps each ``Kind`` to its own error code.
package struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    package enum Kind: String, Sendable, CaseIterable {
        /// The operation was cancelled through its ``CancellationSignal``.
        case cancelled
        /// A URL could not be parsed.
        case invalidURL
        /// A URL's scheme is not `http` or `https`.
        case unsupportedScheme
        /// A request could not be built (a bad header name or value, a bad range).
        case invalidRequest
        /// A CA file or another TLS setting could not be loaded.
        case invalidTLSSettings
        /// The host name could not be resolved.
        case dnsFailure
        /// The server refused the connection.
        case connectionRefused
        /// The connection was reset or closed while in use.
        case connectionReset
        /// No connection (or TLS session) within the connect timeout.
        case connectTimeout
        /// The response head did not arrive in time.
        case headerTimeout
        /// No byte arrived for the stall timeout, or the body came slower than its floor.
        case stalled
        /// The body ended before its announced length or last chunk.
        case truncatedBody
        /// Any other socket failure.
        case networkError
        /// The server's certificate is not trusted.
        case tlsCertificateUntrusted
        /// The certificate does not name the host.
        case tlsHostnameMismatch
        /// The TLS handshake failed for another reason.
        case tlsHandshakeFailed
        /// The response is not valid HTTP/1.x.
        case malformedResponse
        /// The response head is larger than its limits.
        case headersTooLarge
        /// `Content-Length` is invalid or contradicts itself.
        case invalidContentLength
        /// A chunk of a chunked body is malformed.
        case invalidChunk
        /// A redirect was refused (scheme, https to http, missing or bad `Location`).
        case redirectRefused
        /// Redirects loop or exceed the hop limit.
        case tooManyRedirects
        /// A proxy URL is malformed or names an unsupported scheme.
        case invalidProxy
        /// A proxy refused to serve: 407 (with or without credentials), or 401/403 to CONNECT, or
        /// a SOCKS5 proxy that refused the credentials.
        case proxyAuthenticationRefused
        /// A CONNECT answer that is not a tunnel (a non-2xx status, data after a 2xx head).
        case tunnelRefused
        /// A SOCKS5 proxy failed the handshake or could not reach the origin.
        case proxyFailure
        /// The system had no descriptor, thread or memory to give (`EMFILE`, `EAGAIN`...).
        case resourceExhausted
        /// A broken promise inside the layer.
        case internalError
    }

    /// What kind of failure this is.
    package var kind: Kind
    /// One readable sentence; URLs in it are redacted.
    package var message: String
    /// The origin no TCP connection could be made to (refused, not resolved, timed out), when
    /// that is the failure.
    package var unreachableOrigin: HTTPURL.Origin?

    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// `kind: message`.
    package var description: String { "\(kind.rawValue): \(message)" }

    /// The error of a cancelled operation.
    package static let cancelled = HTTPClientError(.cancelled, "cancelled")

    /// A thread, descriptor or memory the system refused, as ``Kind/resourceExhausted``.
    package init(_ error: ResourceError) {
        self.init(.resourceExhausted, error.message)
    }

    /// Runs `body`, turning a refused resource into ``Kind/resourceExhausted``.
    package static func mapping<T>(_ body: () throws(ResourceError) -> T) throws(HTTPClientError) -> T {
        do throws(ResourceError) {
            return try body()
        } catch {
            throw HTTPClientError(error)
        }
    }
}
