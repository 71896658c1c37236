/*
 * Threads and contexts under SYMRAIL_THREAD_MULTIPLE.
 *
 *   t_threads private N   N threads per PE, each on a private context of its
 *                         own: random put/put_nbi/get/atomics/put_signal to
 *                         random PEs, every byte and every fetched value
 *                         checked, ctx_quiet per thread
 *   t_threads shared N    the same on the default context, shared by N threads
 *   t_threads destroy     ctx_destroy with transfers in flight completes them;
 *                         10 000 contexts created and destroyed leak nothing
 *   t_threads notify N    N threads send notifications to the next PE while N
 *                         threads receive: each arrives exactly once
 *   t_threads isolation   with SYMRAIL_TEST_HOLD_LANE=1:MS (2 lanes): context B's
 *                         get stays outstanding on lane 1, and quiet on context A
 *                         (lane 0) returns while it does
 */
#include "tcommon.h"

#include <dirent.h>
#include <malloc.h>
#include <pthread.h>
#include <time.h>

#define REGION   4096
#define MAXT     16
#define PENDING  8

static int me, npes, nthreads, use_private;
static unsigned char *data;   /* [npes][nthreads][REGION]: region (src pe, thread) */
static uint64_t *counters;    /* [npes][nthreads]: fetch_add of (src pe, thread) */
static uint64_t *sigs;        /* [npes][nthreads]: put_signal ADD of (src pe, thread) */
static uint64_t *global;      /* [2] on PE 0: adds of every thread; their expected sum */

typedef struct {
    int       t;
    uint64_t  rng;
    uint64_t  global_adds;
    unsigned char *mirror;    /* [npes][REGION]: what our region holds on each PE */
    uint64_t *expect;         /* [npes]: our counter on each PE */
    uint64_t *nsig;           /* [npes]: our signals to each PE */
    unsigned char pend[PENDING][512];
    int       npend;
} worker_t;

static uint64_t rnd(worker_t *w)
{
    w->rng ^= w->rng << 13;
    w->rng ^= w->rng >> 7;
    w->rng ^= w->rng << 17;
    return w->rng;
}

static size_t slot(int src, int t)
{
    return (size_t)src * (size_t)nthreads + (size_t)t;
}

static void quiet(symrail_ctx_t ctx, worker_t *w)
{
    T_CHECK(symrail_ctx_quiet(ctx));
    w->npend = 0;
}

static void check_region(symrail_ctx_t ctx, worker_t *w, int q, size_t off, size_t len)
{
    unsigned char buf[REGION];
    T_CHECK(symrail_ctx_get(ctx, buf, data + slot(me, w->t) * REGION + off, len, q));
    for (size_t i = 0; i < len; i++)
        T_ASSERT(buf[i] == w->mirror[(size_t)q * REGION + off + i],
                 "thread %d: byte %zu of our region on PE %d is %u, expected %u", w->t,
                 off + i, q, buf[i], w->mirror[(size_t)q * REGION + off + i]);
}

