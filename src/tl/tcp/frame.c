#include "config.h"
#include "tl/tcp/frame.h"

#include <string.h>

static const uint8_t sr_tcp_frame_magic[4] = { 'S', 'R', 'T', '1' };
static const uint8_t sr_tcp_hello_magic[4] = { 'S', 'R', 'H', '1' };
static const uint8_t sr_tcp_chal_magic[4] = { 'S', 'R', 'C', '1' };
static const uint8_t sr_tcp_auth_magic[4] = { 'S', 'R', 'A', '1' };

static inline void sr_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void sr_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline void sr_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint16_t sr_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t sr_get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static inline uint64_t sr_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

/* ---- frames ----------------------------------------------------------------- */

void sr_tcp_frame_encode(const sr_tcp_frame_t *f, uint8_t out[SR_TCP_HDR_LEN])
{
    memcpy(out, sr_tcp_frame_magic, 4);
    out[4] = f->op;
    out[5] = f->sub;
    sr_put16(out + 6, 0);
    sr_put32(out + 8, f->region);
    sr_put32(out + 12, f->plen);
    sr_put64(out + 16, f->id);
    sr_put64(out + 24, f->off);
    sr_put64(out + 32, f->a);
    sr_put64(out + 40, f->b);
}

const char *sr_tcp_frame_decode(const uint8_t in[SR_TCP_HDR_LEN], sr_tcp_side_t side,
                                sr_tcp_frame_t *f_p)
{
    sr_tcp_frame_t f;
    if (memcmp(in, sr_tcp_frame_magic, 4) != 0)
        return "bad frame magic";
    if (sr_get16(in + 6) != 0)
        return "reserved header bits set";
    f.op = in[4];
    f.sub = in[5];
    f.region = sr_get32(in + 8);
    f.plen = sr_get32(in + 12);
    f.id = sr_get64(in + 16);
    f.off = sr_get64(in + 24);
    f.a = sr_get64(in + 32);
    f.b = sr_get64(in + 40);

    int request = 0, region_op = 0;
    uint32_t max_plen = 0;
    switch (f.op) {
    case SR_TCP_OP_PUT:
        request = region_op = 1;
        max_plen = SR_TCP_MAX_PAYLOAD;
        break;
    case SR_TCP_OP_GET:
        request = region_op = 1;
        if (f.a > SR_TCP_MAX_PAYLOAD)
            return "get length over the frame limit";
        break;
    case SR_TCP_OP_AMO:
        request = region_op = 1;
        if (f.sub > SR_TCP_AMO_MAX)
            return "unknown atomic operation";
        break;
    case SR_TCP_OP_NOTIFY:
        request = 1;
        max_plen = SR_TCP_NOTIFY_MAX;
        if (f.a > UINT32_MAX)
            return "notification tag over 32 bits";
        break;
    case SR_TCP_OP_GET_REPLY:
        max_plen = SR_TCP_MAX_PAYLOAD;
        break;
    case SR_TCP_OP_ACK:
    case SR_TCP_OP_AMO_REPLY:
    case SR_TCP_OP_CREDIT:
        break;
    case SR_TCP_OP_BYE:
        request = side == SR_TCP_AT_TARGET;
        break;
    default:
        return "unknown opcode";
    }
    if (request != (side == SR_TCP_AT_TARGET))
        return side == SR_TCP_AT_TARGET ? "a reply where a request belongs"
                                        : "a request where a reply belongs";
    if (f.plen > max_plen)
        return "payload over the limit of its opcode";
    if (f.op != SR_TCP_OP_AMO && f.sub != 0)
        return "sub-operation on an opcode that has none";
    if (!region_op && f.region != 0)
        return "region on an opcode that has none";
    *f_p = f;
    return NULL;
}

const char *sr_tcp_frame_check_bounds(const sr_tcp_frame_t *f, const uint64_t *lens,
                                      uint32_t nregions)
{
    uint64_t len;
    switch (f->op) {
    case SR_TCP_OP_PUT:
        len = f->plen;
        break;
    case SR_TCP_OP_GET:
        len = f->a;
        break;
    case SR_TCP_OP_AMO:
        if (f->off % 8 != 0)
            return "misaligned atomic";
        len = 8;
        break;
    default:
        return NULL;
    }
    if (f->region >= nregions || lens[f->region] == 0)
        return "unknown memory region";
    if (!sr_tcp_span_ok(lens[f->region], f->off, len))
        return "access outside the memory region";
    return NULL;
}

