/*
 * thread_bench: what threads on private contexts get in aggregate.
 *
 *   symrun -n 2 ./thread_bench [--quick]      (tests/perf/thread_bench.sh: shm and TCP)
 *
 * PE 0 runs 1, 2 and 4 threads, each with a private context of its own, all
 * putting to PE 1: the 8-byte put_nbi message rate (windows of 256 ended by
 * ctx_quiet) and the 64 KiB blocking put bandwidth from a private buffer of
 * plain malloc.  The thread counts are measured in turns, round after round,
 * and each figure is the median of the rounds, so that a busy machine
 * weighs on every count alike.  PE 1 waits in symrail_barrier_all.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <symrail.h>
#include <time.h>

#define MAXT      4
#define WINDOW    256
#define BIG       ((size_t)64 << 10)

static const int counts[] = { 1, 2, 4 };
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))

static unsigned char *sym;   /* [MAXT][WINDOW * 8 + BIG] on PE 1 */
static double run_ns;
static pthread_barrier_t start;

typedef struct {
    int           t, kind;   /* kind 0: message rate, 1: bandwidth */
    uint64_t      ops;
    double        ns;
} job_t;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void check(symrail_status_t st, const char *what)
{
    if (st != SYMRAIL_OK) {
        fprintf(stderr, "thread_bench: %s: %s\n", what, symrail_strerror(st));
        symrail_abort(1, what);
    }
}

static void *worker(void *arg)
{
    job_t *j = arg;
    symrail_ctx_t ctx;
    unsigned char *mine = sym + (size_t)j->t * (WINDOW * 8 + BIG);
    unsigned char *src = malloc(BIG);
    uint64_t word = 42;
    if (src == NULL)
        return NULL;
    memset(src, j->t + 1, BIG);
    check(symrail_ctx_create(SYMRAIL_CTX_PRIVATE, &ctx), "ctx_create");
    pthread_barrier_wait(&start);
    double t0 = now_ns(), t;
    do {
        if (j->kind == 0) {
            for (int i = 0; i < WINDOW; i++)
                check(symrail_ctx_put_nbi(ctx, mine + (size_t)i * 8, &word, 8, 1), "put_nbi");
            check(symrail_ctx_quiet(ctx), "ctx_quiet");
            j->ops += WINDOW;
        } else {
            for (int i = 0; i < 16; i++)
                check(symrail_ctx_put(ctx, mine + WINDOW * 8, src, BIG, 1), "put");
            j->ops += 16;
        }
        t = now_ns();
    } while (t - t0 < run_ns);
    check(symrail_ctx_quiet(ctx), "ctx_quiet");
    j->ns = now_ns() - t0;
    check(symrail_ctx_destroy(ctx), "ctx_destroy");
    free(src);
    return NULL;
}

/* Aggregate operations per second of n threads. */
static double measure(int n, int kind)
{
    pthread_t th[MAXT];
    job_t jobs[MAXT];
    pthread_barrier_init(&start, NULL, (unsigned)n);
    for (int t = 0; t < n; t++) {
        jobs[t] = (job_t){ t, kind, 0, 0 };
        pthread_create(&th[t], NULL, worker, &jobs[t]);
    }
    uint64_t ops = 0;
    double longest = 0;
    for (int t = 0; t < n; t++) {
        pthread_join(th[t], NULL);
        ops += jobs[t].ops;
        if (jobs[t].ns > longest)
            longest = jobs[t].ns;
    }
    pthread_barrier_destroy(&start);
    return ops / (longest * 1e-9);  /* all the work, over the time the slowest took */
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int rounds = quick ? 3 : 7;
    run_ns = quick ? 1e8 : 3e8;
    check(symrail_init_thread(SYMRAIL_THREAD_MULTIPLE, NULL), "init_thread");
    if (symrail_n_pes() != 2) {
        fprintf(stderr, "thread_bench: run with 2 PEs\n");
        symrail_finalize();
        return 2;
    }
    sym = symrail_calloc(MAXT, WINDOW * 8 + BIG);
    if (sym == NULL)
        symrail_abort(1, "symrail_calloc");
    double r[2][NCOUNTS][16];
    if (symrail_my_pe() == 0)
        for (int k = 0; k < rounds; k++)
            for (int kind = 0; kind < 2; kind++)
                for (int c = 0; c < NCOUNTS; c++)
                    r[kind][c][k] = measure(counts[c], kind);
    check(symrail_barrier_all(), "barrier_all");
    if (symrail_my_pe() == 0) {
        double med[2][NCOUNTS];
        for (int kind = 0; kind < 2; kind++)
            for (int c = 0; c < NCOUNTS; c++) {
                qsort(r[kind][c], (size_t)rounds, sizeof(double), cmp_double);
                med[kind][c] = r[kind][c][rounds / 2];
            }
        printf("threads on private contexts, PE 0 -> PE 1, median of %d rounds\n", rounds);
        printf("%-8s %16s %8s %18s %8s\n", "threads", "8 B put_nbi/s", "vs 1", "64 KiB put GB/s",
               "vs 1");
        for (int c = 0; c < NCOUNTS; c++)
            printf("%-8d %16.0f %8.2f %18.2f %8.2f\n", counts[c], med[0][c],
                   med[0][c] / med[0][0], med[1][c] * BIG / 1e9, med[1][c] / med[1][0]);
    }
    symrail_free(sym);
    symrail_finalize();
    return 0;
}
