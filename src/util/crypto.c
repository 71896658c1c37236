#include "config.h"
#include "util/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

symrail_status_t sr_crypto_sha256(const struct iovec *iov, int n,
                                  uint8_t out_p[SR_CRYPTO_SHA256_LEN])
{
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    unsigned int len = 0;
    int ok = md != NULL && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
    for (int i = 0; i < n && ok; i++)
        ok = EVP_DigestUpdate(md, iov[i].iov_base, iov[i].iov_len) == 1;
    ok = ok && EVP_DigestFinal_ex(md, out_p, &len) == 1 && len == SR_CRYPTO_SHA256_LEN;
    EVP_MD_CTX_free(md);
    return ok ? SYMRAIL_OK : SYMRAIL_ERR_SYSTEM;
}

symrail_status_t sr_crypto_hmac_sha256(const void *key, size_t key_len, const void *data,
                                       size_t len, uint8_t out_p[SR_CRYPTO_SHA256_LEN])
{
    unsigned int olen = 0;
    if (key_len > INT32_MAX ||
        HMAC(EVP_sha256(), key, (int)key_len, data, len, out_p, &olen) == NULL ||
        olen != SR_CRYPTO_SHA256_LEN)
        return SYMRAIL_ERR_SYSTEM;
    return SYMRAIL_OK;
}

int sr_crypto_equal(const void *a, const void *b, size_t len)
{
    return CRYPTO_memcmp(a, b, len) == 0;
}

symrail_status_t sr_crypto_random(void *buf, size_t len)
{
    if (len > INT32_MAX || RAND_bytes(buf, (int)len) != 1)
        return SYMRAIL_ERR_SYSTEM;
    return SYMRAIL_OK;
}