static void *work(void *arg)
{
    worker_t *w = arg;
    symrail_ctx_t ctx = SYMRAIL_CTX_DEFAULT;
    if (use_private)
        T_CHECK(symrail_ctx_create(SYMRAIL_CTX_PRIVATE, &ctx));
    const int iters = 400;
    for (int i = 0; i < iters; i++) {
        int q = (int)(rnd(w) % (uint64_t)npes);
        unsigned op = (unsigned)(rnd(w) % 6);
        size_t len = 1 + rnd(w) % 512, off = rnd(w) % (REGION - len);
        unsigned char *dst = data + slot(me, w->t) * REGION + off;
        unsigned char *m = w->mirror + (size_t)q * REGION + off;
        /* Two puts to the same bytes are ordered only by a fence between
         * them (they may take different lanes). */
        if (w->npend && (op <= 1 || op == 5))
            T_CHECK(symrail_ctx_fence(ctx));
        switch (op) {
        case 0:  /* blocking put: the source may be reused at once */
            for (size_t b = 0; b < len; b++)
                m[b] = (unsigned char)rnd(w);
            T_CHECK(symrail_ctx_put(ctx, dst, m, len, q));
            break;
        case 1:  /* put_nbi: its source stays put until the quiet */
            if (w->npend == PENDING)
                quiet(ctx, w);
            for (size_t b = 0; b < len; b++)
                w->pend[w->npend][b] = m[b] = (unsigned char)rnd(w);
            T_CHECK(symrail_ctx_put_nbi(ctx, dst, w->pend[w->npend], len, q));
            w->npend++;
            break;
        case 2:
            quiet(ctx, w);
            check_region(ctx, w, q, off, len);
            break;
        case 3: {
            uint64_t v = 1 + rnd(w) % 1000, old = 0;
            T_CHECK(symrail_ctx_atomic_fetch_add(ctx, &counters[slot(me, w->t)], v, q, &old));
            T_ASSERT(old == w->expect[q], "thread %d: fetch_add on PE %d returned %llu, "
                     "expected %llu", w->t, q, (unsigned long long)old,
                     (unsigned long long)w->expect[q]);
            w->expect[q] += v;
            break;
        }
        case 4:
            T_CHECK(symrail_ctx_atomic_add(ctx, &global[0], 1, 0));
            w->global_adds++;
            break;
        default:
            for (size_t b = 0; b < len; b++)
                m[b] = (unsigned char)rnd(w);
            T_CHECK(symrail_ctx_put_signal(ctx, dst, m, len, &sigs[slot(me, w->t)], 1,
                                           SYMRAIL_SIGNAL_ADD, q));
            w->nsig[q]++;
            break;
        }
    }
    quiet(ctx, w);
    for (int q = 0; q < npes; q++) {
        uint64_t v = 0;
        check_region(ctx, w, q, 0, REGION);
        T_CHECK(symrail_ctx_atomic_fetch(ctx, &sigs[slot(me, w->t)], q, &v));
        T_ASSERT(v == w->nsig[q], "thread %d: signal on PE %d is %llu, expected %llu", w->t, q,
                 (unsigned long long)v, (unsigned long long)w->nsig[q]);
        T_CHECK(symrail_ctx_atomic_fetch(ctx, &counters[slot(me, w->t)], q, &v));
        T_ASSERT(v == w->expect[q], "thread %d: counter on PE %d is %llu, expected %llu", w->t,
                 q, (unsigned long long)v, (unsigned long long)w->expect[q]);
    }
    if (use_private)
        T_CHECK(symrail_ctx_destroy(ctx));
    return NULL;
}

static void run_threads(const char *mode, int n)
{
    worker_t w[MAXT];
    pthread_t th[MAXT];
    nthreads = n;
    use_private = strcmp(mode, "private") == 0;
    size_t slots = (size_t)npes * (size_t)n;
    data = symrail_calloc(slots, REGION);
    counters = symrail_calloc(slots, sizeof(uint64_t));
    sigs = symrail_calloc(slots, sizeof(uint64_t));
    global = symrail_calloc(2, sizeof(uint64_t));
    T_ASSERT(data && counters && sigs && global, "symrail_calloc failed");
    for (int t = 0; t < n; t++) {
        memset(&w[t], 0, sizeof(w[t]));
        w[t].t = t;
        w[t].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(me * MAXT + t + 1);
        w[t].mirror = calloc((size_t)npes, REGION);
        w[t].expect = calloc((size_t)npes, sizeof(uint64_t));
        w[t].nsig = calloc((size_t)npes, sizeof(uint64_t));
        T_ASSERT(w[t].mirror && w[t].expect && w[t].nsig, "out of memory");
    }
    T_CHECK(symrail_barrier_all());
    for (int t = 0; t < n; t++)
        T_ASSERT(pthread_create(&th[t], NULL, work, &w[t]) == 0, "pthread_create failed");
    uint64_t adds = 0;
    for (int t = 0; t < n; t++) {
        pthread_join(th[t], NULL);
        adds += w[t].global_adds;
        free(w[t].mirror);
        free(w[t].expect);
        free(w[t].nsig);
    }
    T_CHECK(symrail_atomic_add(&global[1], adds, 0));
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        T_ASSERT(global[0] == global[1], "the shared counter is %llu, but the threads added "
                 "%llu", (unsigned long long)global[0], (unsigned long long)global[1]);
    T_CHECK(symrail_barrier_all());
    symrail_free(global);
    symrail_free(sigs);
    symrail_free(counters);
    symrail_free(data);
    if (me == 0)
        printf("ok: %d threads per PE on %s, %d PEs: every byte and value checked\n",
               n, use_private ? "private contexts" : "the default context", npes);
}

