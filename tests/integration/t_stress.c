/*
 * Stress: random mixes of put, put_nbi, put_signal, get, get_nbi, atomics of
 * both widths and every kind (blocking and nbi), notifications and batches
 * of segment transfers (single and paged tasks, some with a notification),
 * of random sizes (1 B .. 300 KiB, across the 64 KiB slices), offsets and
 * target PEs, from several threads per PE, each on three contexts (one
 * private, one serialized, the default one), for a bounded time.  Every
 * read is checked byte for byte against its writer's mirror; at the end
 * every writer reads back all it wrote, every owner checks its memory
 * against its writers' checksums, and every notification arrived exactly
 * once, whole and in order (t_stress.h says who owns what).
 *
 *   t_stress [--seconds S] [--seed N] [--threads T] [--ops N] [--corrupt[-late]]
 *
 * --seconds   how long the workers run (default: STRESS_SECONDS, else 10)
 * --seed      the run's seed, printed at start: the same seed replays the
 *             same operations (--ops bounds their number per thread)
 * --corrupt   flip one byte of PE 0's heap before the final checks: the run
 *             must fail with a mismatch, proving the checks can fail (the
 *             owner's checksum catches it first; with --corrupt-late the
 *             byte flips after the owners' checks, for its writer's reads)
 */
#include "t_stress.h"

#include <time.h>

int st_me, st_npes, st_nthreads = 3;
uint64_t st_seed = 20261202, st_max_ops;
double st_seconds = 10;
unsigned char *st_heap, *st_seg;
uint64_t *st_sig, *st_amo;

const char *const st_count_name[C_NCOUNT] = {
    "put", "put_nbi", "put_signal", "get", "get_nbi", "amo", "amo_nbi", "notify",
    "batch_write", "batch_read", "tasks", "fence", "quiet", "bytes"
};

static pthread_mutex_t rx_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *rx_next;          /* [2][npes][nthreads]: next seq of each tag */
static uint64_t rx_total;
static int running;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void rx_check(const symrail_notify_t *m)
{
    static unsigned char want[SYMRAIL_NOTIFY_MAX_PAYLOAD];
    st_hdr_t h;
    T_ASSERT(m->tag == ST_TAG_MSG || m->tag == ST_TAG_BATCH, "notification with tag %u",
             m->tag);
    T_ASSERT(m->src_pe >= 0 && m->src_pe < st_npes, "notification from PE %d", m->src_pe);
    T_ASSERT(m->status == SYMRAIL_OK, "notification (tag %u) from PE %d with status %d",
             m->tag, m->src_pe, (int)m->status);
    T_ASSERT(m->len >= sizeof(h), "notification of %zu bytes from PE %d", m->len, m->src_pe);
    memcpy(&h, m->payload, sizeof(h));
    T_ASSERT(h.seed == st_seed && h.thread < (uint32_t)st_nthreads,
             "mismatch: header of a notification from PE %d (tag %u)", m->src_pe, m->tag);
    int kind = m->tag == ST_TAG_BATCH;
    uint32_t *next = &rx_next[(size_t)kind * (size_t)st_npes * (size_t)st_nthreads +
                              st_slot(m->src_pe, (int)h.thread)];
    if (h.seq != *next)
        ST_FAIL("mismatch: notification (tag %u) %u of (PE %d, thread %u) arrived, expected "
                "%u: lost, doubled or out of order " ST_REPLAY, m->tag, h.seq, m->src_pe,
                h.thread, *next, (unsigned long long)st_seed);
    (*next)++;
    if (kind) {
        T_ASSERT(m->len == sizeof(h), "batch notification of %zu bytes", m->len);
    } else {
        size_t n = m->len - ST_HDR;
        st_fill(want, n, m->src_pe, (int)h.thread, ((uint64_t)1 << 62) | h.seq);
        size_t d = st_diff(m->payload + ST_HDR, want, n);
        if (d != SIZE_MAX)
            ST_FAIL("mismatch: byte %zu of notification %u (%zu bytes) of (PE %d, thread %u) "
                    "is 0x%02x, expected 0x%02x " ST_REPLAY, ST_HDR + d, h.seq, m->len,
                    m->src_pe, h.thread, m->payload[ST_HDR + d], want[d],
                    (unsigned long long)st_seed);
    }
    rx_total++;
}

