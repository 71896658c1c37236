/*
 * shmem_bench: OpenSHMEM point-to-point and collective costs, written
 * against shmem.h alone and with the OpenSHMEM 1.4 names (active-set
 * collectives with pSync/pWrk), so that the one source builds with symrail's
 * symcc and with Open MPI's oshcc; tests/perf/shmem_bench.sh runs both
 * alternately and prints the comparison.
 *
 * RMA (PE 0 against the last PE, the others wait in a barrier): put and get
 * bandwidth, 8 B to 16 MiB, between a private buffer from plain malloc (the
 * put source, the get destination) and a symmetric one; put (+quiet) and get
 * latency of 8 B; 64-bit fetch_add latency.  Each both cache-hot (the same
 * buffers every time) and cache-cold (both sides walk a window of tens of
 * MiB, so that every transfer starts from memory that is not in the caches
 * near the core).
 * Collectives over all PEs, cache-hot: barrier_all, broadcast64, sum_to_all
 * of longs, fcollect64 and alltoall64, of 1 and of 1024 longs (per PE for
 * fcollect and alltoall); each checked once for the right result before it is
 * timed; the time is the mean over the PEs of the time inside the call (a
 * barrier, not timed, separates the calls, so that one pSync suffices).
 *
 * Output from PE 0, one line per point: "metric mode npes size value unit",
 * unit GB/s or us.
 *
 *   shmem_bench [--quick] [--window MiB] [--rma|--no-rma] [--coll LIST]
 * RMA runs by default only with 2 PEs; LIST names the collectives to time,
 * comma-separated (default all: barrier,bcast,reduce,fcollect,alltoall), or
 * "none".
 */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PAGE     4096
#define MIN_SIZE ((size_t)8)
#define MAX_SIZE ((size_t)16 << 20)
#define MAX_LONGS 1024

static int me, npes;
static double budget; /* seconds per point */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail(const char *what, size_t size)
{
    fprintf(stderr, "shmem_bench: PE %d: CHECK FAILED: %s, %zu bytes\n", me, what, size);
    shmem_global_exit(1);
}

static void *sym_alloc(size_t n)
{
    void *p = shmem_align(PAGE, n);
    if (p == NULL) {
        fprintf(stderr, "shmem_bench: PE %d: shmem_align of %zu bytes failed "
                        "(raise the symmetric heap size)\n", me, n);
        shmem_global_exit(1);
    }
    return p;
}

/* What the owner writes into its symmetric buffers, by offset. */
static unsigned char pat(size_t i)
{
    return (unsigned char)(i * 131 + 17 + (i >> 12));
}

static void emit(const char *metric, const char *mode, size_t size, double v, const char *unit)
{
    printf("%s %s %d %zu %.4g %s\n", metric, mode, npes, size, v, unit);
    fflush(stdout);
}

/* ---- RMA ------------------------------------------------------------------ */

struct rma {
    int peer;
    size_t window;
    unsigned char *sym_hot, *sym_win; /* symmetric: MAX_SIZE, window */
    unsigned char *priv_hot, *priv_win, *scratch; /* malloc */
    long *amo;                        /* symmetric, one cache line */
};

/* Steps that keep the walk over fresh lines (and pages for page-sized
 * transfers and up). */
static size_t walk_stride(size_t size)
{
    size_t a = size >= PAGE ? PAGE : 64;
    return (size + a - 1) / a * a;
}

