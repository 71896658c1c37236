/* Segments on the TCP transport, two instances in one process and no core:
 * registration at any time, keys packed and unpacked, puts and gets through
 * a key on every lane with every byte verified, the target's checks of id,
 * generation and bounds (a deregistered or re-registered segment answers
 * SYMRAIL_ERR_STALE, touches nothing, and leaves every lane up), keys of
 * another process refused, and a deregistration racing with large puts and
 * gets in flight (nothing lands after it returns). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "tl/tl.h"
#include "tl/tcp/tcp.h"
#include "util/env.h"

extern const sr_tl_ops_t sr_tl_tcp_ops;
#define OPS sr_tl_tcp_ops

#define HEAP   65536
#define SEG    (32u << 20)
#define NLANES 3

static char *heap[2], *seg;
static sr_tl_ctx_t *ctx[2];
static sr_tl_ep_t *ep01, *ep10;
static int lane_events;
static sr_env_t env;

typedef struct {
    sr_tl_comp_t comp;
    int done;
    symrail_status_t st;
} tcomp_t;

static void on_done(sr_tl_comp_t *comp, symrail_status_t st)
{
    tcomp_t *t = (tcomp_t *)comp;
    assert_false(t->done);
    t->st = st;
    t->done = 1;
}

static void on_notify(void *arg, int src, uint32_t tag, const void *p, size_t len)
{
    (void)arg, (void)src, (void)tag, (void)p, (void)len;
}

static void on_lane(void *arg, int pe, int lane, uint32_t weight, uint32_t gen)
{
    (void)arg, (void)pe, (void)lane, (void)weight, (void)gen;
    lane_events++;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Drives PE 0's progress until every one of c[0..n) has completed. */
static void wait_all(tcomp_t *c, int n)
{
    uint64_t deadline = now_ns() + 60ull * 1000000000ull;
    for (int i = 0; i < n; i++)
        while (!c[i].done) {
            assert_true(now_ns() < deadline);
            OPS.progress(ctx[0]);
        }
}

/* Waits until the target side of PE 1 is in a state pred accepts, looked at
 * under io_lock (the target's thread changes it under that lock only):
 * an event to wait for instead of a sleep that a loaded machine may
 * outlast and a fast one may not need. */
