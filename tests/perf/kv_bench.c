/*
 * Paged KV-block transfers against the same bytes sent contiguously, in the
 * same run (tests/perf/kv_bench.sh runs it per transport: make bench-kv).
 *
 *   symrun -n 2 kv_bench [--block-bytes 4K,16K,64K] [--bytes 64M] [--runs 7]
 *                        [--big 32000] [--big-runs 3]
 *
 * PE 0 writes into a segment of PE 1 (with one PE, into its own), alternating
 * in every run and at every block size:
 *   paged   one batch of bytes/block blocks, the blocks of a local pool in
 *           a random order to those of the remote one in another, no block
 *           followed by its neighbour on either side, so that nothing
 *           coalesces: one task per block (both pools hold exactly the
 *           bytes: the same memory as the contiguous transfer);
 *   contig  one batch with one task of all the bytes (the ceiling);
 *   put     symrail_put of all the bytes into the symmetric heap + quiet.
 * Each is timed from the first add to batch_wait (quiet for put) returning,
 * which is when every byte is at the target.  Medians of the runs.
 *
 * Then a batch of --big blocks of 16 KiB (not adjacent locally): the cost of
 * create, add_blocks, submit and status per task, the time to completion
 * (tasks/s, GB/s), and the memory a task takes (malloc's counters around
 * create + add, and the resident size).  submit posts tasks up to
 * SYMRAIL_BATCH_WINDOW bytes before it returns, so over shared memory its
 * time holds those copies; a first run, not counted, maps the pages.
 *
 * KV_BENCH_ONLY=paged, contig or put times that one alone (for profiling).
 * Lines starting "ROW" and "BIG" are for kv_bench.sh.
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <symrail.h>

#define MAX_SIZES 8

static void die(const char *what, symrail_status_t st)
{
    char msg[300];
    snprintf(msg, sizeof(msg), "kv_bench: %s: %s", what, symrail_strerror(st));
    symrail_abort(1, msg);
}
#define CHECK(call)                                                                     \
    do {                                                                                \
        symrail_status_t st_ = (call);                                                  \
        if (st_ != SYMRAIL_OK)                                                          \
            die(#call, st_);                                                            \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end == 'K' || *end == 'k')
        v <<= 10, end++;
    else if (*end == 'M' || *end == 'm')
        v <<= 20, end++;
    return *end ? 0 : (size_t)v;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Bytes malloc has handed out (the heap's and the mmap'd chunks). */
static size_t malloc_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

static size_t rss_bytes(void)
{
    unsigned long size = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%lu %lu", &size, &res) != 2)
            res = 0;
        fclose(f);
    }
    return res * (size_t)sysconf(_SC_PAGESIZE);
}

/* A random order of 0..n-1 in which no i is followed by i + 1 (n >= 4). */
static void scatter(uint32_t *v, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) {
        seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
        size_t j = seed % (i + 1);
        uint32_t t = v[i];
        v[i] = v[j], v[j] = t;
    }
    /* Break the runs left: swap the second of a pair with one two places on. */
    for (int pass = 0; pass < 8; pass++) {
        int again = 0;
        for (size_t i = 0; i + 1 < n; i++)
            if (v[i + 1] == v[i] + 1) {
                size_t j = (i + 3) % n;
                uint32_t t = v[i + 1];
                v[i + 1] = v[j], v[j] = t;
                again = 1;
            }
        if (!again)
            break;
    }
}

typedef struct {
    int me, npes, target;
    size_t bytes;                /* per transfer */
    unsigned char *src;          /* bytes */
    symrail_rseg_t rseg;         /* the target's pool: bytes */
    unsigned char *heap;         /* bytes of symmetric heap, for put */
    uint32_t *lidx, *ridx;
} bench_t;