static int count_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    T_ASSERT(d != NULL, "cannot list /proc/self/fd");
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void run_destroy(void)
{
    const size_t big = 1u << 20, nbig = 8;
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    unsigned char *dst = symrail_calloc(nbig, big);
    unsigned char *src = malloc(nbig * big);
    T_ASSERT(dst && src, "out of memory");
    for (size_t i = 0; i < nbig * big; i++)
        src[i] = t_byte(me, 7, i);
    T_CHECK(symrail_barrier_all());
    symrail_ctx_t ctx;
    T_CHECK(symrail_ctx_create(SYMRAIL_CTX_PRIVATE, &ctx));
    for (size_t k = 0; k < nbig; k++)
        T_CHECK(symrail_ctx_put_nbi(ctx, dst + k * big, src + k * big, big, to));
    T_CHECK(symrail_ctx_destroy(ctx));  /* completes them */
    T_CHECK(symrail_barrier_all());
    for (size_t i = 0; i < nbig * big; i++)
        T_ASSERT(dst[i] == t_byte(from, 7, i), "byte %zu from PE %d did not arrive before "
                 "ctx_destroy returned", i, from);

    /* Warm up once, so that what the first contexts grow for good (pools of
     * the allocator, the transports' own) does not count as a leak. */
    uint64_t *word = symrail_calloc(1, sizeof(uint64_t));
    T_ASSERT(word != NULL, "symrail_calloc failed");
    for (int i = 0; i < 100; i++) {
        T_CHECK(symrail_ctx_create(0, &ctx));
        T_CHECK(symrail_ctx_atomic_add(ctx, word, 1, to));
        T_CHECK(symrail_ctx_destroy(ctx));
    }
    int fds = count_fds();
    struct mallinfo2 before = mallinfo2();
    for (int i = 0; i < 10000; i++) {
        T_CHECK(symrail_ctx_create(i & 1 ? SYMRAIL_CTX_PRIVATE : 0, &ctx));
        T_CHECK(symrail_ctx_put(ctx, dst, src, 64, to));
        T_CHECK(symrail_ctx_atomic_add(ctx, word, 1, to));
        T_CHECK(symrail_ctx_destroy(ctx));
    }
    struct mallinfo2 after = mallinfo2();
    T_ASSERT(count_fds() == fds, "10000 contexts left %d file descriptors open",
             count_fds() - fds);
    T_ASSERT(after.uordblks <= before.uordblks + 65536,
             "10000 contexts left %zu bytes allocated", after.uordblks - before.uordblks);
    /* A destroyed context is refused (while its memory is not reused), as
     * are stores on a NOSTORE context and destroying the default one. */
    T_CHECK(symrail_ctx_create(SYMRAIL_CTX_PRIVATE, &ctx));
    T_CHECK(symrail_ctx_destroy(ctx));
    T_EXPECT(symrail_ctx_put(ctx, dst, src, 64, to), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_ctx_quiet(ctx), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_ctx_destroy(ctx), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_ctx_destroy(SYMRAIL_CTX_DEFAULT), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_ctx_create(8, &ctx), SYMRAIL_ERR_INVALID);
    T_ASSERT(ctx == NULL, "a failed ctx_create left a handle");
    T_EXPECT(symrail_ctx_destroy(NULL), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_ctx_create(SYMRAIL_CTX_NOSTORE, &ctx));
    T_EXPECT(symrail_ctx_put(ctx, dst, src, 64, to), SYMRAIL_ERR_INVALID);
    T_EXPECT(symrail_ctx_atomic_add(ctx, word, 1, to), SYMRAIL_ERR_INVALID);
    T_CHECK(symrail_ctx_get(ctx, src, dst, 64, to));
    T_CHECK(symrail_ctx_destroy(ctx));
    T_CHECK(symrail_barrier_all());
    T_ASSERT(*word == 10100, "the word took %llu adds, expected 10100",
             (unsigned long long)*word);
    symrail_free(word);
    free(src);
    symrail_free(dst);
    if (me == 0)
        printf("ok: ctx_destroy completes transfers in flight; 10000 contexts leak nothing; "
               "destroyed and NOSTORE contexts are refused\n");
}

