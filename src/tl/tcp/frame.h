/*
 * Wire format of the TCP transport: the handshake messages, the fixed-size
 * frame header, and the checks a receiver makes before it trusts either.
 *
 * Everything here is pure (no I/O, no allocation, no global state), so the
 * decoders can be fuzzed on their own (tests/fuzz).  All integers travel
 * little-endian and are encoded field by field: struct layout and host byte
 * order never reach the wire.
 *
 * A connection starts with a challenge-response handshake keyed by the job
 * secret:
 *   initiator -> target  HELLO      magic, version, src/dst PE, lane, n_pes, nonce_c
 *   target -> initiator  CHALLENGE  nonce_s, mac_s = HMAC(key, "S" | HELLO | nonce_s)
 *   initiator -> target  AUTH       mac_c = HMAC(key, "C" | HELLO | nonce_s)
 * Both sides prove that they know the key; the labels keep a MAC of one
 * direction from being replayed in the other, and the fresh nonces keep one
 * of an earlier connection from being replayed at all.
 *
 * Then frames: a 48-byte header, followed by `plen` payload bytes.  Requests
 * travel from the initiator (the side that connected) to the target; replies
 * come back on the same connection in the order of the requests.
 */
#ifndef SR_TL_TCP_FRAME_H
#define SR_TL_TCP_FRAME_H

#include <stddef.h>
#include <stdint.h>
#include <symrail.h>

/* 2: PUT and GET name a segment by the owner's id and generation (b), and
 * replies carry a status (sub). */
#define SR_TCP_VERSION      2
#define SR_TCP_HDR_LEN      48
#define SR_TCP_NONCE_LEN    32
#define SR_TCP_MAC_LEN      32
#define SR_TCP_KEY_LEN      32
#define SR_TCP_HELLO_LEN    56
#define SR_TCP_CHAL_LEN     72
#define SR_TCP_AUTH_LEN     40
/* Largest payload of one frame: bounds what a receiver agrees to read for
 * one header, whatever the header claims. */
#define SR_TCP_MAX_PAYLOAD  (64u << 20)
#define SR_TCP_NOTIFY_MAX   256  /* SR_TL_NOTIFY_MAX, which the core sends at most */
#define SR_TCP_MAX_LANES    32
/* Region ids on the wire: 0 heap, 1 data, from 2 up the owner's segments;
 * a larger id is malformed. */
#define SR_TCP_REGION_SEG0  2
#define SR_TCP_REGION_MAX   (1u << 20)
/* The key blob of a segment (mkey_pack). */
#define SR_TCP_MKEY_LEN     32

typedef enum {
    /* requests: initiator -> target */
    SR_TCP_OP_PUT       = 1,   /* off, region, b = generation, plen = data -> ACK */
    SR_TCP_OP_GET       = 2,   /* off, region, b = generation, a = length  -> GET_REPLY */
    SR_TCP_OP_AMO       = 3,   /* off, region (heap or data), sub = kind|width, a, b
                                * -> AMO_REPLY */
    SR_TCP_OP_NOTIFY    = 4,   /* a = tag, plen = payload           (no reply) */
    /* replies: target -> initiator */
    SR_TCP_OP_ACK       = 16,  /* id, sub = status (sr_tcp_reply_status_t) */
    SR_TCP_OP_GET_REPLY = 17,  /* id, sub = status, plen = data (0 unless OK) */
    SR_TCP_OP_AMO_REPLY = 18,  /* id, a = previous value */
    SR_TCP_OP_CREDIT    = 19,  /* a = notifications consumed so far */
    /* either direction */
    SR_TCP_OP_BYE       = 32,  /* the sender finalized: its close is not a failure */
    SR_TCP_OP_PING      = 33,  /* heartbeat of an idle connection: the sender is alive */
} sr_tcp_opcode_t;

/* sub of SR_TCP_OP_AMO: the same values as sr_tl_amo_t, the kind in the
 * low 3 bits and SR_TCP_AMO_W32 for a 4-byte word (aligned to 4; a, b and
 * the reply's value in their low 32 bits). */
#define SR_TCP_AMO_W32 8
#define SR_TCP_AMO_MAX 15

/* sub of a reply.  A segment request whose (region, generation) is not
 * registered at the target (deregistered, or registered again since) is
 * answered STALE: nothing was touched, and the connection goes on. */
typedef enum {
    SR_TCP_ST_OK    = 0,
    SR_TCP_ST_STALE = 1,
} sr_tcp_reply_status_t;

typedef struct {
    uint8_t  op;
    uint8_t  sub;
    uint32_t region;
    uint32_t plen;
    uint64_t id;
    uint64_t off;
    uint64_t a;
    uint64_t b;
} sr_tcp_frame_t;

typedef struct {
    uint32_t src_pe;   /* SR_TCP_HELLO_PEER: the connection id instead */
    uint32_t dst_pe;
    uint32_t lane;
    uint32_t n_pes;    /* SR_TCP_HELLO_PEER: 0 */
    uint16_t flags;
    uint8_t  nonce[SR_TCP_NONCE_LEN];
} sr_tcp_hello_t;

