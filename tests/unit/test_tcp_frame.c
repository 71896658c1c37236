/* The TCP transport's wire codec: SHA-256 and HMAC against published test
 * vectors, frames that round-trip, and every rule a receiver relies on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tl/tcp/frame.h"
#include "util/crypto.h"

static void hex(const uint8_t *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

/* SHA-256 of `reps` copies of data, fed as that many pieces. */
static void sha(const void *data, size_t len, size_t reps, char *out)
{
    uint8_t d[32];
    struct iovec *iov = calloc(reps, sizeof(*iov));
    assert_non_null(iov);
    for (size_t i = 0; i < reps; i++)
        iov[i] = (struct iovec){ (void *)data, len };
    assert_int_equal(sr_crypto_sha256(iov, (int)reps, d), SYMRAIL_OK);
    free(iov);
    hex(d, 32, out);
}

static void test_sha256_vectors(void **state)
{
    char out[65], a[1000];
    (void)state;
    sha("", 0, 1, out);
    assert_string_equal(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha("abc", 3, 1, out);
    assert_string_equal(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    sha("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, 1, out);
    assert_string_equal(out, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    memset(a, 'a', sizeof(a));
    sha(a, sizeof(a), 1000, out);  /* one million 'a' */
    assert_string_equal(out, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    sha(a, 1000, 1, out);
    assert_string_equal(out, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
    sha(a, 1, 1000, out);          /* the same bytes fed one at a time */
    assert_string_equal(out, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

static void test_hmac_vectors(void **state)
{
    uint8_t key[131], mac[32];
    char out[65];
    (void)state;
    /* RFC 4231, test cases 1, 2 and 6 (a key longer than a block). */
    memset(key, 0x0b, 20);
    assert_int_equal(sr_crypto_hmac_sha256(key, 20, "Hi There", 8, mac), SYMRAIL_OK);
    hex(mac, 32, out);
    assert_string_equal(out, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    assert_int_equal(sr_crypto_hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, mac),
                     SYMRAIL_OK);
    hex(mac, 32, out);
    assert_string_equal(out, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(key, 0xaa, sizeof(key));
    assert_int_equal(sr_crypto_hmac_sha256(key, sizeof(key),
                                           "Test Using Larger Than Block-Size Key - Hash Key First",
                                           54, mac),
                     SYMRAIL_OK);
    hex(mac, 32, out);
    assert_string_equal(out, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

static void test_compare_and_random(void **state)
{
    uint8_t a[32], b[32];
    (void)state;
    assert_int_equal(sr_crypto_random(a, sizeof(a)), SYMRAIL_OK);
    assert_int_equal(sr_crypto_random(b, sizeof(b)), SYMRAIL_OK);
    assert_memory_not_equal(a, b, sizeof(a));
    assert_false(sr_crypto_equal(a, b, sizeof(a)));
    memcpy(b, a, sizeof(a));
    assert_true(sr_crypto_equal(a, b, sizeof(a)));
    b[31] ^= 1;
    assert_false(sr_crypto_equal(a, b, sizeof(a)));
}

static void test_frame_round_trip(void **state)
{
    static const sr_tcp_frame_t frames[] = {
        { .op = SR_TCP_OP_PUT, .region = 1, .plen = 65536, .id = 7, .off = 1ull << 40 },
        { .op = SR_TCP_OP_GET, .id = UINT64_MAX, .off = 3, .a = SR_TCP_MAX_PAYLOAD },
        { .op = SR_TCP_OP_AMO, .sub = 4, .off = 8, .a = 1, .b = UINT64_MAX },
        { .op = SR_TCP_OP_AMO, .sub = SR_TCP_AMO_MAX, .off = 4, .a = 7, .b = UINT32_MAX },
        { .op = SR_TCP_OP_NOTIFY, .plen = SR_TCP_NOTIFY_MAX, .a = UINT32_MAX },
        { .op = SR_TCP_OP_BYE },
    };
    static const sr_tcp_frame_t replies[] = {
        { .op = SR_TCP_OP_ACK, .id = 9 },
        { .op = SR_TCP_OP_GET_REPLY, .id = 10, .plen = 12 },
        { .op = SR_TCP_OP_AMO_REPLY, .id = 11, .a = 0x0123456789abcdefull },
        { .op = SR_TCP_OP_CREDIT, .a = 5 },
        { .op = SR_TCP_OP_BYE },
    };
    uint8_t buf[SR_TCP_HDR_LEN];
    sr_tcp_frame_t f;
    (void)state;
    for (int side = 0; side < 2; side++) {
        const sr_tcp_frame_t *set = side == SR_TCP_AT_TARGET ? frames : replies;
        for (size_t i = 0; i < 5; i++) {
            sr_tcp_frame_encode(&set[i], buf);
            assert_null(sr_tcp_frame_decode(buf, (sr_tcp_side_t)side, &f));
            assert_int_equal(f.op, set[i].op);
            assert_int_equal(f.sub, set[i].sub);
            assert_int_equal(f.region, set[i].region);
            assert_int_equal(f.plen, set[i].plen);
            assert_true(f.id == set[i].id && f.off == set[i].off && f.a == set[i].a &&
                        f.b == set[i].b);
        }
    }
    /* Little-endian on the wire, whatever the host. */
    sr_tcp_frame_encode(&frames[0], buf);
    assert_memory_equal(buf, "SRT1\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x01\x00", 16);
}

static const char *decode_mod(sr_tcp_frame_t f, sr_tcp_side_t side, int byte, uint8_t val)
{
    uint8_t buf[SR_TCP_HDR_LEN];
    sr_tcp_frame_t out;
    sr_tcp_frame_encode(&f, buf);
    if (byte >= 0)
        buf[byte] = val;
    return sr_tcp_frame_decode(buf, side, &out);
}

static void test_frame_rejects(void **state)
{
    sr_tcp_frame_t put = { .op = SR_TCP_OP_PUT, .plen = 8 };
    sr_tcp_frame_t f;
    (void)state;
    assert_null(decode_mod(put, SR_TCP_AT_TARGET, -1, 0));
    assert_non_null(decode_mod(put, SR_TCP_AT_TARGET, 0, 'X'));     /* magic */
    assert_non_null(decode_mod(put, SR_TCP_AT_TARGET, 6, 1));       /* reserved */
    assert_non_null(decode_mod(put, SR_TCP_AT_TARGET, 4, 0));       /* opcode 0 */
    assert_non_null(decode_mod(put, SR_TCP_AT_TARGET, 4, 99));      /* unknown opcode */
    assert_non_null(decode_mod(put, SR_TCP_AT_TARGET, 5, 1));       /* sub on a put */
    assert_non_null(decode_mod(put, SR_TCP_AT_INITIATOR, -1, 0));   /* request at initiator */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_ACK };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));        /* reply at target */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_PUT, .plen = SR_TCP_MAX_PAYLOAD + 1 };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_GET, .a = SR_TCP_MAX_PAYLOAD + 1ull };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_GET, .plen = 1, .a = 8 };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));        /* a get with data */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_AMO, .sub = SR_TCP_AMO_MAX + 1 };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_NOTIFY, .plen = SR_TCP_NOTIFY_MAX + 1 };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_NOTIFY, .region = 1 };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));        /* region on a notify */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_ACK, .plen = 1 };
    assert_non_null(decode_mod(f, SR_TCP_AT_INITIATOR, -1, 0));
}

