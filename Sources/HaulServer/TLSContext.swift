#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CHaulTLS

/// An OpenSSL server context loaded with one certificate chain and private key.
///
/// Unchecked Sendable: the `SSL_CTX` is configured completely in `init` and afterwards only
/// passed to `SSL_new`, which OpenSSL documents as safe to call from several threads at once.
final class TLSContext: @unchecked Sendable {
    private let context: OpaquePointer

    /// Loads `identity`.
    ///
    /// - Throws: `HaulServerError` with OpenSSL's reason when a file is missing or the key
    ///   does not match the certificate.
    init(identity: HaulServer.TLSIdentity) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw HaulServerError("SSL_CTX_new: \(Self.takeError())")
        }
        self.context = context
        haul_ssl_ctx_set_default_modes(context)
        haul_ssl_ctx_set_default_options(context)
        _ = haul_ssl_ctx_require_tls12(context)
        guard SSL_CTX_use_certificate_chain_file(context, identity.certificateChainFile) == 1 else {
            throw HaulServerError("cannot load certificate chain \(identity.certificateChainFile): \(Self.takeError())")
        }
        guard SSL_CTX_use_PrivateKey_file(context, identity.privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            throw HaulServerError("cannot load private key \(identity.privateKeyFile): \(Self.takeError())")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw HaulServerError("private key does not match the certificate: \(Self.takeError())")
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// Performs the server side of a handshake on the blocking socket `fd`.
    ///
    /// - Returns: the `SSL` object (the caller frees it with `SSL_free`), or `nil` when the
    ///   handshake failed; the failure is the client's business, so it is not reported.
    func accept(fd: Int32) -> OpaquePointer? {
        guard let ssl = SSL_new(context) else { return nil }
        SSL_set_fd(ssl, fd)
        if SSL_accept(ssl) != 1 {
            _ = Self.takeError()
            SSL_free(ssl)
            return nil
        }
        return ssl
    }

    /// The oldest queued OpenSSL error as text; clears the thread's error queue.
    static func takeError() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let code = haul_ssl_take_error(&buffer, buffer.count)
        return code == 0 ? "unknown error" : String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
