/*
 * Programs of the fault matrix (run_faults.sh kills, stops or starves them
 * from outside and checks how the job ends).
 *
 *   t_faults stream  every PE reports its pid (stdout and $T_FAULT_DIR/pid.N),
 *                    then streams verified rounds of puts to its right
 *                    neighbour until something ends it; after the first round
 *                    it creates $T_FAULT_DIR/streaming.N.  A round that fails
 *                    is reported with the status and the PE exits 3.
 *                    With T_REINIT=1 the library is finalized and initialized
 *                    again first, with T_REINIT=failed an init fails first
 *                    (a TCP interface that does not exist) and the next one
 *                    succeeds: what a PE did before must not change how a
 *                    fault ends it.
 *   t_faults heap    every PE fills a guard block through its neighbour, then
 *                    allocates until the heap is exhausted: every PE must fail
 *                    at the same allocation, the guard must be intact, and
 *                    after freeing, allocations and puts work again.
 */
#include "tcommon.h"

#include <unistd.h>

#define BLK  (256 * 1024)

static void touch(const char *dir, const char *what, int pe)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s.%d", dir, what, pe);
    FILE *f = fopen(path, "w");
    T_ASSERT(f != NULL, "cannot create %s", path);
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
}

static int stream(void)
{
    const char *dir = getenv("T_FAULT_DIR");
    int me = symrail_my_pe(), n = symrail_n_pes();
    T_ASSERT(dir != NULL, "T_FAULT_DIR is not set");
    T_ASSERT(n >= 2, "run with 2 PEs or more");
    if (t_env("T_REINIT", 0)) {
        T_CHECK(symrail_barrier_all());
        T_CHECK(symrail_finalize_status());
        T_CHECK(symrail_init_status());
    }
    unsigned char *dst = symrail_malloc(BLK), *src = malloc(BLK);
    T_ASSERT(dst && src, "allocation failed");
    printf("rank %d pid %ld\n", me, (long)getpid());
    fflush(stdout);
    touch(dir, "pid", me);
    T_CHECK(symrail_barrier_all());
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (unsigned r = 0;; r++) {
        t_fill(src, BLK, me, r);
        symrail_status_t st = symrail_put(dst, src, BLK, right);
        if (st == SYMRAIL_OK)
            st = symrail_barrier_all();
        if (st != SYMRAIL_OK) {
            fprintf(stderr, "PE %d: round %u failed: %s\n", me, r, symrail_strerror(st));
            fflush(stderr);
            _exit(3);
        }
        size_t bad = t_verify(dst, BLK, left, r);
        T_ASSERT(bad == SIZE_MAX, "round %u: byte %zu from PE %d is wrong", r, bad, left);
        if (r == 0)
            touch(dir, "streaming", me);
        /* The neighbour overwrites dst next round: not before all checked. */
        st = symrail_barrier_all();
        if (st != SYMRAIL_OK) {
            fprintf(stderr, "PE %d: round %u failed: %s\n", me, r, symrail_strerror(st));
            fflush(stderr);
            _exit(3);
        }
    }
}

static int heap(void)
{
    int me = symrail_my_pe(), n = symrail_n_pes();
    size_t chunk = t_env("T_CHUNK", 1 << 20);
    unsigned char *guard = symrail_malloc(BLK), *src = malloc(BLK);
    uint64_t *fails = symrail_calloc((size_t)n, sizeof(uint64_t));
    T_ASSERT(guard && src && fails, "allocation failed");
    t_fill(src, BLK, me, 7);
    T_CHECK(symrail_put(guard, src, BLK, (me + 1) % n));
    T_CHECK(symrail_barrier_all());

    enum { MAXB = 1 << 16 };
    static void *blocks[MAXB];
    uint64_t k = 0;
    for (; k < MAXB; k++) {
        blocks[k] = symrail_malloc(chunk);
        if (blocks[k] == NULL)
            break;
        /* Touch the block's ends: an allocation past the heap would fault. */
        ((unsigned char *)blocks[k])[0] = 1;
        ((unsigned char *)blocks[k])[chunk - 1] = 1;
    }
    T_ASSERT(k < MAXB, "the heap never ran out in %d allocations of %zu bytes", MAXB, chunk);
    T_ASSERT(k > 0, "not even one allocation of %zu bytes fit", chunk);
    T_CHECK(symrail_put(&fails[me], &k, sizeof(k), 0));
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        for (int pe = 1; pe < n; pe++)
            T_ASSERT(fails[pe] == k, "PE %d ran out after %llu allocations, PE 0 after %llu", pe,
                     (unsigned long long)fails[pe], (unsigned long long)k);
    size_t bad = t_verify(guard, BLK, (me + n - 1) % n, 7);
    T_ASSERT(bad == SIZE_MAX, "after exhaustion the guard's byte %zu is wrong", bad);

    /* Room again: the heap works as before. */
    for (uint64_t i = 0; i < k; i++)
        symrail_free(blocks[i]);
    unsigned char *again = symrail_malloc(chunk);
    T_ASSERT(again != NULL, "an allocation after freeing everything failed");
    t_fill(src, BLK < chunk ? BLK : chunk, me, 9);
    T_CHECK(symrail_put(again, src, BLK < chunk ? BLK : chunk, (me + 1) % n));
    T_CHECK(symrail_barrier_all());
    bad = t_verify(again, BLK < chunk ? BLK : chunk, (me + n - 1) % n, 9);
    T_ASSERT(bad == SIZE_MAX, "a put after exhaustion: byte %zu is wrong", bad);
    bad = t_verify(guard, BLK, (me + n - 1) % n, 7);
    T_ASSERT(bad == SIZE_MAX, "at the end the guard's byte %zu is wrong", bad);
    if (me == 0)
        printf("ok: the heap ran out after %llu allocations of %zu bytes on every PE, "
               "guard intact, usable again\n", (unsigned long long)k, chunk);
    symrail_free(again);
    symrail_free(fails);
    symrail_free(guard);
    free(src);
    symrail_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "", *re = getenv("T_REINIT");
    if (re && strcmp(re, "failed") == 0) {
        setenv("SYMRAIL_TCP_IF", "nosuchif0", 1);
        symrail_status_t st = symrail_init_status();
        T_ASSERT(st != SYMRAIL_OK, "init with SYMRAIL_TCP_IF=nosuchif0 succeeded");
        unsetenv("SYMRAIL_TCP_IF");
        unsetenv("T_REINIT");
    }
    T_CHECK(symrail_init_status());
    if (strcmp(mode, "stream") == 0)
        return stream();
    if (strcmp(mode, "heap") == 0)
        return heap();
    fprintf(stderr, "usage: t_faults stream|heap\n");
    symrail_finalize();
    return 2;
}