/* Segments: a put or get names the owner's id and generation; replies say
 * whether it was stale. */
static void test_frame_segments(void **state)
{
    sr_tcp_frame_t f, out;
    uint8_t buf[SR_TCP_HDR_LEN];
    (void)state;
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_PUT, .region = SR_TCP_REGION_MAX - 1, .b = UINT32_MAX,
                          .plen = 8, .id = 3 };
    sr_tcp_frame_encode(&f, buf);
    assert_null(sr_tcp_frame_decode(buf, SR_TCP_AT_TARGET, &out));
    assert_true(out.region == f.region && out.b == UINT32_MAX && out.plen == 8);
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_GET, .region = 2, .b = 0, .a = 64 };
    assert_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));           /* generation 0 is one */
    f.region = SR_TCP_REGION_MAX;
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));       /* id over the limit */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_PUT, .region = 2, .b = 1ull << 32 };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));       /* generation over 32 bits */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_PUT, .region = 1, .b = 1 };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));       /* generation on data */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_GET, .b = 1, .a = 8 };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));       /* generation on the heap */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_AMO, .sub = 2, .region = 2 };
    assert_non_null(decode_mod(f, SR_TCP_AT_TARGET, -1, 0));       /* atomic on a segment */
    /* Reply statuses. */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_ACK, .sub = SR_TCP_ST_STALE, .id = 4 };
    sr_tcp_frame_encode(&f, buf);
    assert_null(sr_tcp_frame_decode(buf, SR_TCP_AT_INITIATOR, &out));
    assert_true(out.sub == SR_TCP_ST_STALE && out.id == 4);
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_GET_REPLY, .sub = SR_TCP_ST_STALE };
    assert_null(decode_mod(f, SR_TCP_AT_INITIATOR, -1, 0));
    f.plen = 8;
    assert_non_null(decode_mod(f, SR_TCP_AT_INITIATOR, -1, 0));    /* stale, with data */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_ACK, .sub = SR_TCP_ST_STALE + 1 };
    assert_non_null(decode_mod(f, SR_TCP_AT_INITIATOR, -1, 0));    /* unknown status */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_AMO_REPLY, .sub = SR_TCP_ST_STALE };
    assert_non_null(decode_mod(f, SR_TCP_AT_INITIATOR, -1, 0));    /* atomics are never stale */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_CREDIT, .sub = SR_TCP_ST_STALE };
    assert_non_null(decode_mod(f, SR_TCP_AT_INITIATOR, -1, 0));
    /* The span of a segment that was found. */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_PUT, .region = 7, .off = 4088, .plen = 8 };
    assert_null(sr_tcp_frame_check_span(&f, 4096));
    f.off = 4089;
    assert_non_null(sr_tcp_frame_check_span(&f, 4096));
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_GET, .region = 7, .off = 8, .a = UINT64_MAX - 7 };
    assert_non_null(sr_tcp_frame_check_span(&f, UINT64_MAX));      /* wraps around */
}

