/*
 * The verbs transport called from several threads at once, through its ops
 * table (params.thread_multiple = 1): one PE with an endpoint to itself over
 * every rail, T threads each posting puts (inline, zero-copy from
 * registered memory, bounced from private memory), gets and atomics on
 * random lanes, each flushing only the lanes it used and verifying every
 * byte, while one more thread only drives progress.  A fetch-add counter
 * shared by all threads checks that no atomic is lost or applied twice.
 *
 * Usage: t_verbs_threads [threads [rounds [thread_multiple]]]
 * Exit 77 where no RDMA device is present.
 */
#include "config.h"
#include "tl_self.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define AREA      (512 * 1024)     /* per thread, in the registered region */
#define MAXLEN    (48 * 1024)      /* below the bounce buffer size */
#define COUNTER   0                /* offset of the shared counter */
#define DATA_OFF  4096

static const sr_tl_ops_t *ops = &sr_tl_verbs_ops;

static sr_tl_ctx_t *ctx;
static sr_tl_ep_t *ep;
static unsigned char *heap;
static size_t heap_len;
static int nthreads = 4, rounds = 200, nlanes;
static uint32_t lane_up_mask;
static int stop_progress;
static int failed;

typedef struct {
    sr_tl_comp_t comp;
    int          done;    /* atomic */
    symrail_status_t status;
} wait_comp_t;

static void comp_cb(sr_tl_comp_t *comp, symrail_status_t status)
{
    wait_comp_t *w = (wait_comp_t *)comp;
    w->status = status;
    __atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
}

static void comp_init(wait_comp_t *w)
{
    memset(w, 0, sizeof(*w));
    w->comp.cb = comp_cb;
}

static symrail_status_t comp_wait(wait_comp_t *w, symrail_status_t st)
{
    if (st != SR_TL_INPROGRESS)
        return st;
    while (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
        ops->progress(ctx);
    return w->status;
}

static void fail(const char *what, int t, int r, symrail_status_t st)
{
    fprintf(stderr, "FAIL: thread %d round %d: %s (status %d)\n", t, r, what, (int)st);
    __atomic_store_n(&failed, 1, __ATOMIC_RELAXED);
}

static void notify_cb(void *arg, int src, uint32_t tag, const void *p, size_t len)
{
    (void)arg, (void)src, (void)tag, (void)p, (void)len;
}

static int pick_lane(unsigned *seed)
{
    for (;;) {
        int l = (int)(rand_r(seed) % (unsigned)nlanes);
        if (lane_up_mask & (1u << l))
            return l;
    }
}

/* Posts until the transport has room. */
#define POST(call) ({ symrail_status_t s_; \
    while ((s_ = (call)) == SYMRAIL_ERR_AGAIN) \
        ops->progress(ctx); \
    s_; })

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned seed = 1234u + (unsigned)t * 7919u;
    size_t base = DATA_OFF + (size_t)t * AREA;
    unsigned char *priv = malloc(MAXLEN), *back = malloc(MAXLEN);
    /* Source of zero-copy puts: the second half of the thread's area. */
    unsigned char *reg = heap + base + AREA / 2;
    uint64_t adds = 0;
    for (int r = 0; r < rounds && !__atomic_load_n(&failed, __ATOMIC_RELAXED); r++) {
        uint32_t used = 0;
        size_t len = 1 + (size_t)rand_r(&seed) % (r % 3 == 0 ? 64 : MAXLEN);
        int kind = rand_r(&seed) % 3;   /* 0 inline/private, 1 zero-copy, 2 split on two lanes */
        unsigned char *src = kind == 1 ? reg : priv;
        for (size_t i = 0; i < len; i++)
            src[i] = (unsigned char)(t * 31 + r * 7 + i);
        wait_comp_t w[2];
        int nposts = kind == 2 && len > 1 ? 2 : 1;
        size_t part = nposts == 2 ? len / 2 : len;
        for (int p = 0; p < nposts; p++) {
            int lane = pick_lane(&seed);
            used |= 1u << lane;
            comp_init(&w[p]);
            size_t off = p ? part : 0, n = p ? len - part : part;
            symrail_status_t st = POST(ops->put(ep, lane, src + off, 0, base + off, n, &w[p].comp));
            if (comp_wait(&w[p], st) != SYMRAIL_OK)
                fail("put", t, r, st);
        }
        /* Several atomics on the shared counter, on random lanes. */
        int nadd = 1 + rand_r(&seed) % 4;
        wait_comp_t wa[4];
        uint64_t old[4];
        for (int a = 0; a < nadd; a++) {
            int lane = pick_lane(&seed);
            used |= 1u << lane;
            comp_init(&wa[a]);
            symrail_status_t st = POST(ops->atomic(ep, lane, SR_TL_AMO_ADD, 0, COUNTER, 1, 0,
                                                   &old[a], &wa[a].comp));
            if (st != SR_TL_INPROGRESS && st != SYMRAIL_OK)
                fail("atomic add", t, r, st);
        }
        for (int a = 0; a < nadd; a++)
            if (comp_wait(&wa[a], SR_TL_INPROGRESS) != SYMRAIL_OK)
                fail("atomic add completion", t, r, wa[a].status);
        adds += (uint64_t)nadd;
        /* Only the lanes this thread used. */
        wait_comp_t wf;
        comp_init(&wf);
        symrail_status_t st = ops->flush(ep, used, &wf.comp);
        if (comp_wait(&wf, st) != SYMRAIL_OK)
            fail("flush", t, r, st);
        if (memcmp(heap + base, src, len) != 0) {
            fail("put data after flush", t, r, SYMRAIL_OK);
            break;
        }
        /* Read it back into private memory (bounced) on a random lane. */
        memset(back, 0, len);
        wait_comp_t wg;
        comp_init(&wg);
        st = POST(ops->get(ep, pick_lane(&seed), back, 0, base, len, &wg.comp));
        if (comp_wait(&wg, st) != SYMRAIL_OK || memcmp(back, src, len) != 0)
            fail("get", t, r, st);
        /* A swap on a word of our own (compare-swap loop) and a fetch. */
        uint64_t word = base + AREA / 2 - 8, prev = 0, now = 0;
        wait_comp_t ws, wq;
        comp_init(&ws);
        st = POST(ops->atomic(ep, pick_lane(&seed), SR_TL_AMO_SWAP, 0, word,
                              ((uint64_t)t << 32) | (uint64_t)r, 0, &prev, &ws.comp));
        if (comp_wait(&ws, st) != SYMRAIL_OK ||
            (r > 0 && prev != (((uint64_t)t << 32) | (uint64_t)(r - 1))))
            fail("swap", t, r, st);
        comp_init(&wq);
        st = POST(ops->atomic(ep, pick_lane(&seed), SR_TL_AMO_FETCH, 0, word, 0, 0, &now,
                              &wq.comp));
        if (comp_wait(&wq, st) != SYMRAIL_OK || now != (((uint64_t)t << 32) | (uint64_t)r))
            fail("fetch after swap", t, r, st);
    }
    free(priv);
    free(back);
    return (void *)(uintptr_t)adds;
}

