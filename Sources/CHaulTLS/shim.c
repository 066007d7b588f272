// SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but remain its fastest
// way to hash a short message (see haul_digest_once); the guard there falls back to EVP where
// they are gone. The define silences deprecation warnings for this whole file: keep any other
// deprecated call out of it.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "CHaulTLS.h"
#include <openssl/sha.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

int haul_ssl_set_sni(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

void haul_ssl_ctx_set_default_modes(SSL_CTX *ctx) {
    SSL_CTX_set_mode(ctx, SSL_MODE_AUTO_RETRY | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_ENABLE_PARTIAL_WRITE);
}

int haul_ssl_ctx_require_tls12(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
}

void haul_ssl_ctx_set_default_options(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
}

unsigned long haul_ssl_take_error(char *buffer, size_t length) {
    unsigned long first = ERR_get_error();
    if (buffer && length > 0) {
        buffer[0] = 0;
        if (first != 0) ERR_error_string_n(first, buffer, length);
    }
    ERR_clear_error();
    return first;
}

void haul_ssl_ctx_enable_read_ahead(SSL_CTX *ctx, size_t buffer_length) {
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, buffer_length);
}

void haul_ssl_ctx_enable_client_sessions(SSL_CTX *ctx, int (*new_session)(SSL *, SSL_SESSION *)) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(ctx, new_session);
}

static int haul_session_slot = -1;
static pthread_once_t haul_session_slot_made = PTHREAD_ONCE_INIT;