static void test_mkey(void **state)
{
    sr_tcp_mkey_t k = { .region = 77, .generation = 0xfedcba98, .len = 1ull << 40,
                        .instance = 0x0123456789abcdefull }, g;
    uint8_t buf[SR_TCP_MKEY_LEN + 1];
    (void)state;
    sr_tcp_mkey_encode(&k, buf);
    assert_memory_equal(buf, "SRK1\x4d\x00\x00\x00\x98\xba\xdc\xfe", 12);
    assert_null(sr_tcp_mkey_decode(buf, SR_TCP_MKEY_LEN, &g));
    assert_true(g.region == 77 && g.generation == 0xfedcba98 && g.len == 1ull << 40 &&
                g.instance == k.instance);
    assert_non_null(sr_tcp_mkey_decode(buf, SR_TCP_MKEY_LEN - 1, &g));
    assert_non_null(sr_tcp_mkey_decode(buf, SR_TCP_MKEY_LEN + 1, &g));
    buf[12] = 1;
    assert_non_null(sr_tcp_mkey_decode(buf, SR_TCP_MKEY_LEN, &g));  /* reserved */
    k.region = 1;
    sr_tcp_mkey_encode(&k, buf);
    assert_non_null(sr_tcp_mkey_decode(buf, SR_TCP_MKEY_LEN, &g));  /* data is no segment */
    k.region = SR_TCP_REGION_MAX;
    sr_tcp_mkey_encode(&k, buf);
    assert_non_null(sr_tcp_mkey_decode(buf, SR_TCP_MKEY_LEN, &g));
    k.region = 2;
    sr_tcp_mkey_encode(&k, buf);
    buf[3] = '2';
    assert_non_null(sr_tcp_mkey_decode(buf, SR_TCP_MKEY_LEN, &g));  /* magic */
}

