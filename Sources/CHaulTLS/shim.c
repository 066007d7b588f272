#include "CHaulTLS.h"
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

int haul_ssl_error_is_unexpected_eof(void) {
    unsigned long e = ERR_peek_error();
    return e != 0 && ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}