/* Consumes what has arrived; without `block`, only if no other thread is. */
void st_rx_drain(int block)
{
    static symrail_notify_t m;
    if (block)
        pthread_mutex_lock(&rx_lock);
    else if (pthread_mutex_trylock(&rx_lock) != 0)
        return;
    symrail_status_t st;
    while ((st = symrail_notify_poll(&m)) == SYMRAIL_OK)
        rx_check(&m);
    pthread_mutex_unlock(&rx_lock);
    T_EXPECT(st, SYMRAIL_ERR_AGAIN);
}

static void *worker(void *arg)
{
    st_worker_run(arg);
    __atomic_sub_fetch(&running, 1, __ATOMIC_ACQ_REL);
    return NULL;
}

static void nap(void)
{
    nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
}

static void parse(int argc, char **argv, int *corrupt_p)
{
    st_seconds = (double)t_env("STRESS_SECONDS", 10);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--corrupt") == 0 || strcmp(a, "--corrupt-late") == 0) {
            *corrupt_p = a[9] ? 2 : 1;
            continue;
        }
        T_ASSERT(v, "%s takes a value", a);
        i++;
        if (strcmp(a, "--seconds") == 0)
            st_seconds = strtod(v, NULL);
        else if (strcmp(a, "--seed") == 0)
            st_seed = strtoull(v, NULL, 0);
        else if (strcmp(a, "--threads") == 0)
            st_nthreads = atoi(v);
        else if (strcmp(a, "--ops") == 0)
            st_max_ops = strtoull(v, NULL, 0);
        else
            T_ASSERT(0, "unknown option %s", a);
    }
    T_ASSERT(st_nthreads >= 1 && st_nthreads <= ST_MAXT, "--threads 1..%d", ST_MAXT);
}

/* Each PE's segment descriptor, into slot `me` of every PE's board. */
static void share_segment(unsigned char *descs, symrail_seg_t *seg_p)
{
    size_t len = (size_t)st_npes * (size_t)st_nthreads * ST_SEGREGION;
    void *addr = NULL;
    T_CHECK(symrail_seg_alloc(len, 0, &addr, seg_p));
    st_seg = addr;
    memset(st_seg, 0, len);
    unsigned char mine[8 + SYMRAIL_SEG_DESC_MAX];
    size_t dl = SYMRAIL_SEG_DESC_MAX;
    T_CHECK(symrail_seg_export(*seg_p, mine + 8, &dl));
    uint64_t l64 = dl;
    memcpy(mine, &l64, 8);
    for (int q = 0; q < st_npes; q++)
        T_CHECK(symrail_put(descs + (size_t)st_me * sizeof(mine), mine, sizeof(mine), q));
    T_CHECK(symrail_barrier_all());
}

/* Every writer reads back all it wrote on every PE. */
static void final_reads(st_worker_t *w)
{
    const size_t chunk = ST_REGION / 2;
    for (int q = 0; q < st_npes; q++) {
        for (size_t off = 0; off < ST_REGION; off += chunk) {
            T_CHECK(symrail_get(w->buf, st_heap + st_slot(st_me, w->t) * ST_REGION + off,
                                chunk, q));
            st_check_region(w, 2, q, off, chunk, w->buf, "final read");
        }
        for (int k = 0; k < ST_AWORDS; k++) {
            uint64_t v = 0, want;
            memcpy(&want, w->amo_model + ((size_t)q * ST_AWORDS + (size_t)k) * 8, 8);
            T_CHECK(symrail_atomic_fetch(&st_amo[st_slot(st_me, w->t) * ST_AWORDS + k], q, &v));
            T_ASSERT(v == want, "mismatch: atomic word %d of (PE %d, thread %d) on PE %d is "
                     "0x%llx, expected 0x%llx " ST_REPLAY, k, st_me, w->t, q,
                     (unsigned long long)v, (unsigned long long)want,
                     (unsigned long long)st_seed);
        }
        T_CHECK(symrail_batch_add(w->batch, SYMRAIL_READ, w->buf, w->rseg[q],
                                  st_slot(st_me, w->t) * ST_SEGREGION, ST_SEGREGION, NULL));
        T_CHECK(symrail_batch_submit(w->batch));
        T_CHECK(symrail_batch_wait(w->batch, -1));
        T_CHECK(symrail_batch_reset(w->batch));
        size_t d = st_diff(w->buf, w->segmirror + (size_t)q * ST_SEGREGION, ST_SEGREGION);
        T_ASSERT(d == SIZE_MAX, "mismatch: final read of the segment region of (PE %d, "
                 "thread %d) on PE %d differs at byte %zu " ST_REPLAY, st_me, w->t, q, d,
                 (unsigned long long)st_seed);
    }
}