__attribute__((noinline)) static double t_paged(bench_t *b, size_t bb)
{
    size_t n = b->bytes / bb, ntasks;
    symrail_batch_t batch;
    CHECK(symrail_batch_create(n, &batch));
    double t0 = now_s();
    CHECK(symrail_batch_add_blocks(batch, SYMRAIL_WRITE, b->src, b->lidx, b->rseg, 0, b->ridx, n,
                                   bb, NULL, &ntasks));
    CHECK(symrail_batch_submit(batch));
    CHECK(symrail_batch_wait(batch, -1));
    double t = now_s() - t0;
    if (ntasks != n)
        die("the paged batch coalesced blocks (the measurement wants one task a block)",
            SYMRAIL_ERR_INVALID);
    CHECK(symrail_batch_free(batch));
    return t;
}

__attribute__((noinline)) static double t_contig(bench_t *b)
{
    symrail_batch_t batch;
    CHECK(symrail_batch_create(1, &batch));
    double t0 = now_s();
    CHECK(symrail_batch_add(batch, SYMRAIL_WRITE, b->src, b->rseg, 0, b->bytes, NULL));
    CHECK(symrail_batch_submit(batch));
    CHECK(symrail_batch_wait(batch, -1));
    double t = now_s() - t0;
    CHECK(symrail_batch_free(batch));
    return t;
}

static double t_put(bench_t *b)
{
    double t0 = now_s();
    CHECK(symrail_put(b->heap, b->src, b->bytes, b->target));
    CHECK(symrail_quiet());
    return now_s() - t0;
}

/* The paged batch at every block size against contig and put; PE 0's job. */
/* Which of the three compare() times (KV_BENCH_ONLY=paged, contig or put:
 * the others are skipped, for profiling one path). */
static int only(const char *what)
{
    const char *o = getenv("KV_BENCH_ONLY");
    return o == NULL || strcmp(o, what) == 0;
}

static void compare(bench_t *b, const size_t *bbs, unsigned nbb, int runs, const char *tl)
{
    printf("# kv_bench: transport %s, %d PEs, %zu MiB a transfer, median of %d runs\n", tl,
           b->npes, b->bytes >> 20, runs);
    printf("# %6s %7s %11s %12s %9s %13s %10s\n", "block", "tasks", "paged GB/s", "contig GB/s",
           "put GB/s", "paged/contig", "us/task");
    for (unsigned k = 0; k < nbb; k++) {
        size_t bb = bbs[k], n = b->bytes / bb;
        scatter(b->lidx, n, 0x9e3779b97f4a7c15u);
        scatter(b->ridx, n, 0xd1b54a32d192ed03u);
        double tp[64], tc[64], tq[64];
        const int p_on = only("paged"), c_on = only("contig"), q_on = only("put");
        /* Warm: first touches, connections. */
        if (p_on)
            t_paged(b, bb);
        if (c_on)
            t_contig(b);
        for (int r = 0; r < runs; r++) {
            tp[r] = tc[r] = tq[r] = 1e-9;
            /* Alternate which goes first, so that drift hits both alike. */
            if (r % 2 && c_on)
                tc[r] = t_contig(b);
            if (p_on)
                tp[r] = t_paged(b, bb);
            if (r % 2 == 0 && c_on)
                tc[r] = t_contig(b);
            if (q_on)
                tq[r] = t_put(b);
        }
        double p = (double)b->bytes / median(tp, runs) / 1e9;
        double c = (double)b->bytes / median(tc, runs) / 1e9;
        double q = (double)b->bytes / median(tq, runs) / 1e9;
        double us = (double)b->bytes / p / 1e3 / (double)n;
        printf("  %5zuK %7zu %11.2f %12.2f %9.2f %13.2f %10.3f\n", bb >> 10, n, p, c, q, p / c, us);
        printf("ROW %s %zu %zu %.4f %.4f %.4f %.4f\n", tl, bb >> 10, n, p, c, q, p / c);
        fflush(stdout);
    }
}

