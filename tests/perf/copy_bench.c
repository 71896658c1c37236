/*
 * copy_bench: put and get bandwidth between a private buffer from plain
 * malloc (moved to a chosen offset modulo 4096) and a page-aligned symmetric
 * block of PE 1, over shared memory, for every offset and size, cache-hot
 * (the same buffers every iteration) and cache-cold (a window larger than
 * the last-level cache walked across iterations).
 *
 * Built twice from this source: against symrail, and with -DCB_OSHMEM by
 * oshcc against OpenSHMEM (tests/perf/copy_bench.sh does both and prints
 * the comparison).  PE 0 measures; PE 1 waits in a barrier, or with
 * --target-spin polls a plain flag, which keeps the library's wake-ups of a
 * sleeping target (each put rings it) out of what is measured.  Output: one
 * line per cell, "op mode size offset GB/s".
 *
 *   copy_bench [--window MiB] [--quick] [--target-spin]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef CB_OSHMEM
#include <shmem.h>
#define CB_NAME        "oshmem"
#define cb_init()      shmem_init()
#define cb_fini()      shmem_finalize()
#define cb_me()        shmem_my_pe()
#define cb_npes()      shmem_n_pes()
#define cb_align(a, n) shmem_align(a, n)
#define cb_barrier()   shmem_barrier_all()
#define cb_put(d, s, n, pe) (shmem_putmem(d, s, n, pe), 0)
#define cb_get(d, s, n, pe) (shmem_getmem(d, s, n, pe), 0)
#define cb_quiet()     (shmem_quiet(), 0)
#else
#include <symrail.h>
#define CB_NAME        "symrail"
#define cb_init()      symrail_init()
#define cb_fini()      symrail_finalize()
#define cb_me()        symrail_my_pe()
#define cb_npes()      symrail_n_pes()
#define cb_align(a, n) symrail_align(a, n)
#define cb_barrier()   symrail_barrier_all()
#define cb_put(d, s, n, pe) symrail_put(d, s, n, pe)
#define cb_get(d, s, n, pe) symrail_get(d, s, n, pe)
#define cb_quiet()     symrail_quiet()
#endif

#define PAGE      4096
#define MIN_SIZE  ((size_t)4 << 10)
#define MAX_SIZE  ((size_t)16 << 20)
/* The remote window comes in chunks: OSHMEM's allocator refuses single
 * blocks of 256 MiB and more. */
#define CHUNK     ((size_t)128 << 20)
#define MAX_CHUNKS 64

static const size_t offsets[] = {0, 16, 64, 2048};
#define NOFF (sizeof(offsets) / sizeof(offsets[0]))

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t llc_bytes(void)
{
    long v = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return v > 0 ? (size_t)v : (size_t)32 << 20;
}

static void die(const char *what)
{
    fprintf(stderr, "copy_bench(" CB_NAME "): %s failed\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    size_t window = 0;
    int quick = 0, target_spin = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--window") == 0 && i + 1 < argc)
            window = (size_t)strtoull(argv[++i], NULL, 0) << 20;
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--target-spin") == 0)
            target_spin = 1;
        else {
            fprintf(stderr, "usage: copy_bench [--window MiB] [--quick] [--target-spin]\n");
            return 2;
        }
    }
    if (window == 0)
        window = 2 * llc_bytes();
    if (window < 4 * MAX_SIZE)
        window = 4 * MAX_SIZE;
    if (window > MAX_CHUNKS * CHUNK)
        window = MAX_CHUNKS * CHUNK;

    cb_init();
    if (cb_npes() != 2) {
        if (cb_me() == 0)
            fprintf(stderr, "copy_bench needs exactly 2 PEs\n");
        cb_fini();
        return 2;
    }
    /* The remote side walks a window as large as the private one. */
    size_t nchunks = (window + CHUNK - 1) / CHUNK;
    char *chunk[MAX_CHUNKS];
    if (nchunks > MAX_CHUNKS)
        nchunks = MAX_CHUNKS;
    for (size_t c = 0; c < nchunks; c++) {
        chunk[c] = cb_align(PAGE, CHUNK);
        if (chunk[c] == NULL)
            die("symmetric allocation (raise the heap size)");
        memset(chunk[c], 0x5a, CHUNK);
    }
    volatile long *done = cb_align(64, 64);
    if (done == NULL)
        die("symmetric allocation");
    *done = 0;
    cb_barrier();

    if (cb_me() != 0 && target_spin)
        while (*done == 0) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
    if (cb_me() == 0) {
        char *raw = malloc(window + 2 * PAGE);
        if (raw == NULL)
            die("malloc");
        memset(raw, 0x3c, window + 2 * PAGE);
        /* Every page of the peer's window is touched once through this
         * process's mapping before anything is timed: otherwise the first
         * cache-cold cell (put, 4 KiB, offset 0) pays a page fault for each
         * copy of its first passes and reads as a slow offset. */
        for (size_t c = 0; c < nchunks; c++)
            for (size_t off = 0; off < CHUNK; off += window < CHUNK ? window : CHUNK)
                if (cb_put(chunk[c] + off, raw, window < CHUNK - off ? window : CHUNK - off, 1) != 0)
                    die("put");
        if (cb_quiet() != 0)
            die("quiet");
        /* Many short rounds, the best counts: on a shared machine a round
         * that another process preempts says nothing about the copy. */
        double budget = quick ? 0.004 : 0.02; /* seconds per cell and round */
        for (int cold = 0; cold <= 1; cold++)
            for (int op = 0; op <= 1; op++)
                for (size_t size = MIN_SIZE; size <= MAX_SIZE; size *= 4)
                    for (size_t o = 0; o < NOFF; o++) {
                        /* malloc's block moved forward to the wanted offset */
                        char *priv = raw + ((offsets[o] - (uintptr_t)raw) & (PAGE - 1));
                        /* page-multiple steps keep the offset */
                        size_t stride = (size + PAGE - 1) / PAGE * PAGE;
                        double best = 0;
                        /* The walk goes on across rounds: a round that
                         * started over would find the last one's lines in
                         * the last-level cache. */
                        size_t pos = 0, c = 0, roff = 0;
                        for (int round = 0; round < 8; round++) {
                            size_t iters = 0, bytes = 0;
                            double t0 = now(), t;
                            do {
                                for (int k = 0; k < 16; k++) {
                                    char *rem = chunk[c] + roff;
                                    int st = op ? cb_get(priv + pos, rem, size, 1)
                                                : cb_put(rem, priv + pos, size, 1);
                                    if (st != 0)
                                        die(op ? "get" : "put");
                                    bytes += size;
                                    iters++;
                                    if (!cold)
                                        continue;
                                    if ((pos += stride) + size > window)
                                        pos = 0;
                                    if ((roff += stride) + size > CHUNK) {
                                        roff = 0;
                                        c = (c + 1) % nchunks;
                                    }
                                }
                                if (!op && cb_quiet() != 0)
                                    die("quiet");
                                t = now() - t0;
                            } while (t < budget);
                            double gbs = (double)bytes / t / 1e9;
                            if (gbs > best)
                                best = gbs;
                        }
                        printf("%s %s %zu %zu %.2f\n", op ? "get" : "put", cold ? "cold" : "hot",
                               size, offsets[o], best);
                        fflush(stdout);
                    }
        free(raw);
        long one = 1;
        if (cb_put((void *)done, &one, sizeof(one), 1) != 0 || cb_quiet() != 0)
            die("put of the done flag");
    }
    cb_barrier();
    cb_fini();
    return 0;
}
