// Tiny shim over OpenSSL: the headers Haul needs, and functions for what OpenSSL
// exposes only as macros (Swift cannot call a C macro with arguments).
#ifndef CHAUL_TLS_H
#define CHAUL_TLS_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

/// SSL_set_tlsext_host_name (a macro): sets the SNI name. Returns 1 on success.
int haul_ssl_set_sni(SSL *ssl, const char *name);

/// Layers `inner` over the established session `outer` (TLS inside TLS, for an https:// proxy's
/// tunnel): `inner` reads and writes through a BIO_f_ssl filter on `outer`, which it does not
/// own (BIO_set_ssl is a macro). Returns 1 on success.
int haul_ssl_set_bio_over_ssl(SSL *inner, SSL *outer);

/// SSL_CTX_set_mode(ctx, SSL_MODE_AUTO_RETRY | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE).
void haul_ssl_ctx_set_default_modes(SSL_CTX *ctx);

/// SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION).
int haul_ssl_ctx_require_tls12(SSL_CTX *ctx);

/// Disables TLS renegotiation and compression (SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION).
/// An EOF without close_notify stays an error (see haul_ssl_error_is_unexpected_eof), so a body
/// delimited only by the connection's close can be told apart from a cut one.
void haul_ssl_ctx_set_default_options(SSL_CTX *ctx);

/// Whether the oldest queued OpenSSL error is "unexpected EOF while reading" (the peer closed
/// the TCP connection without a TLS close_notify). Does not clear the queue.
int haul_ssl_error_is_unexpected_eof(void);

/// SSL_CTX_set_read_ahead(ctx, 1) plus a large default read buffer, so one socket read fills
/// many TLS records and SSL_read mostly decrypts from memory.
void haul_ssl_ctx_enable_read_ahead(SSL_CTX *ctx, size_t buffer_length);

/// Turns on ctx's client session cache without OpenSSL's internal store (SSL_SESS_CACHE_CLIENT |
/// SSL_SESS_CACHE_NO_INTERNAL, a macro): OpenSSL hands every new session of its connections to
/// new_session, during the handshake (TLS 1.2) or at a read after it (TLS 1.3 tickets). The
/// callback keeps the session's reference by returning 1; with 0 OpenSSL frees it.
void haul_ssl_ctx_enable_client_sessions(SSL_CTX *ctx, int (*new_session)(SSL *, SSL_SESSION *));

/// The ex_data index under which a client connection keeps where its new sessions go
/// (SSL_get_ex_new_index is a macro); made on first use, the same for the whole process.
/// Returns -1 when OpenSSL cannot make one.
int haul_ssl_session_slot_index(void);

/// Writes the text of the oldest queued OpenSSL error into buffer (NUL-terminated) and clears
/// the queue. Returns the error code (0 when the queue was empty).
unsigned long haul_ssl_take_error(char *buffer, size_t length);

/// Digest algorithms for the haul_digest_* and haul_hmac functions.
enum {
    HAUL_DIGEST_SHA256 = 1,
    HAUL_DIGEST_SHA512 = 2,
    HAUL_DIGEST_SHA1 = 3,
    HAUL_DIGEST_MD5 = 4,
};

/// The digest length in bytes of a HAUL_DIGEST_* algorithm (0 for an unknown one).
int haul_digest_size(int algorithm);

/// A new streaming digest context for a HAUL_DIGEST_* algorithm, ready for updates.
/// NULL when the algorithm is unknown or OpenSSL fails. Free with haul_digest_free.
EVP_MD_CTX *haul_digest_new(int algorithm);

/// Adds length bytes to the message. Returns 1 on success.
int haul_digest_update(EVP_MD_CTX *context, const void *bytes, size_t length);

/// Writes the digest into out (at least haul_digest_size bytes) and starts the context over on
/// the empty message of the same algorithm. Returns the digest length, 0 on failure.
int haul_digest_final(EVP_MD_CTX *context, unsigned char *out);

/// Frees a context from haul_digest_new (NULL is ignored).
void haul_digest_free(EVP_MD_CTX *context);

/// The digest of length bytes in one call, written into out (at least haul_digest_size bytes);
/// safe on any number of threads at once. SHA-256 goes through OpenSSL's low-level calls where
/// the library still has them, the other algorithms through a context each thread keeps.
/// Returns the digest length, 0 on failure.
int haul_digest_once(int algorithm, const void *bytes, size_t length, unsigned char *out);

/// One-shot HMAC (RFC 2104) of data under key with a HAUL_DIGEST_* algorithm. Writes the code
/// into out (at least haul_digest_size bytes). Returns the code length, 0 on failure.
int haul_hmac(int algorithm, const void *key, size_t key_length,
              const void *data, size_t data_length, unsigned char *out);

#endif