/* flags of a HELLO: from a process of another job (a connected peer), which
 * names the pair by a connection id in src_pe and is keyed by it (tl.h,
 * "Connected peers"). */
#define SR_TCP_HELLO_PEER 1u

/* Which end of a connection decodes: the target accepts requests, the
 * initiator accepts replies; both accept BYE. */
typedef enum { SR_TCP_AT_TARGET = 0, SR_TCP_AT_INITIATOR = 1 } sr_tcp_side_t;

void sr_tcp_frame_encode(const sr_tcp_frame_t *f, uint8_t out[SR_TCP_HDR_LEN]);
/* NULL when `in` is a well-formed header for `side`; otherwise why not.
 * Well-formed says nothing about bounds: see sr_tcp_frame_span_ok. */
const char *sr_tcp_frame_decode(const uint8_t in[SR_TCP_HDR_LEN], sr_tcp_side_t side,
                                sr_tcp_frame_t *f_p);
/* Does [off, off + len) lie within a region of region_len bytes?  Overflow-safe. */
static inline int sr_tcp_span_ok(uint64_t region_len, uint64_t off, uint64_t len)
{
    return off <= region_len && len <= region_len - off;
}
/* NULL when request `f` (decoded at the target) stays inside the regions
 * described by lens[0 .. nregions) (0: not registered); otherwise why not. */
const char *sr_tcp_frame_check_bounds(const sr_tcp_frame_t *f, const uint64_t *lens,
                                      uint32_t nregions);
/* The same for the one region of region_len bytes that `f` names (a
 * segment whose id and generation the target has found). */
const char *sr_tcp_frame_check_span(const sr_tcp_frame_t *f, uint64_t region_len);

/* A segment's key blob: the owner's region id and generation, the length,
 * and the owner process's instance (random per process, so that a key of a
 * process that restarted is refused at unpack). */
typedef struct {
    uint32_t region;
    uint32_t generation;
    uint64_t len;
    uint64_t instance;
} sr_tcp_mkey_t;

void sr_tcp_mkey_encode(const sr_tcp_mkey_t *k, uint8_t out[SR_TCP_MKEY_LEN]);
/* NULL when `in` (len bytes) is a key blob of this version; otherwise why not. */
const char *sr_tcp_mkey_decode(const void *in, size_t len, sr_tcp_mkey_t *k_p);

void sr_tcp_hello_encode(const sr_tcp_hello_t *h, uint8_t out[SR_TCP_HELLO_LEN]);
/* NULL when `in` is a HELLO of this version addressed to my_pe, of a PE of
 * this job of n_pes PEs or of a connected peer (SR_TCP_HELLO_PEER, a
 * connection id other than 0, n_pes 0); otherwise why not. */
const char *sr_tcp_hello_decode(const uint8_t in[SR_TCP_HELLO_LEN], uint32_t my_pe,
                                uint32_t n_pes, sr_tcp_hello_t *h_p);
void sr_tcp_chal_encode(const uint8_t nonce_s[SR_TCP_NONCE_LEN],
                        const uint8_t mac_s[SR_TCP_MAC_LEN], uint8_t out[SR_TCP_CHAL_LEN]);
const char *sr_tcp_chal_decode(const uint8_t in[SR_TCP_CHAL_LEN],
                               uint8_t nonce_s_p[SR_TCP_NONCE_LEN],
                               uint8_t mac_s_p[SR_TCP_MAC_LEN]);
void sr_tcp_auth_encode(const uint8_t mac_c[SR_TCP_MAC_LEN], uint8_t out[SR_TCP_AUTH_LEN]);
const char *sr_tcp_auth_decode(const uint8_t in[SR_TCP_AUTH_LEN], uint8_t mac_c_p[SR_TCP_MAC_LEN]);
/* The MAC of one handshake direction: label 'S' (target) or 'C' (initiator),
 * over the encoded HELLO and the target's nonce. */
symrail_status_t sr_tcp_hs_mac(const uint8_t key[SR_TCP_KEY_LEN], char label,
                               const uint8_t hello[SR_TCP_HELLO_LEN],
                               const uint8_t nonce_s[SR_TCP_NONCE_LEN],
                               uint8_t mac_p[SR_TCP_MAC_LEN]);
/* The handshake key of job `job`: SHA-256 over a label, the job id, the
 * kind of secret (e.g. "secret") and the secret material itself. */
symrail_status_t sr_tcp_job_key(const char *job, const char *kind, const void *material,
                                size_t len, uint8_t key_p[SR_TCP_KEY_LEN]);
/* Constant time: 1 when equal. */
int sr_tcp_mac_equal(const uint8_t a[SR_TCP_MAC_LEN], const uint8_t b[SR_TCP_MAC_LEN]);

#endif