static void test_bounds(void **state)
{
    const uint64_t lens[3] = { 4096, 0, 8 };
    sr_tcp_frame_t f = { .op = SR_TCP_OP_PUT, .plen = 4096 };
    (void)state;
    assert_null(sr_tcp_frame_check_bounds(&f, lens, 3));
    f.off = 1;
    assert_non_null(sr_tcp_frame_check_bounds(&f, lens, 3));   /* one past the end */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_PUT, .off = 4096 };
    assert_null(sr_tcp_frame_check_bounds(&f, lens, 3));       /* empty, at the end */
    f.off = 4097;
    assert_non_null(sr_tcp_frame_check_bounds(&f, lens, 3));
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_PUT, .off = UINT64_MAX - 7, .plen = 16 };
    assert_non_null(sr_tcp_frame_check_bounds(&f, lens, 3));   /* wraps around */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_GET, .off = 8, .a = UINT64_MAX };
    assert_non_null(sr_tcp_frame_check_bounds(&f, lens, 3));
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_PUT, .region = 1, .plen = 1 };
    assert_non_null(sr_tcp_frame_check_bounds(&f, lens, 3));   /* not registered */
    f.region = 3;
    assert_non_null(sr_tcp_frame_check_bounds(&f, lens, 3));   /* no such region */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_AMO, .region = 2 };
    assert_null(sr_tcp_frame_check_bounds(&f, lens, 3));
    f.off = 8;
    assert_non_null(sr_tcp_frame_check_bounds(&f, lens, 3));
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_AMO, .off = 4 };
    assert_non_null(sr_tcp_frame_check_bounds(&f, lens, 3));   /* misaligned */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_AMO, .off = 4088 };
    assert_null(sr_tcp_frame_check_bounds(&f, lens, 3));
    /* A 4-byte word: aligned to 4, and its 4 bytes in the region. */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_AMO, .sub = SR_TCP_AMO_W32 | 2, .off = 4092 };
    assert_null(sr_tcp_frame_check_bounds(&f, lens, 3));
    f.off = 4094;
    assert_non_null(sr_tcp_frame_check_bounds(&f, lens, 3));   /* misaligned */
    f.off = 4096;
    assert_non_null(sr_tcp_frame_check_bounds(&f, lens, 3));   /* past the end */
    f = (sr_tcp_frame_t){ .op = SR_TCP_OP_AMO, .sub = SR_TCP_AMO_W32, .region = 2, .off = 4 };
    assert_null(sr_tcp_frame_check_bounds(&f, lens, 3));
    assert_true(sr_tcp_span_ok(10, 10, 0) && !sr_tcp_span_ok(10, 11, 0) &&
                !sr_tcp_span_ok(10, 1, UINT64_MAX) && sr_tcp_span_ok(UINT64_MAX, 1, UINT64_MAX - 1));
}