/* ---- handshake ------------------------------------------------------------- */

void sr_tcp_hello_encode(const sr_tcp_hello_t *h, uint8_t out[SR_TCP_HELLO_LEN])
{
    memcpy(out, sr_tcp_hello_magic, 4);
    sr_put16(out + 4, SR_TCP_VERSION);
    sr_put16(out + 6, 0);
    sr_put32(out + 8, h->src_pe);
    sr_put32(out + 12, h->dst_pe);
    sr_put32(out + 16, h->lane);
    sr_put32(out + 20, h->n_pes);
    memcpy(out + 24, h->nonce, SR_TCP_NONCE_LEN);
}

const char *sr_tcp_hello_decode(const uint8_t in[SR_TCP_HELLO_LEN], uint32_t my_pe,
                                uint32_t n_pes, sr_tcp_hello_t *h_p)
{
    sr_tcp_hello_t h;
    if (memcmp(in, sr_tcp_hello_magic, 4) != 0)
        return "not a symrail connection (bad hello magic)";
    if (sr_get16(in + 4) != SR_TCP_VERSION)
        return "another protocol version (mixed symrail versions?)";
    if (sr_get16(in + 6) != 0)
        return "reserved hello bits set";
    h.src_pe = sr_get32(in + 8);
    h.dst_pe = sr_get32(in + 12);
    h.lane = sr_get32(in + 16);
    h.n_pes = sr_get32(in + 20);
    memcpy(h.nonce, in + 24, SR_TCP_NONCE_LEN);
    if (h.n_pes != n_pes)
        return "another job size (a PE of another job?)";
    if (h.dst_pe != my_pe)
        return "addressed to another PE";
    if (h.src_pe >= n_pes || h.src_pe == my_pe)
        return "source PE out of range";
    if (h.lane >= SR_TCP_MAX_LANES)
        return "lane out of range";
    *h_p = h;
    return NULL;
}

void sr_tcp_chal_encode(const uint8_t nonce_s[SR_TCP_NONCE_LEN],
                        const uint8_t mac_s[SR_TCP_MAC_LEN], uint8_t out[SR_TCP_CHAL_LEN])
{
    memcpy(out, sr_tcp_chal_magic, 4);
    sr_put32(out + 4, 0);
    memcpy(out + 8, nonce_s, SR_TCP_NONCE_LEN);
    memcpy(out + 8 + SR_TCP_NONCE_LEN, mac_s, SR_TCP_MAC_LEN);
}

const char *sr_tcp_chal_decode(const uint8_t in[SR_TCP_CHAL_LEN],
                               uint8_t nonce_s_p[SR_TCP_NONCE_LEN],
                               uint8_t mac_s_p[SR_TCP_MAC_LEN])
{
    if (memcmp(in, sr_tcp_chal_magic, 4) != 0 || sr_get32(in + 4) != 0)
        return "not a symrail challenge";
    memcpy(nonce_s_p, in + 8, SR_TCP_NONCE_LEN);
    memcpy(mac_s_p, in + 8 + SR_TCP_NONCE_LEN, SR_TCP_MAC_LEN);
    return NULL;
}

void sr_tcp_auth_encode(const uint8_t mac_c[SR_TCP_MAC_LEN], uint8_t out[SR_TCP_AUTH_LEN])
{
    memcpy(out, sr_tcp_auth_magic, 4);
    sr_put32(out + 4, 0);
    memcpy(out + 8, mac_c, SR_TCP_MAC_LEN);
}

const char *sr_tcp_auth_decode(const uint8_t in[SR_TCP_AUTH_LEN], uint8_t mac_c_p[SR_TCP_MAC_LEN])
{
    if (memcmp(in, sr_tcp_auth_magic, 4) != 0 || sr_get32(in + 4) != 0)
        return "not a symrail authenticator";
    memcpy(mac_c_p, in + 8, SR_TCP_MAC_LEN);
    return NULL;
}