/* Every owner checks its memory against what its writers say it holds. */
static void owner_checks(const uint64_t *board)
{
    for (int p = 0; p < st_npes; p++) {
        for (int t = 0; t < st_nthreads; t++) {
            const uint64_t *b = board + st_slot(p, t) * ST_BOARD;
            uint64_t h = st_csum(st_heap + st_slot(p, t) * ST_REGION, ST_REGION);
            uint64_t s = st_csum(st_seg + st_slot(p, t) * ST_SEGREGION, ST_SEGREGION);
            uint64_t sig = symrail_signal_fetch(&st_sig[st_slot(p, t)]);
            T_ASSERT(h == b[0], "mismatch: checksum of the heap region of (PE %d, thread %d) "
                     "here " ST_REPLAY, p, t, (unsigned long long)st_seed);
            T_ASSERT(s == b[1], "mismatch: checksum of the segment region of (PE %d, thread "
                     "%d) here " ST_REPLAY, p, t, (unsigned long long)st_seed);
            T_ASSERT(sig == b[2], "mismatch: signal word of (PE %d, thread %d) here is %llu, "
                     "expected %llu " ST_REPLAY, p, t, (unsigned long long)sig,
                     (unsigned long long)b[2], (unsigned long long)st_seed);
        }
    }
}

/* Drains until every notification each writer says it sent us is in. */
static void drain_all(const uint64_t *board)
{
    double end = now_s() + 120;
    size_t np = (size_t)st_npes * (size_t)st_nthreads;
    for (;;) {
        st_rx_drain(1);
        size_t missing = 0;
        for (size_t i = 0; i < np; i++)
            missing += rx_next[i] != board[i * ST_BOARD + 3] ||
                       rx_next[np + i] != board[i * ST_BOARD + 4];
        if (!missing)
            return;
        T_ASSERT(now_s() < end, "mismatch: notifications from %zu writers missing after 120 s "
                 ST_REPLAY, missing, (unsigned long long)st_seed);
        nap();
    }
}

