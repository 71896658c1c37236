/* The TCP transport called from several threads at once (params
 * thread_multiple): workers post puts, gets, atomics and notifications on
 * random lanes of one endpoint and verify every byte, while they and a
 * progress thread drive progress and a monitor asks for lanes, liveness and
 * counters.  Two transport instances in one process; run it under a
 * ThreadSanitizer build too (--enable-sanitizers=thread). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tl/tl.h"
#include "util/env.h"

extern const sr_tl_ops_t sr_tl_tcp_ops;
#define OPS sr_tl_tcp_ops

#define NT     6      /* workers */
#define ROUNDS 150
#define BATCH  4      /* puts (then gets) in flight per worker */
#define CHUNK  6000   /* largest put; more than a lane's in-flight limit allows twice */
#define SLOT   (BATCH * CHUNK)
#define HEAP   (64 + NT * 8 + NT * SLOT)

static char *heap[2];
static sr_tl_ctx_t *ctx[2];
static sr_tl_ep_t *ep01, *ep10;
static int nlanes;
static int errors, stop;
static uint64_t deadline_ns;
static int notes_in, notes_order_bad;
static int last_round[NT];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define FAIL(...)                                                                   \
    do {                                                                            \
        fprintf(stderr, __VA_ARGS__);                                               \
        fputc('\n', stderr);                                                        \
        __atomic_fetch_add(&errors, 1, __ATOMIC_RELAXED);                           \
    } while (0)

typedef struct {
    sr_tl_comp_t comp;
    int done;
    symrail_status_t st;
} tcomp_t;

static void on_done(sr_tl_comp_t *comp, symrail_status_t st)
{
    tcomp_t *t = (tcomp_t *)comp;
    if (__atomic_load_n(&t->done, __ATOMIC_RELAXED))
        FAIL("a completion called twice");
    t->st = st;
    __atomic_store_n(&t->done, 1, __ATOMIC_RELEASE);
}

/* PE 1 receives; release in the progress thread, as the core does when the
 * application consumes. */
static int to_release;

static void on_notify(void *arg, int src, uint32_t tag, const void *p, size_t len)
{
    (void)arg;
    int t = (int)(tag >> 16), round = (int)(tag & 0xffff);
    if (src != 0 || t >= NT || len != sizeof(int) || *(const int *)p != round * 7 + t) {
        FAIL("notification from %d tag %#x len %zu is not what was sent", src, tag, len);
        return;
    }
    /* One sender thread's messages arrive in its order. */
    if (round != last_round[t] + 1)
        __atomic_fetch_add(&notes_order_bad, 1, __ATOMIC_RELAXED);
    last_round[t] = round;
    __atomic_fetch_add(&notes_in, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&to_release, 1, __ATOMIC_RELAXED);
}

static void on_lane(void *arg, int pe, int lane, uint32_t weight, uint32_t gen)
{
    (void)arg, (void)pe, (void)lane, (void)weight, (void)gen;
    FAIL("a lane went down");
}

static int late(void)
{
    if (now_ns() < deadline_ns)
        return 0;
    FAIL("timed out (lost completion or deadlock?)");
    __atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
    return 1;
}

static int wait_all(tcomp_t *c, int n)
{
    for (int i = 0; i < n; i++) {
        while (!__atomic_load_n(&c[i].done, __ATOMIC_ACQUIRE)) {
            if (late())
                return -1;
            OPS.progress(ctx[0]);
        }
        if (c[i].st != SYMRAIL_OK) {
            FAIL("operation failed: %d", c[i].st);
            return -1;
        }
    }
    return 0;
}