#define NOTIFY_PER 1000

static int note_threads;
static uint32_t note_got[MAXT][NOTIFY_PER];  /* copies of each message of the previous PE */
static int note_taken;

/* Every fourth message is as large as a message gets (it goes as several
 * transport messages, which threads sending at once must not interleave). */
static size_t note_len(uint32_t i)
{
    return i % 4 == 0 ? SYMRAIL_NOTIFY_MAX_PAYLOAD : 4 + (i * 37) % 600;
}

static void *note_sender(void *arg)
{
    uint32_t t = (uint32_t)(uintptr_t)arg;
    unsigned char buf[SYMRAIL_NOTIFY_MAX_PAYLOAD];
    for (uint32_t i = 0; i < NOTIFY_PER; i++) {
        uint32_t tag = t << 16 | i;
        memcpy(buf, &tag, sizeof(tag));
        t_fill(buf + sizeof(tag), note_len(i) - sizeof(tag), me, tag);
        T_CHECK(symrail_notify_send((me + 1) % npes, tag, buf, note_len(i)));
    }
    return NULL;
}

/* Receivers take messages, all at once, until every one of the previous
 * PE's is in. */
static void *note_receiver(void *arg)
{
    (void)arg;
    for (;;) {
        if (__atomic_add_fetch(&note_taken, 1, __ATOMIC_RELAXED) > note_threads * NOTIFY_PER)
            return NULL;
        symrail_notify_t m;
        T_CHECK(symrail_notify_wait(60000, &m));
        uint32_t t = m.tag >> 16, i = m.tag & 0xffff, copy;
        memcpy(&copy, m.payload, sizeof(copy));
        T_ASSERT(t < (uint32_t)note_threads && i < NOTIFY_PER, "message %08x was never sent",
                 m.tag);
        T_ASSERT(m.len == note_len(i) && copy == m.tag &&
                     t_verify(m.payload + sizeof(copy), m.len - sizeof(copy), m.src_pe,
                              m.tag) == SIZE_MAX,
                 "message %08x (%zu bytes) has payload %08x or is corrupt", m.tag, m.len, copy);
        __atomic_fetch_add(&note_got[t][i], 1, __ATOMIC_RELAXED);
    }
}