/* A batch of `n` 16 KiB blocks: submission cost, completion, memory. */
static void big(bench_t *b, size_t n, int runs, const char *tl, unsigned char *src, size_t src_blocks,
                symrail_rseg_t rseg)
{
    const size_t bb = 16384;
    uint32_t *li = malloc(n * sizeof(uint32_t)), *ri = malloc(n * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        li[i] = (uint32_t)(2 * (i % (src_blocks / 2)));  /* never adjacent: no coalescing */
        ri[i] = (uint32_t)i;
    }
    double tcreate[17], tadd[17], tsub[17], tdone[17], tstat[17], mem[17], rss[17];
    /* Run 0 maps the target's pages here (first touches), and is not counted. */
    for (int r = 0; r <= runs; r++) {
        symrail_batch_t batch;
        size_t ntasks, m0 = malloc_bytes(), r0 = rss_bytes();
        double t0 = now_s();
        CHECK(symrail_batch_create(n, &batch));
        double t1 = now_s();
        CHECK(symrail_batch_add_blocks(batch, SYMRAIL_WRITE, src, li, rseg, 0, ri, n, bb, NULL,
                                       &ntasks));
        double t2 = now_s();
        mem[r] = (double)(malloc_bytes() - m0) / (double)n;
        rss[r] = (double)(rss_bytes() - r0) / (double)n;  /* run 0's: later runs reuse pages */
        CHECK(symrail_batch_submit(batch));
        double t3 = now_s();
        CHECK(symrail_batch_wait(batch, -1));
        double t4 = now_s();
        for (size_t t = 0; t < ntasks; t++) {
            symrail_task_state_t state;
            CHECK(symrail_batch_status(batch, t, &state, NULL));
            if (state != SYMRAIL_TASK_DONE)
                die("a task of the big batch is not done after batch_wait", SYMRAIL_ERR_STATE);
        }
        double t5 = now_s();
        if (ntasks != n)
            die("the big batch coalesced blocks", SYMRAIL_ERR_INVALID);
        CHECK(symrail_batch_free(batch));
        tcreate[r] = (t1 - t0) * 1e6 / (double)n, tadd[r] = (t2 - t1) * 1e6 / (double)n;
        tsub[r] = (t3 - t2) * 1e6 / (double)n, tdone[r] = t4 - t0;
        tstat[r] = (t5 - t4) * 1e6 / (double)n;
    }
    double done = median(tdone + 1, runs);
    printf("# kv_bench: one batch of %zu x 16 KiB blocks (%zu MiB), transport %s, median of %d\n",
           n, (n * bb) >> 20, tl, runs);
    printf("#   create %.3f us/task, add_blocks %.3f us/task, submit %.3f us/task, "
           "status %.3f us/task\n", median(tcreate + 1, runs), median(tadd + 1, runs),
           median(tsub + 1, runs), median(tstat + 1, runs));
    printf("#   complete in %.1f ms: %.0f tasks/s, %.2f GB/s; memory %.0f bytes/task "
           "(malloc), %.0f bytes/task (resident, first run)\n", done * 1e3, (double)n / done,
           (double)(n * bb) / done / 1e9, median(mem + 1, runs), rss[0]);
    printf("BIG %s %zu %.4f %.4f %.4f %.4f %.1f %.0f %.0f\n", tl, n, median(tcreate + 1, runs),
           median(tadd + 1, runs), median(tsub + 1, runs), median(tstat + 1, runs), done * 1e3,
           (double)n / done, median(mem + 1, runs));
    fflush(stdout);
    free(li);
    free(ri);
}