/* Posts until the lane has room. */
#define POST(call)                                                                  \
    ({                                                                              \
        symrail_status_t st_;                                                       \
        while ((st_ = (call)) == SYMRAIL_ERR_AGAIN && !late())                      \
            OPS.progress(ctx[0]);                                                   \
        st_;                                                                        \
    })

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned seed = 12345u + (unsigned)t;
    static __thread char src[BATCH][CHUNK], dst[BATCH][CHUNK];
    size_t len[BATCH];
    uint64_t off[BATCH], old[BATCH], swapped;
    uint64_t word = 64 + (uint64_t)t * 8;  /* this worker's compare-swap word */
    tcomp_t c[BATCH * 2 + 1];
    for (int round = 1; round <= ROUNDS && !__atomic_load_n(&stop, __ATOMIC_RELAXED);
         round++) {
        memset(c, 0, sizeof(c));
        for (int k = 0; k < BATCH * 2 + 1; k++)
            c[k].comp.cb = on_done;
        for (int k = 0; k < BATCH; k++) {
            len[k] = 1 + (size_t)rand_r(&seed) % CHUNK;
            off[k] = 64 + NT * 8 + (uint64_t)t * SLOT + (uint64_t)k * CHUNK;
            for (size_t i = 0; i < len[k]; i++)
                src[k][i] = (char)rand_r(&seed);
            symrail_status_t st = POST(OPS.put(ep01, rand_r(&seed) % nlanes, src[k], 0,
                                               off[k], len[k], &c[k].comp));
            if (st != SR_TL_INPROGRESS && st != SYMRAIL_OK)
                FAIL("put: %d", st);
            if (st == SYMRAIL_OK)
                c[k].done = 1;
            st = POST(OPS.atomic(ep01, rand_r(&seed) % nlanes, SR_TL_AMO_ADD, 0, 0, 1, 0,
                                 &old[k], &c[BATCH + k].comp));
            if (st != SR_TL_INPROGRESS)
                FAIL("fetch-add: %d", st);
        }
        symrail_status_t st = POST(OPS.atomic(ep01, rand_r(&seed) % nlanes, SR_TL_AMO_CSWAP,
                                              0, word, (uint64_t)round, (uint64_t)round - 1,
                                              &swapped, &c[BATCH * 2].comp));
        if (st != SR_TL_INPROGRESS)
            FAIL("compare-swap: %d", st);
        int note = round * 7 + t;
        st = POST(OPS.notify(ep01, (uint32_t)(t << 16 | round), &note, sizeof(note)));
        if (st != SYMRAIL_OK)
            FAIL("notify: %d", st);
        if (wait_all(c, BATCH * 2 + 1) != 0)
            break;
        /* Put complete means applied at the target: look there. */
        for (int k = 0; k < BATCH; k++)
            if (memcmp(heap[1] + off[k], src[k], len[k]) != 0)
                FAIL("worker %d round %d: put %d (%zu bytes) did not arrive intact", t,
                     round, k, len[k]);
        if (swapped != (uint64_t)round - 1)
            FAIL("worker %d: compare-swap found %llu, not %d", t,
                 (unsigned long long)swapped, round - 1);
        for (int k = 0; k < BATCH; k++)
            if (old[k] >= (uint64_t)NT * ROUNDS * BATCH)
                FAIL("fetch-add returned %llu", (unsigned long long)old[k]);
        memset(c, 0, sizeof(c));
        for (int k = 0; k < BATCH; k++) {
            c[k].comp.cb = on_done;
            memset(dst[k], 0, len[k]);
            st = POST(OPS.get(ep01, rand_r(&seed) % nlanes, dst[k], 0, off[k], len[k],
                              &c[k].comp));
            if (st != SR_TL_INPROGRESS && st != SYMRAIL_OK)
                FAIL("get: %d", st);
            if (st == SYMRAIL_OK)
                c[k].done = 1;
        }
        if (wait_all(c, BATCH) != 0)
            break;
        for (int k = 0; k < BATCH; k++)
            if (memcmp(dst[k], src[k], len[k]) != 0)
                FAIL("worker %d round %d: get %d (%zu bytes) returned other data", t, round,
                     k, len[k]);
    }
    return NULL;
}

/* Progress of both sides, and the consumer of PE 1's notifications. */
static void *progressor(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        OPS.progress(ctx[0]);
        OPS.progress(ctx[1]);
        for (int n = __atomic_exchange_n(&to_release, 0, __ATOMIC_RELAXED); n > 0; n--)
            OPS.notify_release(ep10);
    }
    return NULL;
}