/* One bandwidth point: puts (op 0) or gets (op 1) of size bytes, GB/s. */
static double bw_point(struct rma *r, int op, int cold, size_t size)
{
    unsigned char *priv = cold ? r->priv_win : r->priv_hot;
    unsigned char *rem = cold ? r->sym_win : r->sym_hot;
    size_t span = cold ? r->window : MAX_SIZE, stride = walk_stride(size);
    size_t batch = (size_t)4 << 20 >= 64 * size ? 64 : ((size_t)4 << 20) / size;
    size_t pos = 0, last = 0, bytes = 0;
    double t0 = 0, t = 0;
    if (batch == 0)
        batch = 1;
    for (int warm = 1; warm >= 0; warm--) {
        bytes = 0;
        t0 = now();
        do {
            for (size_t k = 0; k < batch; k++) {
                if (op)
                    shmem_getmem(priv + pos, rem + pos, size, r->peer);
                else
                    shmem_putmem(rem + pos, priv + pos, size, r->peer);
                last = pos;
                bytes += size;
                if (cold && (pos += stride) + size > span)
                    pos = 0;
            }
            if (!op)
                shmem_quiet();
            t = now() - t0;
        } while (!warm && t < budget);
    }
    /* The last transfer must have moved the right bytes. */
    if (op) {
        for (size_t j = 0; j < size; j++)
            if (priv[last + j] != pat(last + j))
                fail(cold ? "get (cold)" : "get (hot)", size);
    } else {
        shmem_getmem(r->scratch, rem + last, size, r->peer);
        if (memcmp(r->scratch, priv + last, size) != 0)
            fail(cold ? "put (cold)" : "put (hot)", size);
    }
    return (double)bytes / t / 1e9;
}

/* Latency of one blocking operation (us): 0 put+quiet, 1 get, 2 fetch_add. */
static double lat_point(struct rma *r, int op, int cold)
{
    unsigned char *priv = cold ? r->priv_win : r->priv_hot;
    unsigned char *rem = cold ? r->sym_win : r->sym_hot;
    size_t pos = 0, n = 0, stride = walk_stride(64);
    long *amo = r->amo, sum = 0, expect = 0;
    double t0 = 0, t = 0;
    for (int warm = 1; warm >= 0; warm--) {
        n = 0;
        t0 = now();
        do {
            for (int k = 0; k < 32; k++) {
                if (op == 0) {
                    shmem_putmem(rem + pos, priv + pos, 8, r->peer);
                    shmem_quiet();
                } else if (op == 1) {
                    shmem_getmem(priv + pos, rem + pos, 8, r->peer);
                } else {
                    long *tgt = cold ? (long *)(void *)(rem + pos) : amo;
                    long old = shmem_long_atomic_fetch_add(tgt, 1, r->peer);
                    if (!cold) {
                        sum += old == expect;
                        expect++;
                    }
                }
                n++;
                if (cold && (pos += stride) + 64 > r->window)
                    pos = 0;
            }
            t = now() - t0;
        } while (!warm && t < budget);
    }
    if (op == 2 && !cold && sum != expect)
        fail("fetch_add returned a wrong old value", 8);
    return t / (double)n * 1e6;
}

static void run_rma(size_t window)
{
    struct rma r = {.peer = npes - 1, .window = window};
    r.sym_hot = sym_alloc(MAX_SIZE);
    r.sym_win = sym_alloc(window);
    r.amo = sym_alloc(64);
    for (size_t i = 0; i < MAX_SIZE; i++)
        r.sym_hot[i] = pat(i);
    for (size_t i = 0; i < window; i++)
        r.sym_win[i] = pat(i);
    *r.amo = 0;
    shmem_barrier_all();
    if (me == 0) {
        r.priv_hot = malloc(MAX_SIZE);
        r.priv_win = malloc(window);
        r.scratch = malloc(MAX_SIZE);
        if (r.priv_hot == NULL || r.priv_win == NULL || r.scratch == NULL)
            fail("malloc", window);
        memset(r.priv_hot, 0x3c, MAX_SIZE);
        for (size_t i = 0; i < window; i++)
            r.priv_win[i] = (unsigned char)(i * 7 + 3);
        static const char *const mode[2] = {"hot", "cold"};
        /* Gets first: they check against the owner's pattern, which the
         * puts then overwrite. */
        for (int op = 1; op >= 0; op--)
            for (int cold = 0; cold <= 1; cold++) {
                for (size_t s = MIN_SIZE; s <= MAX_SIZE; s *= 4) {
                    emit(op ? "get_bw" : "put_bw", mode[cold], s, bw_point(&r, op, cold, s), "GB/s");
                    if (s * 4 > MAX_SIZE && s != MAX_SIZE)
                        s = MAX_SIZE / 4; /* end on MAX_SIZE itself */
                }
            }
        for (int cold = 0; cold <= 1; cold++) {
            emit("put_lat", mode[cold], 8, lat_point(&r, 0, cold), "us");
            emit("get_lat", mode[cold], 8, lat_point(&r, 1, cold), "us");
            emit("amo_lat", mode[cold], 8, lat_point(&r, 2, cold), "us");
        }
        free(r.priv_hot);
        free(r.priv_win);
        free(r.scratch);
    }
    shmem_barrier_all();
    shmem_free(r.amo);
    shmem_free(r.sym_win);
    shmem_free(r.sym_hot);
}