static void run_notify(int n)
{
    pthread_t s[MAXT], r[MAXT];
    note_threads = n;
    T_CHECK(symrail_barrier_all());
    for (int t = 0; t < n; t++) {
        T_ASSERT(pthread_create(&s[t], NULL, note_sender, (void *)(uintptr_t)t) == 0, "create");
        T_ASSERT(pthread_create(&r[t], NULL, note_receiver, NULL) == 0, "create");
    }
    for (int t = 0; t < n; t++) {
        pthread_join(s[t], NULL);
        pthread_join(r[t], NULL);
    }
    for (int t = 0; t < n; t++)
        for (int i = 0; i < NOTIFY_PER; i++)
            T_ASSERT(note_got[t][i] == 1, "message %d of sender %d came %u times", i, t,
                     note_got[t][i]);
    symrail_notify_t m;
    T_EXPECT(symrail_notify_poll(&m), SYMRAIL_ERR_AGAIN);
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        printf("ok: notify from %d threads to %d threads per PE: each message once\n",
               n, n);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Contexts take home lanes in turn after the default context (0) and the
 * collectives' (1): over 2 lanes, the first created keeps to lane 0, the
 * second to lane 1, whose completions the hook holds back. */
static void run_isolation(void)
{
    const char *hold = getenv("SYMRAIL_TEST_HOLD_LANE");
    unsigned long long ms = 0;
    T_ASSERT(hold && sscanf(hold, "1:%llu", &ms) == 1 && ms >= 1000,
             "run with SYMRAIL_TEST_HOLD_LANE=1:MS, MS >= 1000");
    int peer = (me + 1) % npes;
    uint64_t *word = symrail_calloc(4, sizeof(uint64_t));
    uint64_t va = 0, vb = 0, one = 1;
    T_ASSERT(word != NULL, "symrail_calloc failed");
    T_CHECK(symrail_barrier_all());
    symrail_ctx_t a, b;
    T_CHECK(symrail_ctx_create(SYMRAIL_CTX_PRIVATE, &a));
    T_CHECK(symrail_ctx_create(SYMRAIL_CTX_PRIVATE, &b));
    uint64_t t0 = now_ms();
    T_CHECK(symrail_ctx_get_nbi(b, &vb, &word[0], sizeof(vb), peer));
    T_CHECK(symrail_ctx_put(a, &word[1], &one, sizeof(one), peer));
    T_CHECK(symrail_ctx_get_nbi(a, &va, &word[1], sizeof(va), peer));
    T_CHECK(symrail_ctx_quiet(a));
    uint64_t ta = now_ms() - t0;
    T_ASSERT(va == 1, "context A's get returned %llu", (unsigned long long)va);
    T_ASSERT(ta < ms / 2, "quiet on context A took %llu ms: it waited for context B",
             (unsigned long long)ta);
    T_CHECK(symrail_ctx_quiet(b));
    uint64_t tb = now_ms() - t0;
    T_ASSERT(tb >= ms * 9 / 10, "context B's get completed after %llu ms, before the hook "
             "let it (%llu ms): nothing was outstanding", (unsigned long long)tb, ms);
    T_CHECK(symrail_ctx_destroy(a));
    T_CHECK(symrail_ctx_destroy(b));
    T_CHECK(symrail_barrier_all());
    symrail_free(word);
    if (me == 0)
        printf("ok: quiet on context A returned in %llu ms while context B's get was "
               "outstanding (%llu ms)\n", (unsigned long long)ta, (unsigned long long)tb);
}

int main(int argc, char **argv)
{
    int provided = -1;
    T_CHECK(symrail_init_thread(SYMRAIL_THREAD_MULTIPLE, &provided));
    T_ASSERT(provided == SYMRAIL_THREAD_MULTIPLE, "provided %d", provided);
    int q = -1;
    T_CHECK(symrail_query_thread(&q));
    T_ASSERT(q == SYMRAIL_THREAD_MULTIPLE, "query_thread gave %d", q);
    me = symrail_my_pe();
    npes = symrail_n_pes();
    const char *mode = argc > 1 ? argv[1] : "private";
    int n = argc > 2 ? atoi(argv[2]) : 4;
    if (n < 1 || n > MAXT)
        n = 4;
    if (strcmp(mode, "destroy") == 0)
        run_destroy();
    else if (strcmp(mode, "isolation") == 0)
        run_isolation();
    else if (strcmp(mode, "notify") == 0)
        run_notify(n);
    else
        run_threads(mode, n);
    symrail_finalize();
    return 0;
}
