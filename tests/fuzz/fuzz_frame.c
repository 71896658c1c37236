/*
 * Fuzz target for the TCP transport's wire decoders (src/tl/tcp/frame.c).
 *
 * The first byte picks a scenario; the rest is what a peer sent:
 *   0  requests reaching a target: every header is decoded, bounds-checked
 *      and, when accepted, applied to a heap of exactly the checked size
 *      (AddressSanitizer, or the explicit checks below, catch any access the
 *      checks let through);
 *   1  replies reaching an initiator;
 *   2  handshake messages (hello, challenge, authenticator) and their MACs;
 *   3  decode, encode, decode again: the codec must be lossless.
 * Built with libFuzzer by run_fuzz.sh, and replayed without it by fuzz_replay
 * under make check.
 */
#include "fuzz_frame.h"
#include "tl/tcp/frame.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAP_LEN 65536

static void fz_assert(int cond, const char *what)
{
    if (!cond) {
        fprintf(stderr, "fuzz_frame: %s\n", what);
        abort();
    }
}

static void target_stream(const uint8_t *data, size_t size)
{
    static uint8_t *heap;
    static uint8_t scratch[4096];
    /* Region 0: the heap; 1: not registered; segment 2 in generation 5:
     * one word (any other segment or generation is stale). */
    const uint64_t lens[2] = { HEAP_LEN, 0 };
    if (heap == NULL && (heap = malloc(HEAP_LEN)) == NULL)
        abort();
    static uint64_t word;
    while (size >= SR_TCP_HDR_LEN) {
        sr_tcp_frame_t f;
        if (sr_tcp_frame_decode(data, SR_TCP_AT_TARGET, &f) != NULL)
            return;
        data += SR_TCP_HDR_LEN;
        size -= SR_TCP_HDR_LEN;
        uint64_t rlen = f.region < 2 ? lens[f.region] : 8;
        if (f.region >= SR_TCP_REGION_SEG0) {
            fz_assert(f.op == SR_TCP_OP_PUT || f.op == SR_TCP_OP_GET, "segment on another opcode");
            fz_assert(f.region < SR_TCP_REGION_MAX && f.b <= UINT32_MAX, "segment id or generation");
            if (f.region != 2 || f.b != 5) {  /* stale: the payload is skipped */
                size_t skip = f.plen < size ? f.plen : size;
                data += skip;
                size -= skip;
                continue;
            }
            if (sr_tcp_frame_check_span(&f, rlen) != NULL)
                return;
        } else {
            fz_assert(f.b == 0 || f.op == SR_TCP_OP_AMO || f.op == SR_TCP_OP_NOTIFY ||
                          f.op == SR_TCP_OP_BYE || f.op == SR_TCP_OP_PING,
                      "generation on the heap");
            if (sr_tcp_frame_check_bounds(&f, lens, 2) != NULL)
                return;
        }
        fz_assert(f.op != SR_TCP_OP_PUT || f.plen <= SR_TCP_MAX_PAYLOAD, "put over the limit");
        fz_assert(f.op != SR_TCP_OP_NOTIFY || f.plen <= SR_TCP_NOTIFY_MAX, "notify over the limit");
        size_t have = f.plen < size ? f.plen : size;
        uint8_t *base = f.region == 2 ? (uint8_t *)&word : heap;
        switch (f.op) {
        case SR_TCP_OP_PUT:
            /* Checked with other arithmetic than the decoder's. */
            fz_assert((unsigned __int128)f.off + f.plen <= rlen, "put escapes");
            memcpy(base + f.off, data, have);
            break;
        case SR_TCP_OP_GET:
            fz_assert((unsigned __int128)f.off + f.a <= rlen, "get escapes");
            for (uint64_t i = 0; i < f.a; i += sizeof(scratch))
                memcpy(scratch, base + f.off + i, f.a - i < sizeof(scratch) ? f.a - i : sizeof(scratch));
            break;
        case SR_TCP_OP_AMO: {
            /* A 4-byte atomic (SR_TCP_AMO_W32) is aligned to 4 and stays in 4. */
            uint64_t w = (f.sub & SR_TCP_AMO_W32) ? 4 : 8;
            fz_assert(f.region < 2 && f.off % w == 0 && f.off + w <= rlen, "atomic escapes");
            if (w == 4)
                __atomic_fetch_add((uint32_t *)(void *)(base + f.off), (uint32_t)f.a,
                                   __ATOMIC_RELAXED);
            else
                __atomic_fetch_add((uint64_t *)(void *)(base + f.off), f.a, __ATOMIC_RELAXED);
            break;
        }
        case SR_TCP_OP_NOTIFY:
            memcpy(scratch, data, have);
            break;
        }
        data += have;
        size -= have;
    }
}