/* What the core asks while others post. */
static void *monitor(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
        uint32_t w[8];
        int n = OPS.ep_lanes(ep01, w, 8);
        for (int l = 0; l < n; l++)
            if (w[l] == 0)
                FAIL("lane %d is down", l);
        if (OPS.ep_check(ep01) != SYMRAIL_OK)
            FAIL("peer taken for gone");
        (void)OPS.ep_heard(ep01);
        symrail_stats_t s;
        memset(&s, 0, sizeof(s));
        OPS.stats(ctx[0], &s);
        usleep(100);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    static const uint8_t local[2] = { 1, 1 };
    sr_env_t env;
    /* Few ops and bytes per lane: posters meet "no room" and wait for each
     * other's completions. */
    setenv("SYMRAIL_JOB_SECRET", "unit-mt", 1);
    setenv("SYMRAIL_TCP_LANES", "3", 1);
    setenv("SYMRAIL_TCP_MAX_OPS", "6", 1);
    setenv("SYMRAIL_TCP_MAX_INFLIGHT", "8K", 1);
    setenv("SYMRAIL_NOTIFY_SLOTS", "4", 1);
    assert_int_equal(sr_env_load(getenv, &env), SYMRAIL_OK);
    uint8_t addr[2][1024];
    size_t alen[2];
    for (int pe = 0; pe < 2; pe++) {
        heap[pe] = calloc(1, HEAP);
        assert_non_null(heap[pe]);
        sr_tl_params_t p = { .my_pe = pe, .n_pes = 2, .job = "unit-mt", .is_local = local,
                             .env = &env, .serve_local = 1, .thread_multiple = 1,
                             .notify_cb = on_notify, .lane_cb = on_lane };
        assert_int_equal(OPS.init(&p, &ctx[pe]), SYMRAIL_OK);
        sr_tl_mem_t m = { .addr = heap[pe], .len = HEAP };
        assert_int_equal(OPS.mem_reg(ctx[pe], 0, &m), SYMRAIL_OK);
        alen[pe] = sizeof(addr[pe]);
        assert_int_equal(OPS.addr_pack(ctx[pe], addr[pe], &alen[pe]), SYMRAIL_OK);
    }
    assert_int_equal(OPS.connect(ctx[0], 1, addr[1], alen[1], &ep01), SYMRAIL_OK);
    assert_int_equal(OPS.connect(ctx[1], 0, addr[0], alen[0], &ep10), SYMRAIL_OK);
    uint32_t w[8];
    nlanes = OPS.ep_lanes(ep01, w, 8);
    assert_int_equal(nlanes, 3);

    deadline_ns = now_ns() + 120ull * 1000000000ull;
    pthread_t th[NT], prog, mon;
    assert_int_equal(pthread_create(&prog, NULL, progressor, NULL), 0);
    assert_int_equal(pthread_create(&mon, NULL, monitor, NULL), 0);
    for (int t = 0; t < NT; t++)
        assert_int_equal(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t), 0);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
    /* The last notifications may still be on their way. */
    while (__atomic_load_n(&notes_in, __ATOMIC_RELAXED) < NT * ROUNDS && !errors && !late())
        usleep(1000);
    __atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
    pthread_join(prog, NULL);
    pthread_join(mon, NULL);

    assert_int_equal(errors, 0);
    uint64_t sum = __atomic_load_n((uint64_t *)(void *)heap[1], __ATOMIC_RELAXED);
    assert_int_equal(sum, (uint64_t)NT * ROUNDS * BATCH);
    for (int t = 0; t < NT; t++)
        assert_int_equal(*(uint64_t *)(void *)(heap[1] + 64 + t * 8), ROUNDS);
    assert_int_equal(notes_in, NT * ROUNDS);
    assert_int_equal(notes_order_bad, 0);
    symrail_stats_t s;
    memset(&s, 0, sizeof(s));
    OPS.stats(ctx[0], &s);
    /* Every slice and atomic counted once, and every one completed. */
    assert_int_equal(s.slices_posted, (uint64_t)NT * ROUNDS * (3 * BATCH + 1));
    assert_int_equal(s.completions, s.slices_posted);
    OPS.fini(ctx[1]);
    OPS.fini(ctx[0]);
    sr_env_release(&env);
    free(heap[0]);
    free(heap[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
