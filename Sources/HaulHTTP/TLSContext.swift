import CHaulTLS
import HaulCore

/// How a TLS peer is verified.
package struct TLSSettings: Sendable, Hashable {
    /// A PEM file of CA certificates trusted besides the system store.
    package var extraCAFile: String?
    /// Whether certificates and host names go unchecked.
    package var insecure: Bool

    package init(extraCAFile: String? = nil, insecure: Bool = false) {
        self.extraCAFile = extraCAFile
        self.insecure = insecure
    }
}

/// An OpenSSL client context: trust store, verification mode, protocol floor, read-ahead, and
/// the sessions its connections resume (``TLSSessionCache``).
///
/// Unchecked Sendable: the `SSL_CTX` is fully configured in `init` and only read afterwards
/// (`SSL_new` is thread-safe on a configured context).
package final class TLSContext: @unchecked Sendable {
    package let context: OpaquePointer
    package let verifies: Bool
    /// The sessions of this context's connections, newest per target.
    package let sessions = TLSSessionCache()

    /// OpenSSL's own socket read buffer: 128 KiB. Larger costs more CPU, not less, because
    /// OpenSSL moves the unread rest of its buffer forward as records are consumed.
    package static let readAheadBufferSize = 128 * 1024

    /// TLS 1.2 suites: forward-secret AEAD first (AES-128 before AES-256), then OpenSSL's other strong ones.
    package static let tls12Ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
        + "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:HIGH:!aNULL:!eNULL:!MD5:!RC4:!3DES"

    /// Creates a context trusting the system store plus `options.extraCAFile`.
    ///
    /// - Throws: `invalidTLSSettings` when the CA file cannot be loaded.
    package init(options: TLSSettings) throws(HTTPClientError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw HTTPClientError(.tlsHandshakeFailed, "cannot create a TLS context: \(takeOpenSSLError())")
        }
        // Configured before `self` owns it: once every property is set, a throw runs `deinit`,
        // which would free the context a second time.
        try Self.configure(context, options)
        self.context = context
        self.verifies = !options.insecure
    }

    /// Sets up a new context; frees it and throws when the CA file cannot be loaded.
    private static func configure(_ context: OpaquePointer, _ options: TLSSettings) throws(HTTPClientError) {
        _ = haul_ssl_ctx_require_tls12(context)
        haul_ssl_ctx_set_default_options(context)
        haul_ssl_ctx_set_default_modes(context)
        // AES-128-GCM first, as browsers order it: as strong as needed and about a third cheaper
        // than AES-256-GCM for both ends (servers follow the client's order by default).
        _ = SSL_CTX_set_ciphersuites(context, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256")
        _ = SSL_CTX_set_cipher_list(context, Self.tls12Ciphers)
        haul_ssl_ctx_enable_read_ahead(context, Self.readAheadBufferSize)
        haul_ssl_ctx_enable_client_sessions(context, TLSSessionSlot.newSessionCallback)
        if options.insecure {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        } else {
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            SSL_CTX_set_default_verify_paths(context)
            if let file = options.extraCAFile {
                if SSL_CTX_load_verify_locations(context, file, nil) != 1 {
                    let reason = takeOpenSSLError()
                    SSL_CTX_free(context)
                    throw HTTPClientError(.invalidTLSSettings, "cannot load CA certificates from '\(file)': \(reason)")
                }
            }
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// The TLS library this process runs with, as its name and version ("OpenSSL 3.0.19"): the
    /// first two words of `OpenSSL_version(OPENSSL_VERSION)`, which the loaded library reports
    /// (not the headers of the build), so a library upgraded since the build names itself.
    package static var libraryVersion: String {
        String(cString: OpenSSL_version(OPENSSL_VERSION)).split(separator: " ").prefix(2).joined(separator: " ")
    }
}

/// The oldest queued OpenSSL error as text (the queue is cleared).
package func takeOpenSSLError() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    let code = haul_ssl_take_error(&buffer, buffer.count)
    if code == 0 { return "unknown TLS error" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