/* The target's pool of `len` bytes, its descriptor put to PE 0's board. */
static symrail_seg_t share_pool(bench_t *b, size_t len, void **pool_p, unsigned char *board)
{
    symrail_seg_t seg = NULL;
    if (b->me == b->target) {
        CHECK(symrail_seg_alloc(len, 0, pool_p, &seg));
        memset(*pool_p, 0, len);  /* resident, as an engine's KV pool is */
        size_t dlen = SYMRAIL_SEG_DESC_MAX;
        unsigned char desc[SYMRAIL_SEG_DESC_MAX + sizeof(size_t)];
        CHECK(symrail_seg_export(seg, desc + sizeof(size_t), &dlen));
        memcpy(desc, &dlen, sizeof(dlen));
        CHECK(symrail_put(board, desc, sizeof(desc), 0));
        CHECK(symrail_quiet());
    }
    CHECK(symrail_barrier_all());
    if (b->me == 0) {
        size_t dlen;
        memcpy(&dlen, board, sizeof(dlen));
        CHECK(symrail_seg_import(board + sizeof(size_t), dlen, &b->rseg));
    }
    return seg;
}

int main(int argc, char **argv)
{
    size_t bbs[MAX_SIZES] = { 4096, 16384, 65536 }, bytes = 64u << 20;
    unsigned nbb = 3;
    int runs = 7, big_runs = 3;
    size_t nbig = 32000;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--bytes"))
            bytes = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--big"))
            nbig = parse_size(argv[i + 1]);
        else if (!strcmp(argv[i], "--big-runs"))
            big_runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--block-bytes")) {
            nbb = 0;
            for (char *save, *t = strtok_r(argv[i + 1], ",", &save); t && nbb < MAX_SIZES;
                 t = strtok_r(NULL, ",", &save))
                bbs[nbb++] = parse_size(t);
        } else {
            fprintf(stderr, "kv_bench: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (runs < 1 || runs > 64 || big_runs < 1 || big_runs > 16 || bytes == 0) {
        fprintf(stderr, "kv_bench: bad --runs, --big-runs or --bytes\n");
        return 2;
    }
    symrail_init();
    bench_t b = { .me = symrail_my_pe(), .npes = symrail_n_pes(), .bytes = bytes };
    b.target = b.npes > 1 ? 1 : 0;
    const char *tl = getenv("KV_BENCH_NAME") ? getenv("KV_BENCH_NAME")
                   : getenv("SYMRAIL_TRANSPORTS") ? getenv("SYMRAIL_TRANSPORTS") : "default";
    unsigned char *board = symrail_malloc(SYMRAIL_SEG_DESC_MAX + sizeof(size_t));
    b.heap = symrail_malloc(bytes);
    if (board == NULL || b.heap == NULL)
        die("symrail_malloc (set SYMRAIL_HEAP_SIZE above --bytes)", SYMRAIL_ERR_NOMEM);

    void *pool = NULL;
    symrail_seg_t seg = share_pool(&b, bytes, &pool, board);
    if (b.me == 0) {
        size_t nmax = bytes / 4096 + 1;
        b.src = aligned_alloc(4096, bytes);
        b.lidx = malloc(nmax * sizeof(uint32_t));
        b.ridx = malloc(nmax * sizeof(uint32_t));
        if (b.src == NULL || b.lidx == NULL || b.ridx == NULL)
            die("malloc of the source", SYMRAIL_ERR_NOMEM);
        memset(b.src, 0x5a, bytes);
        compare(&b, bbs, nbb, runs, tl);
        CHECK(symrail_rseg_release(b.rseg));
    }
    CHECK(symrail_barrier_all());
    if (seg)
        CHECK(symrail_seg_deregister(seg));

    if (nbig) {
        /* A pool of nbig blocks at the target; the source's blocks repeat. */
        seg = share_pool(&b, nbig * 16384, &pool, board);
        if (b.me == 0) {
            big(&b, nbig, big_runs, tl, b.src, bytes / 16384, b.rseg);
            CHECK(symrail_rseg_release(b.rseg));
        }
        CHECK(symrail_barrier_all());
        if (seg)
            CHECK(symrail_seg_deregister(seg));
    }
    free(b.src);
    free(b.lidx);
    free(b.ridx);
    symrail_free(b.heap);
    symrail_free(board);
    symrail_finalize();
    return 0;
}