/* ---- collectives ---------------------------------------------------------- */

/* Whether the comma-separated list holds name (NULL: every name). */
static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    if (list == NULL)
        return 1;
    for (const char *p = list; *p != '\0'; p++)
        if ((p == list || p[-1] == ',') && strncmp(p, name, n) == 0 &&
            (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

enum { C_BARRIER, C_BCAST, C_REDUCE, C_FCOLLECT, C_ALLTOALL, C_N };
static const char *const cname[C_N] = {"barrier", "bcast", "reduce", "fcollect", "alltoall"};

struct coll {
    long *src, *dst, *pwrk, *psync; /* symmetric */
    double *res;                    /* symmetric, one slot per PE */
    long *ctl;                      /* symmetric: the agreed iteration count */
};

/* OpenSHMEM 1.5 deprecated the active-set collectives, but they are what
 * OSHMEM (1.4, no teams) has: the one source uses them on both sides. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void coll_call(struct coll *c, int op, size_t n)
{
    switch (op) {
    case C_BARRIER:
        shmem_barrier_all();
        break;
    case C_BCAST:
        shmem_broadcast64(c->dst, c->src, n, 0, 0, 0, npes, c->psync);
        break;
    case C_REDUCE:
        shmem_long_sum_to_all(c->dst, c->src, (int)n, 0, 0, npes, c->pwrk, c->psync);
        break;
    case C_FCOLLECT:
        shmem_fcollect64(c->dst, c->src, n, 0, 0, npes, c->psync);
        break;
    case C_ALLTOALL:
        shmem_alltoall64(c->dst, c->src, n, 0, 0, npes, c->psync);
        break;
    }
}
#pragma GCC diagnostic pop

/* One call on known data; every PE checks what it got. */
static void coll_check(struct coll *c, int op, size_t n)
{
    size_t total = op == C_FCOLLECT || op == C_ALLTOALL ? n * (size_t)npes : n;
    for (size_t i = 0; i < total; i++) {
        c->dst[i] = -7;
        switch (op) {
        case C_BCAST:    c->src[i] = me == 0 ? (long)i + 11 : -1; break;
        case C_REDUCE:   c->src[i] = me + (long)i; break;
        case C_FCOLLECT: c->src[i] = me * (long)n + (long)i; break;
        case C_ALLTOALL: c->src[i] = me * 1000000L + (long)i; break;
        }
    }
    shmem_barrier_all();
    coll_call(c, op, n);
    shmem_barrier_all();
    for (size_t i = 0; i < total; i++) {
        long want = 0;
        switch (op) {
        case C_BARRIER:  return;
        case C_BCAST:    want = me == 0 ? -7 : (long)i + 11; break;
        case C_REDUCE:   want = (long)npes * (npes - 1) / 2 + (long)npes * (long)i; break;
        case C_FCOLLECT: want = (long)i; break;
        case C_ALLTOALL:
            want = (long)(i / n) * 1000000L + me * (long)n + (long)(i % n);
            break;
        }
        /* OpenSHMEM 1.4 leaves the root's broadcast target alone. */
        if (op == C_BCAST && me == 0)
            continue;
        if (c->dst[i] != want) {
            char what[96];
            snprintf(what, sizeof(what), "%s: element %zu is %ld, not %ld", cname[op], i,
                     c->dst[i], want);
            fail(what, n * sizeof(long));
        }
    }
}

/* Mean time inside one call (us), averaged over the PEs. */
static double coll_point(struct coll *c, int op, size_t n)
{
    double t0, t = 0;
    coll_check(c, op, n);
    /* PE 0 sizes the loop from a few calls and tells the others. */
    shmem_barrier_all();
    t0 = now();
    for (int i = 0; i < 8; i++) {
        coll_call(c, op, n);
        if (op != C_BARRIER)
            shmem_barrier_all();
    }
    if (me == 0) {
        double per = (now() - t0) / 8;
        long iters = per > 0 ? (long)(budget / per) : 1000;
        iters = iters < 10 ? 10 : iters > 200000 ? 200000 : iters;
        for (int pe = 0; pe < npes; pe++)
            shmem_long_p(c->ctl, iters, pe);
        shmem_quiet();
    }
    shmem_barrier_all();
    long iters = *c->ctl;
    if (op == C_BARRIER) {
        t0 = now();
        for (long i = 0; i < iters; i++)
            shmem_barrier_all();
        t = now() - t0;
    } else {
        for (long i = 0; i < iters; i++) {
            t0 = now();
            coll_call(c, op, n);
            t += now() - t0;
            shmem_barrier_all();
        }
    }
    shmem_double_p(&c->res[me], t / (double)iters * 1e6, 0);
    shmem_quiet();
    shmem_barrier_all();
    double sum = 0;
    if (me == 0)
        for (int pe = 0; pe < npes; pe++)
            sum += c->res[pe];
    return sum / npes;
}

static void run_coll(const char *list)
{
    struct coll c;
    size_t most = (size_t)MAX_LONGS * (size_t)npes;
    size_t wrk = MAX_LONGS / 2 + 1;
    if (wrk < SHMEM_REDUCE_MIN_WRKDATA_SIZE)
        wrk = SHMEM_REDUCE_MIN_WRKDATA_SIZE;
    size_t nsync = SHMEM_BCAST_SYNC_SIZE;
    if (nsync < SHMEM_REDUCE_SYNC_SIZE) nsync = SHMEM_REDUCE_SYNC_SIZE;
    if (nsync < SHMEM_COLLECT_SYNC_SIZE) nsync = SHMEM_COLLECT_SYNC_SIZE;
    if (nsync < SHMEM_ALLTOALL_SYNC_SIZE) nsync = SHMEM_ALLTOALL_SYNC_SIZE;
    c.src = sym_alloc(most * sizeof(long));
    c.dst = sym_alloc(most * sizeof(long));
    c.pwrk = sym_alloc(wrk * sizeof(long));
    c.psync = sym_alloc(nsync * sizeof(long));
    c.res = sym_alloc((size_t)npes * sizeof(double));
    c.ctl = sym_alloc(sizeof(long));
    for (size_t i = 0; i < nsync; i++)
        c.psync[i] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    for (int op = 0; op < C_N; op++) {
        if (!in_list(list, cname[op]))
            continue;
        for (size_t n = 1; n <= MAX_LONGS; n *= MAX_LONGS) {
            double us = coll_point(&c, op, n);
            if (me == 0)
                emit(cname[op], "hot", op == C_BARRIER ? 0 : n * sizeof(long), us, "us");
            if (op == C_BARRIER)
                break;
        }
    }
    shmem_barrier_all();
    shmem_free(c.ctl);
    shmem_free(c.res);
    shmem_free(c.psync);
    shmem_free(c.pwrk);
    shmem_free(c.dst);
    shmem_free(c.src);
}

int main(int argc, char **argv)
{
    size_t window = (size_t)64 << 20;
    int quick = 0, rma = -1;
    const char *coll = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc)
            window = (size_t)strtoull(argv[++i], NULL, 0) << 20;
        else if (strcmp(argv[i], "--rma") == 0)
            rma = 1;
        else if (strcmp(argv[i], "--no-rma") == 0)
            rma = 0;
        else if (strcmp(argv[i], "--coll") == 0 && i + 1 < argc)
            coll = argv[++i];
        else {
            fprintf(stderr, "usage: shmem_bench [--quick] [--window MiB] [--rma|--no-rma] "
                            "[--coll LIST]\n");
            return 2;
        }
    }
    if (window < 4 * MAX_SIZE)
        window = 4 * MAX_SIZE;
    budget = quick ? 0.01 : 0.1;
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    if (rma < 0)
        rma = npes == 2;
    if (rma && npes < 2) {
        if (me == 0)
            fprintf(stderr, "shmem_bench: RMA needs 2 PEs or more\n");
        rma = 0;
    }
    if (rma)
        run_rma(window);
    if (coll == NULL || strcmp(coll, "none") != 0)
        run_coll(coll);
    shmem_finalize();
    return 0;
}
