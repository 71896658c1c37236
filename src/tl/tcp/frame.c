#include "config.h"
#include "tl/tcp/frame.h"
#include "util/crypto.h"

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

    int request = 0, region_op = 0, has_sub = 0;
    uint32_t max_plen = 0;
    switch (f.op) {
    case SR_TCP_OP_PUT:
    case SR_TCP_OP_GET:
        request = region_op = 1;
        if (f.op == SR_TCP_OP_PUT)
            max_plen = SR_TCP_MAX_PAYLOAD;
        else if (f.a > SR_TCP_MAX_PAYLOAD)
            return "get length over the frame limit";
        if (f.region >= SR_TCP_REGION_MAX)
            return "region id over the limit";
        if (f.b > UINT32_MAX)
            return "generation over 32 bits";
        if (f.region < SR_TCP_REGION_SEG0 && f.b != 0)
            return "generation on the heap or data";
        break;
    case SR_TCP_OP_AMO:
        request = region_op = has_sub = 1;
        if (f.sub > SR_TCP_AMO_MAX)
            return "unknown atomic operation";
        if (f.region >= SR_TCP_REGION_SEG0)
            return "atomic on a segment";
        break;
    case SR_TCP_OP_NOTIFY:
        request = 1;
        max_plen = SR_TCP_NOTIFY_MAX;
        if (f.a > UINT32_MAX)
            return "notification tag over 32 bits";
        break;
    case SR_TCP_OP_GET_REPLY:
    case SR_TCP_OP_ACK:
        has_sub = 1;  /* atomics reach no segment: their replies are never stale */
        if (f.sub > SR_TCP_ST_STALE)
            return "unknown reply status";
        if (f.op == SR_TCP_OP_GET_REPLY)
            max_plen = f.sub == SR_TCP_ST_OK ? SR_TCP_MAX_PAYLOAD : 0;
        break;
    case SR_TCP_OP_AMO_REPLY:
    case SR_TCP_OP_CREDIT:
        break;
    case SR_TCP_OP_BYE:
    case SR_TCP_OP_PING:
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
    if (!has_sub && f.sub != 0)
        return "sub-operation on an opcode that has none";
    if (!region_op && f.region != 0)
        return "region on an opcode that has none";
    *f_p = f;
    return NULL;
}

const char *sr_tcp_frame_check_bounds(const sr_tcp_frame_t *f, const uint64_t *lens,
                                      uint32_t nregions)
{
    if (f->op != SR_TCP_OP_PUT && f->op != SR_TCP_OP_GET && f->op != SR_TCP_OP_AMO)
        return NULL;
    if (f->region >= nregions || lens[f->region] == 0)
        return "unknown memory region";
    return sr_tcp_frame_check_span(f, lens[f->region]);
}

const char *sr_tcp_frame_check_span(const sr_tcp_frame_t *f, uint64_t region_len)
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
        len = (f->sub & SR_TCP_AMO_W32) ? 4 : 8;
        if (f->off % len != 0)
            return "misaligned atomic";
        break;
    default:
        return NULL;
    }
    if (!sr_tcp_span_ok(region_len, f->off, len))
        return "access outside the memory region";
    return NULL;
}

/* ---- segment keys ------------------------------------------------------------- */

static const uint8_t sr_tcp_mkey_magic[4] = { 'S', 'R', 'K', '1' };

void sr_tcp_mkey_encode(const sr_tcp_mkey_t *k, uint8_t out[SR_TCP_MKEY_LEN])
{
    memcpy(out, sr_tcp_mkey_magic, 4);
    sr_put32(out + 4, k->region);
    sr_put32(out + 8, k->generation);
    sr_put32(out + 12, 0);
    sr_put64(out + 16, k->len);
    sr_put64(out + 24, k->instance);
}

const char *sr_tcp_mkey_decode(const void *in, size_t len, sr_tcp_mkey_t *k_p)
{
    const uint8_t *p = in;
    sr_tcp_mkey_t k;
    if (len != SR_TCP_MKEY_LEN || memcmp(p, sr_tcp_mkey_magic, 4) != 0)
        return "not a TCP segment key";
    if (sr_get32(p + 12) != 0)
        return "reserved key bits set";
    k.region = sr_get32(p + 4);
    k.generation = sr_get32(p + 8);
    k.len = sr_get64(p + 16);
    k.instance = sr_get64(p + 24);
    if (k.region < SR_TCP_REGION_SEG0 || k.region >= SR_TCP_REGION_MAX)
        return "key of a region that is no segment";
    *k_p = k;
    return NULL;
}

/* ---- handshake ------------------------------------------------------------- */

void sr_tcp_hello_encode(const sr_tcp_hello_t *h, uint8_t out[SR_TCP_HELLO_LEN])
{
    memcpy(out, sr_tcp_hello_magic, 4);
    sr_put16(out + 4, SR_TCP_VERSION);
    sr_put16(out + 6, h->flags);
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
    h.flags = sr_get16(in + 6);
    if (h.flags & ~SR_TCP_HELLO_PEER)
        return "reserved hello bits set";
    h.src_pe = sr_get32(in + 8);
    h.dst_pe = sr_get32(in + 12);
    h.lane = sr_get32(in + 16);
    h.n_pes = sr_get32(in + 20);
    memcpy(h.nonce, in + 24, SR_TCP_NONCE_LEN);
    if (h.dst_pe != my_pe)
        return "addressed to another PE";
    if (h.flags & SR_TCP_HELLO_PEER) {
        if (h.n_pes != 0 || h.src_pe == 0)
            return "a connected peer's hello with a job size or without a connection id";
    } else if (h.n_pes != n_pes) {
        return "another job size (a PE of another job?)";
    } else if (h.src_pe >= n_pes || h.src_pe == my_pe) {
        return "source PE out of range";
    }
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

symrail_status_t sr_tcp_hs_mac(const uint8_t key[SR_TCP_KEY_LEN], char label,
                               const uint8_t hello[SR_TCP_HELLO_LEN],
                               const uint8_t nonce_s[SR_TCP_NONCE_LEN],
                               uint8_t mac_p[SR_TCP_MAC_LEN])
{
    uint8_t msg[1 + SR_TCP_HELLO_LEN + SR_TCP_NONCE_LEN];
    msg[0] = (uint8_t)label;
    memcpy(msg + 1, hello, SR_TCP_HELLO_LEN);
    memcpy(msg + 1 + SR_TCP_HELLO_LEN, nonce_s, SR_TCP_NONCE_LEN);
    return sr_crypto_hmac_sha256(key, SR_TCP_KEY_LEN, msg, sizeof(msg), mac_p);
}

symrail_status_t sr_tcp_job_key(const char *job, const char *kind, const void *material,
                                size_t len, uint8_t key_p[SR_TCP_KEY_LEN])
{
    static const char label[] = "symrail-tcp-key-v1";
    const struct iovec iov[] = {
        { (void *)label, sizeof(label) },
        { (void *)job, strlen(job) + 1 },
        { (void *)kind, strlen(kind) + 1 },
        { (void *)material, len },
    };
    return sr_crypto_sha256(iov, 4, key_p);
}

int sr_tcp_mac_equal(const uint8_t a[SR_TCP_MAC_LEN], const uint8_t b[SR_TCP_MAC_LEN])
{
    return sr_crypto_equal(a, b, SR_TCP_MAC_LEN);
}