/* On PE 0, in the heap region of the last PE's thread 0, for --corrupt. */
static void flip_byte(void)
{
    if (st_me != 0)
        return;
    size_t at = st_slot(st_npes - 1, 0) * ST_REGION + st_mix(st_seed) % ST_REGION;
    st_heap[at] ^= 0x40;
    printf("stress: flipped byte %zu of the region of (PE %d, thread 0) on PE 0\n",
           at % ST_REGION, st_npes - 1);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int provided = -1, corrupt = 0;
    T_CHECK(symrail_init_thread(SYMRAIL_THREAD_MULTIPLE, &provided));
    T_ASSERT(provided == SYMRAIL_THREAD_MULTIPLE, "provided %d", provided);
    st_me = symrail_my_pe();
    st_npes = symrail_n_pes();
    parse(argc, argv, &corrupt);
    if (st_me == 0) {
        printf("stress: seed %llu, %g s, %d threads per PE, %d PEs%s\n",
               (unsigned long long)st_seed, st_seconds, st_nthreads, st_npes,
               corrupt ? ", one byte corrupted before the final checks" : "");
        fflush(stdout);
    }
    size_t np = (size_t)st_npes * (size_t)st_nthreads;
    st_heap = symrail_calloc(np, ST_REGION);
    st_sig = symrail_calloc(np, sizeof(uint64_t));
    st_amo = symrail_calloc(np * ST_AWORDS, sizeof(uint64_t));
    uint64_t *board = symrail_calloc(np * ST_BOARD, sizeof(uint64_t));
    uint64_t *done = symrail_calloc(1, sizeof(uint64_t));
    uint64_t *totals = symrail_calloc(C_NCOUNT, sizeof(uint64_t));
    unsigned char *descs = symrail_calloc((size_t)st_npes, 8 + SYMRAIL_SEG_DESC_MAX);
    rx_next = calloc(2 * np, sizeof(uint32_t));
    st_worker_t *w = calloc((size_t)st_nthreads, sizeof(*w));
    pthread_t *th = calloc((size_t)st_nthreads, sizeof(*th));
    T_ASSERT(st_heap && st_sig && st_amo && board && done && totals && descs && rx_next && w &&
             th, "out of memory (heap of %zu bytes)", np * ST_REGION);
    symrail_seg_t seg = NULL;
    share_segment(descs, &seg);
    for (int t = 0; t < st_nthreads; t++) {
        st_worker_init(&w[t], t);
        for (int q = 0; q < st_npes; q++) {
            const unsigned char *d = descs + (size_t)q * (8 + SYMRAIL_SEG_DESC_MAX);
            uint64_t dl;
            memcpy(&dl, d, 8);
            T_CHECK(symrail_seg_import(d + 8, (size_t)dl, &w[t].rseg[q]));
        }
    }
    T_CHECK(symrail_barrier_all());

    double t0 = now_s();
    running = st_nthreads;
    for (int t = 0; t < st_nthreads; t++)
        T_ASSERT(pthread_create(&th[t], NULL, worker, &w[t]) == 0, "pthread_create");
    /* Keep consuming notifications until every PE's workers are done, so
     * that no sender waits for a slot we hold. */
    while (__atomic_load_n(&running, __ATOMIC_ACQUIRE) > 0) {
        st_rx_drain(1);
        nap();
    }
    for (int t = 0; t < st_nthreads; t++)
        pthread_join(th[t], NULL);
    double elapsed = now_s() - t0;
    T_CHECK(symrail_atomic_add(done, 1, 0));
    for (uint64_t v = 0; v < (uint64_t)st_npes; nap()) {
        st_rx_drain(1);
        T_CHECK(symrail_atomic_fetch(done, 0, &v));
    }

    for (int t = 0; t < st_nthreads; t++) {
        for (int q = 0; q < st_npes; q++) {
            uint64_t b[ST_BOARD] = {
                st_csum(w[t].mirror + (size_t)q * ST_REGION, ST_REGION),
                st_csum(w[t].segmirror + (size_t)q * ST_SEGREGION, ST_SEGREGION),
                w[t].sig_expect[q], w[t].sent_msg[q], w[t].sent_batch[q]
            };
            T_CHECK(symrail_put(board + st_slot(st_me, t) * ST_BOARD, b, sizeof(b), q));
        }
    }
    T_CHECK(symrail_barrier_all());
    drain_all(board);
    T_CHECK(symrail_barrier_all());
    if (corrupt == 1)
        flip_byte();
    T_CHECK(symrail_barrier_all());
    owner_checks(board);
    if (corrupt == 2)
        flip_byte();
    T_CHECK(symrail_barrier_all());
    for (int t = 0; t < st_nthreads; t++)
        final_reads(&w[t]);
    T_CHECK(symrail_barrier_all());

    for (int c = 0; c < C_NCOUNT; c++) {
        uint64_t sum = 0;
        for (int t = 0; t < st_nthreads; t++)
            sum += w[t].count[c];
        T_CHECK(symrail_atomic_add(&totals[c], sum, 0));
    }
    T_CHECK(symrail_barrier_all());
    if (st_me == 0) {
        uint64_t all = 0;
        printf("stress: totals:");
        for (int c = 0; c < C_NCOUNT; c++) {
            printf(" %s %llu", st_count_name[c], (unsigned long long)totals[c]);
            if (c <= C_BATCH_R)
                all += totals[c];
        }
        printf("\nok: stress: %llu operations in %.1f s, every byte checked (%d PEs, %d threads "
               "each, seed %llu)\n", (unsigned long long)all, elapsed, st_npes, st_nthreads,
               (unsigned long long)st_seed);
    }

    fflush(stdout);
    for (int t = 0; t < st_nthreads; t++)
        st_worker_fini(&w[t]);
    free(th);
    free(w);
    free(rx_next);
    T_CHECK(symrail_barrier_all());
    T_CHECK(symrail_seg_deregister(seg));
    symrail_free(descs);
    symrail_free(totals);
    symrail_free(done);
    symrail_free(board);
    symrail_free(st_amo);
    symrail_free(st_sig);
    symrail_free(st_heap);
    symrail_finalize();
    return 0;
}