static void initiator_stream(const uint8_t *data, size_t size)
{
    while (size >= SR_TCP_HDR_LEN) {
        sr_tcp_frame_t f;
        if (sr_tcp_frame_decode(data, SR_TCP_AT_INITIATOR, &f) != NULL)
            return;
        fz_assert(f.op >= SR_TCP_OP_ACK || f.op == SR_TCP_OP_BYE, "a request accepted as a reply");
        fz_assert(f.sub == SR_TCP_ST_OK ||
                      (f.sub == SR_TCP_ST_STALE && f.plen == 0 &&
                       (f.op == SR_TCP_OP_ACK || f.op == SR_TCP_OP_GET_REPLY)),
                  "a reply status where none belongs, or data with a stale answer");
        data += SR_TCP_HDR_LEN;
        size -= SR_TCP_HDR_LEN;
        size_t have = f.plen < size ? f.plen : size;
        data += have;
        size -= have;
    }
}

static void handshake(const uint8_t *data, size_t size)
{
    uint8_t key[SR_TCP_KEY_LEN], mac[SR_TCP_MAC_LEN], nonce[SR_TCP_NONCE_LEN], hello[SR_TCP_HELLO_LEN];
    sr_tcp_hello_t h;
    if (size < 8 + SR_TCP_HELLO_LEN)
        return;
    uint32_t me = data[0] | (uint32_t)data[1] << 8, n = data[2] | (uint32_t)data[3] << 8;
    data += 8;
    size -= 8;
    if (sr_tcp_hello_decode(data, me, n, &h) == NULL) {
        if (h.flags & SR_TCP_HELLO_PEER)
            fz_assert(h.flags == SR_TCP_HELLO_PEER && h.src_pe != 0 && h.n_pes == 0 &&
                          h.dst_pe == me && h.lane < SR_TCP_MAX_LANES,
                      "connected peer's hello accepted out of range");
        else
            fz_assert(h.flags == 0 && h.src_pe < n && h.dst_pe == me && h.src_pe != me &&
                          h.n_pes == n && h.lane < SR_TCP_MAX_LANES,
                      "hello accepted out of range");
        sr_tcp_hello_encode(&h, hello);
        fz_assert(memcmp(hello, data, SR_TCP_HELLO_LEN) == 0, "hello does not round-trip");
    }
    sr_tcp_job_key("fuzz", "secret", data, size < 64 ? size : 64, key);
    sr_tcp_hs_mac(key, 'S', data, data + SR_TCP_HELLO_LEN - SR_TCP_NONCE_LEN, mac);
    data += SR_TCP_HELLO_LEN;
    size -= SR_TCP_HELLO_LEN;
    if (size >= SR_TCP_CHAL_LEN && sr_tcp_chal_decode(data, nonce, mac) == NULL)
        (void)sr_tcp_mac_equal(mac, key);
    if (size >= SR_TCP_AUTH_LEN && sr_tcp_auth_decode(data, mac) == NULL)
        (void)sr_tcp_mac_equal(mac, key);
}