static void *progressor(void *arg)
{
    (void)arg;
    while (!__atomic_load_n(&stop_progress, __ATOMIC_ACQUIRE))
        ops->progress(ctx);
    return NULL;
}

int main(int argc, char **argv)
{
    int mt = 1;
    if (argc > 1)
        nthreads = atoi(argv[1]);
    if (argc > 2)
        rounds = atoi(argv[2]);
    if (argc > 3)
        mt = atoi(argv[3]);
    if (nthreads < 1 || nthreads > 64 || (!mt && nthreads != 1)) {
        fprintf(stderr, "usage: t_verbs_threads [threads (1..64) [rounds [thread_multiple]]]\n");
        return 2;
    }
    sr_env_t env;
    int rc = tl_self_init("t_verbs_threads", mt, notify_cb, &env, &ctx);
    if (rc != 0)
        return rc;
    heap_len = DATA_OFF + (size_t)nthreads * AREA;
    if (posix_memalign((void **)&heap, 4096, heap_len) != 0)
        return 1;
    memset(heap, 0, heap_len);
    void *addr = tl_self_connect(ctx, heap, heap_len, &ep);
    if (addr == NULL)
        return 1;
    uint32_t w[SR_TL_MAX_LANES];
    nlanes = ops->ep_lanes(ep, w, SR_TL_MAX_LANES);
    for (int l = 0; l < nlanes; l++)
        if (w[l])
            lane_up_mask |= 1u << l;
    if (lane_up_mask == 0) {
        fprintf(stderr, "FAIL: no lane is up\n");
        return 1;
    }

    pthread_t th[64], pth;
    if (mt)
        pthread_create(&pth, NULL, progressor, NULL);
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    uint64_t adds = 0;
    for (int t = 0; t < nthreads; t++) {
        void *ret;
        pthread_join(th[t], &ret);
        adds += (uint64_t)(uintptr_t)ret;
    }
    __atomic_store_n(&stop_progress, 1, __ATOMIC_RELEASE);
    if (mt)
        pthread_join(pth, NULL);
    uint64_t counter;
    memcpy(&counter, heap + COUNTER, 8);
    if (!failed && counter != adds) {
        fprintf(stderr, "FAIL: shared counter is %llu after %llu fetch-adds\n",
                (unsigned long long)counter, (unsigned long long)adds);
        failed = 1;
    }
    symrail_stats_t stats;
    memset(&stats, 0, sizeof(stats));
    ops->stats(ctx, &stats);
    ops->disconnect(ep);
    ops->fini(ctx);
    free(addr);
    free(heap);
    sr_env_release(&env);
    if (failed)
        return 1;
    printf("ok: verbs threads: %d threads x %d rounds over %d lanes verified, %llu fetch-adds, "
           "%llu slices posted, thread_multiple %d\n", nthreads, rounds, nlanes,
           (unsigned long long)adds, (unsigned long long)stats.slices_posted, mt);
    return 0;
}