static void haul_session_slot_make(void) {
    haul_session_slot = SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

int haul_ssl_session_slot_index(void) {
    pthread_once(&haul_session_slot_made, haul_session_slot_make);
    return haul_session_slot;
}

int haul_ssl_error_is_unexpected_eof(void) {
    unsigned long e = ERR_peek_error();
    return e != 0 && ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

/// The OpenSSL digest for a HAUL_DIGEST_* algorithm, or NULL.
static const EVP_MD *haul_digest_legacy_md(int algorithm) {
    switch (algorithm) {
    case HAUL_DIGEST_SHA256: return EVP_sha256();
    case HAUL_DIGEST_SHA512: return EVP_sha512();
    case HAUL_DIGEST_SHA1: return EVP_sha1();
    case HAUL_DIGEST_MD5: return EVP_md5();
    default: return NULL;
    }
}

#if OPENSSL_VERSION_NUMBER >= 0x30000000L
// OpenSSL 3 looks a legacy EVP_MD up in its provider store at every EVP_DigestInit_ex (locks,
// a property query: measured at a few microseconds, more than hashing a short string). Each
// algorithm is fetched once per process instead; the fetched objects live until exit.
static EVP_MD *haul_fetched_digests[5];
static pthread_once_t haul_fetch_once = PTHREAD_ONCE_INIT;

static void haul_fetch_digests(void) {
    haul_fetched_digests[HAUL_DIGEST_SHA256] = EVP_MD_fetch(NULL, "SHA2-256", NULL);
    haul_fetched_digests[HAUL_DIGEST_SHA512] = EVP_MD_fetch(NULL, "SHA2-512", NULL);
    haul_fetched_digests[HAUL_DIGEST_SHA1] = EVP_MD_fetch(NULL, "SHA1", NULL);
    haul_fetched_digests[HAUL_DIGEST_MD5] = EVP_MD_fetch(NULL, "MD5", NULL);
}

static const EVP_MD *haul_digest_md(int algorithm) {
    if (algorithm < HAUL_DIGEST_SHA256 || algorithm > HAUL_DIGEST_MD5) return NULL;
    pthread_once(&haul_fetch_once, haul_fetch_digests);
    const EVP_MD *fetched = haul_fetched_digests[algorithm];
    return fetched ? fetched : haul_digest_legacy_md(algorithm);   // e.g. MD5 missing under FIPS
}
#else
static const EVP_MD *haul_digest_md(int algorithm) {
    return haul_digest_legacy_md(algorithm);
}
#endif

int haul_digest_size(int algorithm) {
    const EVP_MD *md = haul_digest_md(algorithm);
    return md ? EVP_MD_size(md) : 0;
}

EVP_MD_CTX *haul_digest_new(int algorithm) {
    const EVP_MD *md = haul_digest_md(algorithm);
    if (!md) return NULL;
    EVP_MD_CTX *context = EVP_MD_CTX_new();
    if (!context) return NULL;
    if (EVP_DigestInit_ex(context, md, NULL) != 1) {
        EVP_MD_CTX_free(context);
        return NULL;
    }
    return context;
}

int haul_digest_update(EVP_MD_CTX *context, const void *bytes, size_t length) {
    if (length == 0) return 1;
    return EVP_DigestUpdate(context, bytes, length);
}

int haul_digest_final(EVP_MD_CTX *context, unsigned char *out) {
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(context, out, &length) != 1) return 0;
    // A NULL type re-initialises the context with the digest it already has.
    if (EVP_DigestInit_ex(context, NULL, NULL) != 1) return 0;
    return (int)length;
}

void haul_digest_free(EVP_MD_CTX *context) {
    EVP_MD_CTX_free(context);
}

// A context per thread for haul_digest_once's EVP path (every algorithm but SHA-256, and SHA-256
// where OpenSSL has no low-level calls): a context made for each short message cost an
// allocation, and OpenSSL 3 allocates the digest's own state at a fresh context's first
// initialisation. Freed when the thread ends. Where no thread key can be had, each call makes
// and frees its own context.
static pthread_key_t haul_once_key;
static int haul_once_key_ready;
static pthread_once_t haul_once_key_made = PTHREAD_ONCE_INIT;

static void haul_once_context_free(void *context) {
    EVP_MD_CTX_free(context);
}

static void haul_once_key_make(void) {
    haul_once_key_ready = pthread_key_create(&haul_once_key, haul_once_context_free) == 0;
}

static int haul_digest_with(EVP_MD_CTX *context, const EVP_MD *md, const void *bytes, size_t length,
                            unsigned char *out) {
    unsigned int written = 0;
    if (EVP_DigestInit_ex(context, md, NULL) != 1
        || (length > 0 && EVP_DigestUpdate(context, bytes, length) != 1)
        || EVP_DigestFinal_ex(context, out, &written) != 1) {
        EVP_MD_CTX_reset(context);
        return 0;
    }
    return (int)written;
}

int haul_digest_once(int algorithm, const void *bytes, size_t length, unsigned char *out) {
#ifndef OPENSSL_NO_DEPRECATED_3_0
    // SHA-256 of a short message (every small file hashes two: its resume record's resource key
    // and its finished-file mark; the signers hash their canonical requests) without EVP:
    // EVP_DigestInit_ex, Update and Final cost ~4,000 instructions per message here, and the
    // first fetch of a digest loads OpenSSL's providers (~5 million instructions), which a plain
    // HTTP download otherwise never needs. The low-level calls run the same block function
    // (SHA-NI where the CPU has it). They bypass the providers: under a FIPS configuration these
    // hashes (identities, not secrets; the signers' HMACs still go through EVP) are not made by
    // the FIPS provider.
    if (algorithm == HAUL_DIGEST_SHA256) {
        SHA256_CTX context;
        if (SHA256_Init(&context) != 1
            || (length > 0 && SHA256_Update(&context, bytes, length) != 1)
            || SHA256_Final(out, &context) != 1) {
            return 0;
        }
        return SHA256_DIGEST_LENGTH;
    }
#endif
    const EVP_MD *md = haul_digest_md(algorithm);
    if (!md) return 0;
    pthread_once(&haul_once_key_made, haul_once_key_make);
    EVP_MD_CTX *context = haul_once_key_ready ? pthread_getspecific(haul_once_key) : NULL;
    if (context) return haul_digest_with(context, md, bytes, length, out);
    context = EVP_MD_CTX_new();
    if (!context) return 0;
    if (haul_once_key_ready && pthread_setspecific(haul_once_key, context) == 0) {
        return haul_digest_with(context, md, bytes, length, out);
    }
    int written = haul_digest_with(context, md, bytes, length, out);
    EVP_MD_CTX_free(context);
    return written;
}

int haul_hmac(int algorithm, const void *key, size_t key_length,
              const void *data, size_t data_length, unsigned char *out) {
    const EVP_MD *md = haul_digest_md(algorithm);
    if (!md || key_length > INT_MAX) return 0;
    static const unsigned char empty = 0;
    unsigned int length = 0;
    if (!HMAC(md, key_length ? key : &empty, (int)key_length,
              data_length ? data : &empty, data_length, out, &length)) return 0;
    return (int)length;
}

int haul_ssl_set_bio_over_ssl(SSL *inner, SSL *outer) {
    BIO *bio = BIO_new(BIO_f_ssl());
    if (bio == NULL) return 0;
    BIO_set_ssl(bio, outer, BIO_NOCLOSE);
    SSL_set_bio(inner, bio, bio);  // one reference, owned by `inner`
    return 1;
}