static void until_target(int (*pred)(const sr_tcp_conn_t *c, const void *arg), const void *arg)
{
    uint64_t deadline = now_ns() + 60ull * 1000000000ull;
    for (;;) {
        int hit = 0;
        pthread_mutex_lock(&ctx[1]->io_lock);
        for (const sr_tcp_conn_t *c = ctx[1]->conns; c && !hit; c = c->next)
            hit = c->state == SR_TCP_UP && pred(c, arg);
        pthread_mutex_unlock(&ctx[1]->io_lock);
        if (hit)
            return;
        assert_true(now_ns() < deadline);
        struct timespec ts = { 0, 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
}

static symrail_status_t rma(int is_put, int lane, void *buf, uint32_t region, uint64_t off,
                            size_t len, tcomp_t *c)
{
    symrail_status_t st;
    memset(c, 0, sizeof(*c));
    c->comp.cb = on_done;
    do {
        st = is_put ? OPS.put(ep01, lane, buf, region, off, len, &c->comp)
                    : OPS.get(ep01, lane, buf, region, off, len, &c->comp);
        if (st == SYMRAIL_ERR_AGAIN)
            OPS.progress(ctx[0]);
    } while (st == SYMRAIL_ERR_AGAIN);
    if (st != SR_TL_INPROGRESS) {
        c->st = st;
        c->done = 1;
    }
    return st;
}

/* One put or get, waited for: its status. */
static symrail_status_t rma_wait(int is_put, int lane, void *buf, uint32_t region, uint64_t off,
                                 size_t len)
{
    tcomp_t c;
    rma(is_put, lane, buf, region, off, len, &c);
    wait_all(&c, 1);
    return c.st;
}

static void fill(char *p, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        p[i] = (char)((i * 131u + seed * 7u + (i >> 12)) & 0xff);
}

static void lanes_all_up(void)
{
    uint32_t w[8];
    assert_int_equal(OPS.ep_lanes(ep01, w, 8), NLANES);
    for (int l = 0; l < NLANES; l++)
        assert_int_equal(w[l], 1);
    assert_int_equal(OPS.ep_check(ep01), SYMRAIL_OK);
    OPS.progress(ctx[0]);
    assert_int_equal(lane_events, 0);
}

/* Heap traffic on every lane still works. */
static void heap_still_works(void)
{
    char out[4096], back[4096];
    for (int l = 0; l < NLANES; l++) {
        fill(out, sizeof(out), 100u + (unsigned)l);
        assert_int_equal(rma_wait(1, l, out, SR_TL_REGION_HEAP, 1024, sizeof(out)), SYMRAIL_OK);
        assert_int_equal(rma_wait(0, l, back, SR_TL_REGION_HEAP, 1024, sizeof(back)), SYMRAIL_OK);
        assert_memory_equal(out, back, sizeof(out));
    }
}

static int setup(void **state)
{
    static const uint8_t local[2] = { 1, 1 };
    (void)state;
    setenv("SYMRAIL_JOB_SECRET", "unit-seg", 1);
    setenv("SYMRAIL_TCP_LANES", "3", 1);
    /* Room for several large requests in flight on one lane. */
    setenv("SYMRAIL_TCP_MAX_INFLIGHT", "256M", 1);
    /* Fixed socket buffers: what a stalled target leaves in flight stays far
     * below a large put, whatever the kernel's autotuning limits are. */
    setenv("SYMRAIL_TCP_SOCKBUF", "1M", 1);
    if (sr_env_load(getenv, &env) != SYMRAIL_OK)
        return -1;
    uint8_t addr[2][1024];
    size_t alen[2];
    for (int pe = 0; pe < 2; pe++) {
        heap[pe] = calloc(1, HEAP);
        sr_tl_params_t p = { .my_pe = pe, .n_pes = 2, .job = "unit-seg", .is_local = local,
                             .env = &env, .serve_local = 1, .notify_cb = on_notify,
                             .lane_cb = on_lane };
        if (heap[pe] == NULL || OPS.init(&p, &ctx[pe]) != SYMRAIL_OK)
            return -1;
        sr_tl_mem_t m = { .addr = heap[pe], .len = HEAP };
        alen[pe] = sizeof(addr[pe]);
        if (OPS.mem_reg(ctx[pe], SR_TL_REGION_HEAP, &m) != SYMRAIL_OK ||
            OPS.addr_pack(ctx[pe], addr[pe], &alen[pe]) != SYMRAIL_OK)
            return -1;
    }
    if (OPS.connect(ctx[0], 1, addr[1], alen[1], &ep01) != SYMRAIL_OK ||
        OPS.connect(ctx[1], 0, addr[0], alen[0], &ep10) != SYMRAIL_OK)
        return -1;
    seg = aligned_alloc(4096, SEG);
    return seg ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    OPS.fini(ctx[1]);
    OPS.fini(ctx[0]);
    free(heap[0]);
    free(heap[1]);
    free(seg);
    return 0;
}

/* PE 1 registers `seg` as segment `id`, PE 0 unpacks its key as `rkey`. */
static void reg_and_import(uint32_t id, uint32_t gen, size_t len, uint32_t rkey)
{
    sr_tl_mem_t m = { .addr = seg, .len = len, .generation = gen };
    uint8_t key[SR_TL_MKEY_MAX];
    size_t klen = sizeof(key);
    assert_int_equal(OPS.mem_reg(ctx[1], id, &m), SYMRAIL_OK);
    assert_int_equal(OPS.mkey_pack(ctx[1], id, key, &klen), SYMRAIL_OK);
    assert_true(klen > 0 && klen <= SR_TL_MKEY_MAX);
    assert_int_equal(OPS.rkey_unpack(ep01, rkey, key, klen), SYMRAIL_OK);
}

static void test_keys(void **state)
{
    uint8_t key[SR_TL_MKEY_MAX], other[SR_TL_MKEY_MAX];
    size_t klen = sizeof(key), small = 8;
    (void)state;
    sr_tl_mem_t m = { .addr = seg, .len = 4096, .generation = 9 };
    assert_int_equal(OPS.mkey_pack(ctx[1], 5, key, &klen), SYMRAIL_ERR_INVALID);  /* not registered */
    assert_int_equal(OPS.mem_reg(ctx[1], 5, &m), SYMRAIL_OK);
    assert_int_equal(OPS.mem_reg(ctx[1], 5, &m), SYMRAIL_ERR_STATE);             /* twice */
    assert_int_equal(OPS.mkey_pack(ctx[1], 5, key, &small), SYMRAIL_ERR_TRUNCATED);
    assert_int_equal(OPS.mkey_pack(ctx[1], 5, key, &klen), SYMRAIL_OK);
    assert_int_equal(OPS.rkey_unpack(ep01, 1, key, klen), SYMRAIL_ERR_INVALID);    /* heap's */
    assert_int_equal(OPS.rkey_unpack(ep01, 65536, key, klen), SYMRAIL_ERR_INVALID);
    assert_int_equal(OPS.rkey_unpack(ep01, 2, key, klen - 1), SYMRAIL_ERR_INVALID);
    memcpy(other, key, klen);
    other[0] ^= 1;
    assert_int_equal(OPS.rkey_unpack(ep01, 2, other, klen), SYMRAIL_ERR_INVALID);  /* garbage */
    /* A key of PE 0's own process presented on the endpoint to PE 1: it
     * names another instance, as a key of a restarted owner would. */
    assert_int_equal(OPS.mem_reg(ctx[0], 5, &m), SYMRAIL_OK);
    size_t olen = sizeof(other);
    assert_int_equal(OPS.mkey_pack(ctx[0], 5, other, &olen), SYMRAIL_OK);
    assert_int_equal(OPS.rkey_unpack(ep01, 2, other, olen), SYMRAIL_ERR_STALE);
    assert_int_equal(OPS.mem_dereg(ctx[0], 5), SYMRAIL_OK);
    assert_int_equal(OPS.mem_dereg(ctx[0], 5), SYMRAIL_ERR_INVALID);
    /* The importer's numbering: any value from 2 to 65535, once at a time. */
    assert_int_equal(OPS.rkey_unpack(ep01, 65535, key, klen), SYMRAIL_OK);
    assert_int_equal(OPS.rkey_unpack(ep01, 65535, key, klen), SYMRAIL_ERR_STATE);
    assert_int_equal(OPS.rkey_unpack(ep01, 2, key, klen), SYMRAIL_OK);
    char buf[64];
    fill(buf, sizeof(buf), 1);
    assert_int_equal(rma_wait(1, 0, buf, 65535, 4096 - 64, 64), SYMRAIL_OK);
    assert_memory_equal(seg + 4096 - 64, buf, 64);
    /* The key's length bounds what is posted: nothing goes out. */
    assert_int_equal(rma_wait(1, 0, buf, 2, 4096 - 63, 64), SYMRAIL_ERR_INVALID);
    assert_int_equal(rma_wait(0, 0, buf, 77, 0, 64), SYMRAIL_ERR_INVALID);      /* no such key */
    /* Atomics reach the heap and data only. */
    assert_int_equal(OPS.atomic(ep01, 0, SR_TL_AMO_ADD, 2, 0, 1, 0, NULL, NULL),
                     SYMRAIL_ERR_UNSUPPORTED);
    OPS.rkey_release(ep01, 65535);
    assert_int_equal(rma_wait(1, 0, buf, 65535, 0, 64), SYMRAIL_ERR_INVALID);
    OPS.rkey_release(ep01, 2);
    assert_int_equal(OPS.mem_dereg(ctx[1], 5), SYMRAIL_OK);
    lanes_all_up();
}

/* Every byte of a large segment written and read back in slices spread over
 * every lane, several in flight. */
static void test_put_get(void **state)
{
    enum { SLICE = 256 * 1024, NS = SEG / SLICE };
    char *out = malloc(SEG), *back = malloc(SEG);
    tcomp_t c[NS];
    (void)state;
    assert_true(out && back);
    reg_and_import(2, 1, SEG, 3);
    fill(out, SEG, 3);
    memset(back, 0, SEG);
    for (int i = 0; i < NS; i++)
        rma(1, i % NLANES, out + (size_t)i * SLICE, 3, (uint64_t)i * SLICE, SLICE, &c[i]);
    wait_all(c, NS);
    for (int i = 0; i < NS; i++)
        assert_int_equal(c[i].st, SYMRAIL_OK);
    assert_memory_equal(seg, out, SEG);
    for (int i = 0; i < NS; i++)
        rma(0, (i + 1) % NLANES, back + (size_t)i * SLICE, 3, (uint64_t)i * SLICE, SLICE, &c[i]);
    wait_all(c, NS);
    for (int i = 0; i < NS; i++)
        assert_int_equal(c[i].st, SYMRAIL_OK);
    assert_memory_equal(back, out, SEG);
    OPS.rkey_release(ep01, 3);
    assert_int_equal(OPS.mem_dereg(ctx[1], 2), SYMRAIL_OK);
    lanes_all_up();
    free(out);
    free(back);
}

/* After deregistration an old key fails as stale, and so does it after the
 * id is registered again at the same address; the memory stays untouched,
 * the lanes stay up, the new key works. */
static void test_stale(void **state)
{
    char buf[8192], back[8192];
    (void)state;
    reg_and_import(4, 1, 65536, 10);
    fill(buf, sizeof(buf), 4);
    assert_int_equal(rma_wait(1, 1, buf, 10, 0, sizeof(buf)), SYMRAIL_OK);
    assert_int_equal(OPS.mem_dereg(ctx[1], 4), SYMRAIL_OK);
    memset(seg, 0x3C, 65536);
    fill(buf, sizeof(buf), 5);
    for (int l = 0; l < NLANES; l++) {
        assert_int_equal(rma_wait(1, l, buf, 10, 0, sizeof(buf)), SYMRAIL_ERR_STALE);
        assert_int_equal(rma_wait(1, l, buf, 10, 8, 0), SYMRAIL_ERR_STALE);
        memset(back, 0x11, sizeof(back));
        assert_int_equal(rma_wait(0, l, back, 10, 0, sizeof(back)), SYMRAIL_ERR_STALE);
        for (size_t i = 0; i < sizeof(back); i++)
            assert_int_equal(back[i], 0x11);  /* the reply carried nothing */
    }
    for (size_t i = 0; i < 65536; i++)
        assert_int_equal((unsigned char)seg[i], 0x3C);
    lanes_all_up();
    heap_still_works();

    /* The same id and address again, a new generation. */
    reg_and_import(4, 2, 65536, 11);
    for (int l = 0; l < NLANES; l++)
        assert_int_equal(rma_wait(1, l, buf, 10, 4096, sizeof(buf)), SYMRAIL_ERR_STALE);
    for (size_t i = 0; i < 65536; i++)
        assert_int_equal((unsigned char)seg[i], 0x3C);
    assert_int_equal(rma_wait(1, 2, buf, 11, 4096, sizeof(buf)), SYMRAIL_OK);
    assert_memory_equal(seg + 4096, buf, sizeof(buf));
    assert_int_equal(rma_wait(0, 0, back, 11, 4096, sizeof(back)), SYMRAIL_OK);
    assert_memory_equal(back, buf, sizeof(buf));
    lanes_all_up();
    OPS.rkey_release(ep01, 10);
    OPS.rkey_release(ep01, 11);
    assert_int_equal(OPS.mem_dereg(ctx[1], 4), SYMRAIL_OK);
}

/* Large puts and gets in flight on every lane while another thread
 * deregisters: each ends OK or stale, every one posted after mem_dereg
 * returned ends stale, and the memory as it was when mem_dereg returned is
 * what stays. */
enum { BIG = 4u << 20, NOPS = 3 * NLANES, ROUNDS = 8 };
static char *snap;
static int race_go, race_done, race_ok;  /* race_ok: transfers of this round OK */
static unsigned race_delay_us;
static uint64_t race_dereg_ns;  /* the longest mem_dereg under traffic */

static void *deregger(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&race_go, __ATOMIC_ACQUIRE))
        sched_yield();
    /* Past round 0 one transfer has ended first, so that some end OK
     * however slow the machine is next to the delays (none in a minute
     * fails the count at the end). */
    uint64_t until = now_ns() + 60ull * 1000000000ull;
    while (race_delay_us && !__atomic_load_n(&race_ok, __ATOMIC_ACQUIRE) && now_ns() < until)
        sched_yield();
    struct timespec ts = { 0, (long)race_delay_us * 1000 };
    nanosleep(&ts, NULL);
    uint64_t t0 = now_ns();
    assert_int_equal(OPS.mem_dereg(ctx[1], 6), SYMRAIL_OK);
    t0 = now_ns() - t0;
    memcpy(snap, seg, SEG);
    if (t0 > race_dereg_ns)
        race_dereg_ns = t0;
    __atomic_store_n(&race_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void test_dereg_race(void **state)
{
    char *outs[2] = { malloc(BIG), malloc(BIG) }, *back[NOPS];
    tcomp_t c[NOPS];
    unsigned flip = 0;
    int after[NOPS], stale_total = 0, stale_gets = 0, ok_total = 0;
    (void)state;
    snap = malloc(SEG);
    assert_true(outs[0] && outs[1] && snap);
    for (int i = 0; i < NOPS; i++)
        assert_non_null(back[i] = malloc(BIG));
    for (int r = 0; r < ROUNDS; r++) {
        pthread_t th;
        reg_and_import(6, (uint32_t)r + 1, SEG, 20);
        /* Two patterns in turn: a put that lands late changes the bytes. */
        fill(outs[0], BIG, 6u + (unsigned)r);
        fill(outs[1], BIG, 60u + (unsigned)r);
        race_go = race_done = race_ok = 0;
        race_delay_us = (unsigned)r * 1500;
        assert_int_equal(pthread_create(&th, NULL, deregger, NULL), 0);
        /* Keep every slot busy until a while after the deregistration:
         * per lane two gets (the second one's reply may wait behind the
         * first's) and a put. */
        int posted_after = 0;
        for (int i = 0; i < NOPS; i++)
            c[i].done = 1;
        __atomic_store_n(&race_go, 1, __ATOMIC_RELEASE);
        while (posted_after < 2 * NOPS) {
            for (int i = 0; i < NOPS; i++) {
                if (!c[i].done)
                    continue;
                int is_put = i % 3 == 2;
                int was_after = __atomic_load_n(&race_done, __ATOMIC_ACQUIRE);
                rma(is_put, i / 3, is_put ? outs[flip++ % 2] : back[i], 20,
                    is_put ? SEG / 2 + (uint64_t)(i / 3) * BIG : 0, BIG, &c[i]);
                after[i] = was_after;
                posted_after += was_after;
            }
            OPS.progress(ctx[0]);
            for (int i = 0; i < NOPS; i++) {
                if (!c[i].done)
                    continue;
                assert_true(c[i].st == SYMRAIL_OK || c[i].st == SYMRAIL_ERR_STALE);
                if (after[i])
                    assert_int_equal(c[i].st, SYMRAIL_ERR_STALE);
                stale_total += c[i].st == SYMRAIL_ERR_STALE;
                stale_gets += c[i].st == SYMRAIL_ERR_STALE && i % 3 != 2;
                ok_total += c[i].st == SYMRAIL_OK;
                if (c[i].st == SYMRAIL_OK)
                    __atomic_store_n(&race_ok, 1, __ATOMIC_RELEASE);
                c[i].st = SR_TL_INPROGRESS;  /* counted */
            }
        }
        wait_all(c, NOPS);
        for (int i = 0; i < NOPS; i++)
            if (c[i].st != SR_TL_INPROGRESS) {
                assert_true(c[i].st == SYMRAIL_OK || c[i].st == SYMRAIL_ERR_STALE);
                stale_total += c[i].st == SYMRAIL_ERR_STALE;
                ok_total += c[i].st == SYMRAIL_OK;
            }
        pthread_join(th, NULL);
        assert_memory_equal(seg, snap, SEG);
        OPS.rkey_release(ep01, 20);
        lanes_all_up();
    }
    printf("dereg race: %d transfers of %u MiB OK, %d stale (%d gets); mem_dereg took up to "
           "%.0f us\n", ok_total, BIG >> 20, stale_total, stale_gets, race_dereg_ns / 1e3);
    assert_true(stale_total > 0 && ok_total > 0);
    heap_still_works();
    for (int i = 0; i < NOPS; i++)
        free(back[i]);
    free(outs[0]);
    free(outs[1]);
    free(snap);
}

/* A connection whose first queued reply has its header on its way. */
static int reply_begun(const sr_tcp_conn_t *c, const void *arg)
{
    (void)arg;
    return c->tx_head && c->tx_head->dlen > 0 && c->tx_head->sent > 0;
}

/* Large gets on one lane that PE 0 does not read yet (more than the socket
 * buffers hold): the target has later replies queued behind the first when
 * the owner deregisters.  Those on their way complete with the data as it
 * was; those not started answer stale and bring nothing.  The deregistration
 * waits for the first reply to be on its way, however slowly the target's
 * thread gets to it. */
static void test_dereg_queued_gets(void **state)
{
    enum { NG = 4 };
    char *b[NG], *orig = malloc(SEG);
    tcomp_t c[NG];
    (void)state;
    assert_non_null(orig);
    reg_and_import(7, 1, SEG, 21);
    fill(orig, SEG, 77);
    memcpy(seg, orig, SEG);
    for (int i = 0; i < NG; i++) {
        assert_non_null(b[i] = malloc(SEG / 2));
        memset(b[i], 0x11, SEG / 2);
        rma(0, 0, b[i], 21, (uint64_t)(i % 2) * SEG / 2, SEG / 2, &c[i]);
    }
    until_target(reply_begun, NULL);
    assert_int_equal(OPS.mem_dereg(ctx[1], 7), SYMRAIL_OK);
    memset(seg, 0xEE, SEG);  /* the memory is reused at once */
    wait_all(c, NG);
    assert_int_equal(c[0].st, SYMRAIL_OK);
    assert_int_equal(c[NG - 1].st, SYMRAIL_ERR_STALE);
    for (int i = 0; i < NG; i++) {
        if (c[i].st == SYMRAIL_OK) {
            assert_memory_equal(b[i], orig + (size_t)(i % 2) * SEG / 2, SEG / 2);
            continue;
        }
        assert_int_equal(c[i].st, SYMRAIL_ERR_STALE);
        for (size_t k = 0; k < SEG / 2; k += 4096)
            assert_int_equal(b[i][k], 0x11);
    }
    OPS.rkey_release(ep01, 21);
    lanes_all_up();
    for (int i = 0; i < NG; i++)
        free(b[i]);
    free(orig);
}

/* A connection inside the payload of a put of segment *arg, its first
 * 4 KiB written. */
static int inside_put(const sr_tcp_conn_t *c, const void *arg)
{
    return c->rx_state == SR_TCP_RX_PAYLOAD && c->cur.op == SR_TCP_OP_PUT &&
           c->cur.region == *(const uint32_t *)arg && !c->rx_discard &&
           c->rx_left + 4096 <= c->cur.plen;
}

/* One put larger than the socket buffers hold, PE 0 not progressing: the
 * target is inside its payload when the owner deregisters.  The rest is
 * read into nothing, the put ends stale, and the memory as it was when
 * mem_dereg returned stays.  The target's thread is held while the put is
 * posted: a target that drains the socket as fast as the posting call fills
 * it would let the whole put through before the deregistration. */
static void test_dereg_inside_put(void **state)
{
    enum { BIGPUT = 64u << 20 };
    char *mem = aligned_alloc(4096, BIGPUT), *src = malloc(BIGPUT), *snap2 = malloc(BIGPUT);
    sr_tl_mem_t m = { .addr = mem, .len = BIGPUT, .generation = 3 };
    uint8_t key[SR_TL_MKEY_MAX];
    size_t klen = sizeof(key);
    tcomp_t c;
    (void)state;
    assert_true(mem && src && snap2);
    memset(mem, 0xEE, BIGPUT);
    fill(src, BIGPUT, 8);
    assert_int_equal(OPS.mem_reg(ctx[1], 8, &m), SYMRAIL_OK);
    assert_int_equal(OPS.mkey_pack(ctx[1], 8, key, &klen), SYMRAIL_OK);
    assert_int_equal(OPS.rkey_unpack(ep01, 22, key, klen), SYMRAIL_OK);
    pthread_mutex_lock(&ctx[1]->io_lock);
    rma(1, 1, src, 22, 0, BIGPUT, &c);
    pthread_mutex_unlock(&ctx[1]->io_lock);
    /* However late the target's thread runs: it has begun, and cannot have
     * ended, as PE 0 sends no more than the socket buffers hold. */
    until_target(inside_put, &(uint32_t){ 8 });
    assert_int_equal(OPS.mem_dereg(ctx[1], 8), SYMRAIL_OK);
    memcpy(snap2, mem, BIGPUT);
    assert_true(memcmp(snap2, src, 4096) == 0);      /* it had begun */
    wait_all(&c, 1);
    assert_int_equal(c.st, SYMRAIL_ERR_STALE);
    assert_memory_equal(mem, snap2, BIGPUT);
    OPS.rkey_release(ep01, 22);
    lanes_all_up();
    heap_still_works();
    free(mem);
    free(src);
    free(snap2);
}

/* Registration cost: no pinning, no copy; a table slot. */
static void test_reg_cost(void **state)
{
    enum { N = 20000 };
    (void)state;
    uint64_t t0 = now_ns();
    for (uint32_t i = 0; i < N; i++) {
        sr_tl_mem_t m = { .addr = seg, .len = SEG, .generation = i };
        assert_int_equal(OPS.mem_reg(ctx[1], 100 + i, &m), SYMRAIL_OK);
    }
    uint64_t t1 = now_ns();
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(OPS.mem_dereg(ctx[1], 100 + i), SYMRAIL_OK);
    uint64_t t2 = now_ns();
    printf("tcp: mem_reg %.0f ns, mem_dereg %.0f ns per segment (any size)\n",
           (double)(t1 - t0) / N, (double)(t2 - t1) / N);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_put_get),
        cmocka_unit_test(test_stale),
        cmocka_unit_test(test_dereg_race),
        cmocka_unit_test(test_dereg_queued_gets),
        cmocka_unit_test(test_dereg_inside_put),
        cmocka_unit_test(test_reg_cost),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
