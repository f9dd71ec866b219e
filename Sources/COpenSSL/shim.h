#ifndef CAST_COPENSSL_SHIM_H
#define CAST_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bn.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

/// Macros Swift cannot call.
static inline long cast_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int v) { return SSL_CTX_set_min_proto_version(ctx, v); }
static inline long cast_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int v) { return SSL_CTX_set_max_proto_version(ctx, v); }
static inline int cast_tls1_3_version(void) { return TLS1_3_VERSION; }

/// CastSecurity: macros and flag combinations Swift cannot import.
static inline long cast_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline long cast_ssl_mode_accept_moving_write_buffer(void) { return SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER; }
static inline uint64_t cast_ssl_op_ignore_unexpected_eof(void) { return SSL_OP_IGNORE_UNEXPECTED_EOF; }
static inline uint64_t cast_ssl_op_no_renegotiation(void) { return SSL_OP_NO_RENEGOTIATION; }
static inline long cast_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
static inline void cast_BIO_set_retry_read(BIO *bio) { BIO_set_retry_read(bio); }
static inline void cast_BIO_set_retry_write(BIO *bio) { BIO_set_retry_write(bio); }
static inline void cast_BIO_clear_retry_flags(BIO *bio) { BIO_clear_retry_flags(bio); }
static inline int cast_bio_ctrl_flush(void) { return BIO_CTRL_FLUSH; }
static inline int cast_bio_ctrl_eof(void) { return BIO_CTRL_EOF; }
static inline int cast_bio_flags_in_eof(void) { return BIO_FLAGS_IN_EOF; }
static inline int cast_bio_type_source_sink(void) { return BIO_TYPE_SOURCE_SINK; }
static inline int cast_mbstring_asc(void) { return MBSTRING_ASC; }
#endif