static void test_handshake(void **state)
{
    sr_tcp_hello_t h = { .src_pe = 3, .dst_pe = 1, .lane = 2, .n_pes = 4 }, g;
    uint8_t hello[SR_TCP_HELLO_LEN], chal[SR_TCP_CHAL_LEN], auth[SR_TCP_AUTH_LEN];
    uint8_t key[32], key2[32], nonce[32], mac[32], mac2[32];
    (void)state;
    memset(h.nonce, 0x42, sizeof(h.nonce));
    sr_tcp_hello_encode(&h, hello);
    assert_null(sr_tcp_hello_decode(hello, 1, 4, &g));
    assert_true(g.src_pe == 3 && g.dst_pe == 1 && g.lane == 2 && g.n_pes == 4);
    assert_memory_equal(g.nonce, h.nonce, 32);
    assert_non_null(sr_tcp_hello_decode(hello, 2, 4, &g));     /* for another PE */
    assert_non_null(sr_tcp_hello_decode(hello, 1, 5, &g));     /* another job size */
    h.src_pe = 1;
    sr_tcp_hello_encode(&h, hello);
    assert_non_null(sr_tcp_hello_decode(hello, 1, 4, &g));     /* from itself */
    h.src_pe = 4;
    sr_tcp_hello_encode(&h, hello);
    assert_non_null(sr_tcp_hello_decode(hello, 1, 4, &g));     /* out of range */
    h.src_pe = 0;
    h.lane = SR_TCP_MAX_LANES;
    sr_tcp_hello_encode(&h, hello);
    assert_non_null(sr_tcp_hello_decode(hello, 1, 4, &g));
    h.lane = 0;
    sr_tcp_hello_encode(&h, hello);
    hello[4] = SR_TCP_VERSION + 1;
    assert_non_null(sr_tcp_hello_decode(hello, 1, 4, &g));     /* another version */

    /* A connected peer's: a connection id, no job size, still for my PE. */
    sr_tcp_hello_t p = { .src_pe = 0xdeadbeef, .dst_pe = 1, .lane = 1, .n_pes = 0,
                         .flags = SR_TCP_HELLO_PEER };
    sr_tcp_hello_encode(&p, hello);
    assert_null(sr_tcp_hello_decode(hello, 1, 4, &g));
    assert_true(g.flags == SR_TCP_HELLO_PEER && g.src_pe == 0xdeadbeef && g.n_pes == 0);
    assert_non_null(sr_tcp_hello_decode(hello, 2, 4, &g));     /* for another PE */
    p.n_pes = 4;
    sr_tcp_hello_encode(&p, hello);
    assert_non_null(sr_tcp_hello_decode(hello, 1, 4, &g));     /* with a job size */
    p.n_pes = 0;
    p.src_pe = 0;
    sr_tcp_hello_encode(&p, hello);
    assert_non_null(sr_tcp_hello_decode(hello, 1, 4, &g));     /* without an id */
    p.src_pe = 7;
    p.flags = 2;
    sr_tcp_hello_encode(&p, hello);
    assert_non_null(sr_tcp_hello_decode(hello, 1, 4, &g));     /* unknown flags */
    p.flags = SR_TCP_HELLO_PEER;
    p.lane = SR_TCP_MAX_LANES;
    sr_tcp_hello_encode(&p, hello);
    assert_non_null(sr_tcp_hello_decode(hello, 1, 4, &g));     /* lane out of range */

    /* Keys differ with the job and the secret; MACs with the direction. */
    sr_tcp_job_key("job1", "secret", "s", 1, key);
    sr_tcp_job_key("job2", "secret", "s", 1, key2);
    assert_memory_not_equal(key, key2, 32);
    sr_tcp_job_key("job1", "secret", "t", 1, key2);
    assert_memory_not_equal(key, key2, 32);
    sr_tcp_hello_encode(&h, hello);
    memset(nonce, 7, sizeof(nonce));
    sr_tcp_hs_mac(key, 'S', hello, nonce, mac);
    sr_tcp_hs_mac(key, 'C', hello, nonce, mac2);
    assert_false(sr_tcp_mac_equal(mac, mac2));
    sr_tcp_hs_mac(key2, 'S', hello, nonce, mac2);
    assert_false(sr_tcp_mac_equal(mac, mac2));
    sr_tcp_hs_mac(key, 'S', hello, nonce, mac2);
    assert_true(sr_tcp_mac_equal(mac, mac2));

    sr_tcp_chal_encode(nonce, mac, chal);
    memset(mac2, 0, sizeof(mac2));
    assert_null(sr_tcp_chal_decode(chal, key2, mac2));
    assert_memory_equal(key2, nonce, 32);
    assert_memory_equal(mac2, mac, 32);
    chal[0] = 'X';
    assert_non_null(sr_tcp_chal_decode(chal, key2, mac2));
    sr_tcp_auth_encode(mac, auth);
    assert_null(sr_tcp_auth_decode(auth, mac2));
    assert_memory_equal(mac2, mac, 32);
    auth[5] = 1;
    assert_non_null(sr_tcp_auth_decode(auth, mac2));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_hmac_vectors),
        cmocka_unit_test(test_compare_and_random),
        cmocka_unit_test(test_frame_round_trip),
        cmocka_unit_test(test_frame_rejects),
        cmocka_unit_test(test_frame_segments),
        cmocka_unit_test(test_mkey),
        cmocka_unit_test(test_bounds),
        cmocka_unit_test(test_handshake),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