void sr_tcp_hs_mac(const uint8_t key[SR_TCP_KEY_LEN], char label,
                   const uint8_t hello[SR_TCP_HELLO_LEN], const uint8_t nonce_s[SR_TCP_NONCE_LEN],
                   uint8_t mac_p[SR_TCP_MAC_LEN])
{
    uint8_t msg[1 + SR_TCP_HELLO_LEN + SR_TCP_NONCE_LEN];
    msg[0] = (uint8_t)label;
    memcpy(msg + 1, hello, SR_TCP_HELLO_LEN);
    memcpy(msg + 1 + SR_TCP_HELLO_LEN, nonce_s, SR_TCP_NONCE_LEN);
    sr_hmac_sha256(key, SR_TCP_KEY_LEN, msg, sizeof(msg), mac_p);
}

void sr_tcp_job_key(const char *job, const char *kind, const void *material, size_t len,
                    uint8_t key_p[SR_TCP_KEY_LEN])
{
    sr_sha256_t s;
    sr_sha256_init(&s);
    sr_sha256_update(&s, "symrail-tcp-key-v1", 19);
    sr_sha256_update(&s, job, strlen(job) + 1);
    sr_sha256_update(&s, kind, strlen(kind) + 1);
    sr_sha256_update(&s, material, len);
    sr_sha256_final(&s, key_p);
}

int sr_tcp_mac_equal(const uint8_t a[SR_TCP_MAC_LEN], const uint8_t b[SR_TCP_MAC_LEN])
{
    uint8_t diff = 0;
    for (int i = 0; i < SR_TCP_MAC_LEN; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}

/* ---- SHA-256 ------------------------------------------------------------------ */

static const uint32_t sr_sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
};

static inline uint32_t sr_ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void sr_sha256_block(sr_sha256_t *s, const uint8_t *p)
{
    uint32_t w[64], a, b, c, d, e, f, g, h;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = sr_ror(w[i - 15], 7) ^ sr_ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = sr_ror(w[i - 2], 17) ^ sr_ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
    e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (sr_ror(e, 6) ^ sr_ror(e, 11) ^ sr_ror(e, 25)) + ((e & f) ^ (~e & g)) +
                      sr_sha256_k[i] + w[i];
        uint32_t t2 = (sr_ror(a, 2) ^ sr_ror(a, 13) ^ sr_ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g, g = f, f = e, e = d + t1;
        d = c, c = b, b = a, a = t1 + t2;
    }
    s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
    s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

void sr_sha256_init(sr_sha256_t *s)
{
    static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    memcpy(s->h, iv, sizeof(iv));
    s->len = 0;
    s->nbuf = 0;
}

void sr_sha256_update(sr_sha256_t *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->len += len;
    while (len > 0) {
        if (s->nbuf == 0 && len >= 64) {
            sr_sha256_block(s, p);
            p += 64;
            len -= 64;
            continue;
        }
        size_t n = 64 - s->nbuf < len ? 64 - s->nbuf : len;
        memcpy(s->buf + s->nbuf, p, n);
        s->nbuf += n;
        p += n;
        len -= n;
        if (s->nbuf == 64) {
            sr_sha256_block(s, s->buf);
            s->nbuf = 0;
        }
    }
}

void sr_sha256_final(sr_sha256_t *s, uint8_t out[32])
{
    uint64_t bits = s->len * 8;
    uint8_t pad = 0x80, zero = 0, lenbe[8];
    sr_sha256_update(s, &pad, 1);
    while (s->nbuf != 56)
        sr_sha256_update(s, &zero, 1);
    for (int i = 0; i < 8; i++)
        lenbe[i] = (uint8_t)(bits >> (56 - 8 * i));
    sr_sha256_update(s, lenbe, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

void sr_hmac_sha256(const uint8_t *key, size_t key_len, const void *data, size_t len,
                    uint8_t out[32])
{
    uint8_t k[64], pad[64], inner[32];
    sr_sha256_t s;
    memset(k, 0, sizeof(k));
    if (key_len > 64) {
        sr_sha256_init(&s);
        sr_sha256_update(&s, key, key_len);
        sr_sha256_final(&s, k);
    } else if (key_len) {
        memcpy(k, key, key_len);
    }
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x36;
    sr_sha256_init(&s);
    sr_sha256_update(&s, pad, 64);
    sr_sha256_update(&s, data, len);
    sr_sha256_final(&s, inner);
    for (int i = 0; i < 64; i++)
        pad[i] = k[i] ^ 0x5c;
    sr_sha256_init(&s);
    sr_sha256_update(&s, pad, 64);
    sr_sha256_update(&s, inner, 32);
    sr_sha256_final(&s, out);
}
