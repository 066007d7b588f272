import HaulCore
import HaulHTTP

extension DownloadError {
    /// The download's error for a failure of the HTTP layer: the same words, under the code of
    /// its kind.
    package init(_ error: HTTPClientError) {
        self.init(Self.code(for: error.kind), error.message)
        unreachableOrigin = error.unreachableOrigin
    }

    /// The code of each kind of HTTP failure.
    static func code(for kind: HTTPClientError.Kind) -> Code {
        switch kind {
        case .cancelled: .cancelled
        case .invalidURL: .invalidURL
        case .unsupportedScheme: .unsupportedScheme
        case .invalidRequest, .invalidTLSSettings: .invalidArgument
        case .dnsFailure: .dnsFailure
        case .connectionRefused: .connectionRefused
        case .connectionReset: .connectionReset
        case .connectTimeout: .connectTimeout
        case .headerTimeout: .headerTimeout
        case .stalled: .stalled
        case .truncatedBody: .truncatedBody
        case .networkError: .networkError
        case .tlsCertificateUntrusted: .tlsCertificateUntrusted
        case .tlsHostnameMismatch: .tlsHostnameMismatch
        case .tlsHandshakeFailed: .tlsHandshakeFailed
        case .malformedResponse: .malformedResponse
        case .headersTooLarge: .headersTooLarge
        case .invalidContentLength: .invalidContentLength
        case .invalidChunk: .invalidChunk
        case .redirectRefused: .redirectRefused
        case .tooManyRedirects: .tooManyRedirects
        case .invalidProxy: .invalidArgument
        case .proxyAuthenticationRefused: .authenticationRefused
        case .tunnelRefused: .tunnelRefused
        case .proxyFailure: .proxyFailure
        case .resourceExhausted: .resourceExhausted
        case .internalError: .internalError
        }
    }

    /// The download's error for a thread, descriptor or memory the system refused.
    package init(_ error: ResourceError) {
        self.init(.resourceExhausted, error.message)
    }
}

/// Runs `body`, giving a refused resource the download's code ``DownloadError/Code/resourceExhausted``.
package func mappingResourceErrors<T>(_ body: () throws(ResourceError) -> T) throws(DownloadError) -> T {
    do throws(ResourceError) {
        return try body()
    } catch {
        throw DownloadError(error)
    }
}

/// Runs `body`, giving an HTTP failure the download's code (see ``DownloadError/init(_:)``).
package func mappingHTTPErrors<T>(_ body: () throws(HTTPClientError) -> T) throws(DownloadError) -> T {
    do throws(HTTPClientError) {
        return try body()
    } catch {
        throw DownloadError(error)
    }
}
