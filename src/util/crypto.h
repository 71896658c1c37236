/*
 * The few cryptographic primitives symrail needs (the TCP handshake), from
 * OpenSSL's libcrypto: a vetted implementation, its constant-time comparison
 * and its random source, rather than our own.
 */
#ifndef SR_UTIL_CRYPTO_H
#define SR_UTIL_CRYPTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <symrail.h>

#define SR_CRYPTO_SHA256_LEN 32

/* SHA-256 over the concatenation of n pieces. */
symrail_status_t sr_crypto_sha256(const struct iovec *iov, int n,
                                  uint8_t out_p[SR_CRYPTO_SHA256_LEN]);
/* HMAC-SHA-256 (RFC 2104). */
symrail_status_t sr_crypto_hmac_sha256(const void *key, size_t key_len, const void *data,
                                       size_t len, uint8_t out_p[SR_CRYPTO_SHA256_LEN]);
/* 1 when the len bytes at a and b are equal, in time independent of where
 * they differ. */
int sr_crypto_equal(const void *a, const void *b, size_t len);
/* Unpredictable bytes (nonces). */
symrail_status_t sr_crypto_random(void *buf, size_t len);

#endif