static void round_trip(const uint8_t *data, size_t size)
{
    for (int side = 0; side < 2 && size >= SR_TCP_HDR_LEN; side++) {
        sr_tcp_frame_t f, g;
        uint8_t out[SR_TCP_HDR_LEN];
        if (sr_tcp_frame_decode(data, (sr_tcp_side_t)side, &f) != NULL)
            continue;
        sr_tcp_frame_encode(&f, out);
        fz_assert(memcmp(out, data, SR_TCP_HDR_LEN) == 0, "frame does not round-trip");
        fz_assert(sr_tcp_frame_decode(out, (sr_tcp_side_t)side, &g) == NULL && f.op == g.op &&
                      f.sub == g.sub && f.region == g.region && f.plen == g.plen &&
                      f.id == g.id && f.off == g.off && f.a == g.a && f.b == g.b,
                  "re-encoded frame decodes differently");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    switch (data[0] % 4) {
    case 0: target_stream(data + 1, size - 1); break;
    case 1: initiator_stream(data + 1, size - 1); break;
    case 2: handshake(data + 1, size - 1); break;
    case 3: round_trip(data + 1, size - 1); break;
    }
    return 0;
}

/* Well-formed inputs of every kind, for mutation to start from. */
size_t fuzz_frame_seed(int i, uint8_t *buf, size_t cap)
{
    static const sr_tcp_frame_t req[] = {
        { .op = SR_TCP_OP_PUT, .plen = 16, .off = 64 },
        { .op = SR_TCP_OP_GET, .off = 128, .a = 256 },
        { .op = SR_TCP_OP_AMO, .sub = 2, .off = 8, .a = 1 },
        { .op = SR_TCP_OP_AMO, .sub = 4, .off = 32, .a = 7, .b = 0 },
        { .op = SR_TCP_OP_PUT, .region = 2, .b = 5, .plen = 8 },
        { .op = SR_TCP_OP_GET, .region = 2, .b = 5, .off = 4, .a = 4 },
        { .op = SR_TCP_OP_PUT, .region = 2, .b = 4, .plen = 16 },   /* stale */
        { .op = SR_TCP_OP_GET, .region = 9, .b = 5, .a = 64 },      /* stale */
        { .op = SR_TCP_OP_AMO, .sub = SR_TCP_AMO_W32 | 2, .off = 12, .a = 1 },
        { .op = SR_TCP_OP_NOTIFY, .plen = 5, .a = 42 },
        { .op = SR_TCP_OP_BYE },
    };
    static const sr_tcp_frame_t rep[] = {
        { .op = SR_TCP_OP_ACK, .id = 1 },
        { .op = SR_TCP_OP_GET_REPLY, .id = 2, .plen = 8 },
        { .op = SR_TCP_OP_AMO_REPLY, .id = 3, .a = 99 },
        { .op = SR_TCP_OP_CREDIT, .a = 4 },
        { .op = SR_TCP_OP_ACK, .sub = SR_TCP_ST_STALE, .id = 4 },
        { .op = SR_TCP_OP_GET_REPLY, .sub = SR_TCP_ST_STALE, .id = 5 },
    };
    const size_t nreq = sizeof(req) / sizeof(req[0]), nrep = sizeof(rep) / sizeof(rep[0]);
    size_t len = 0;
    if (cap < 1 + 12 * (SR_TCP_HDR_LEN + 64) || i < 0 || i >= 6)
        return 0;
    buf[len++] = (uint8_t)i % 4;
    if (i == 0 || i == 4) {         /* a stream of requests with payloads */
        for (size_t k = 0; k < nreq; k++) {
            sr_tcp_frame_encode(&req[k], buf + len);
            len += SR_TCP_HDR_LEN;
            memset(buf + len, 0xA5, req[k].plen);
            len += req[k].plen;
        }
    } else if (i == 1 || i == 5) {  /* replies */
        for (size_t k = 0; k < nrep; k++) {
            sr_tcp_frame_encode(&rep[k], buf + len);
            len += SR_TCP_HDR_LEN;
            memset(buf + len, 0x5A, rep[k].plen);
            len += rep[k].plen;
        }
    } else if (i == 2) {            /* my PE 0 of 2, then hello, challenge */
        sr_tcp_hello_t h = { .src_pe = 1, .dst_pe = 0, .lane = 1, .n_pes = 2 };
        uint8_t nonce[SR_TCP_NONCE_LEN] = { 1 }, mac[SR_TCP_MAC_LEN] = { 2 };
        memset(buf + len, 0, 8);
        buf[len + 2] = 2;
        len += 8;
        sr_tcp_hello_encode(&h, buf + len);
        len += SR_TCP_HELLO_LEN;
        sr_tcp_chal_encode(nonce, mac, buf + len);
        len += SR_TCP_CHAL_LEN;
    } else {                        /* one header to round-trip */
        sr_tcp_frame_encode(&req[1], buf + len);
        len += SR_TCP_HDR_LEN;
    }
    return len;
}
