/*
 * Completion model.  Default mode: blocking puts that complete at post
 * (inline, staged through a bounce buffer) leave their source free at once,
 * and quiet makes their data visible at the target: the source is scribbled
 * over right after each put, and PE 1 checks its own memory after a barrier,
 * and PE 0 reads it back with a get after quiet.
 *
 * "repair": run with a fault on lane 0 (SYMRAIL_IB_FAULT_QP_ERROR=0:N) and
 * one QP per rail on two rails: once the lane is repaired, its rail carries
 * data again.
 */
#include "tcommon.h"

#include <time.h>

#define T_SMALL 3
#define T_BIG   (48 * 1024)

static int local_mode(void)
{
    int me = symrail_my_pe();
    uint64_t *small = symrail_malloc(64 * sizeof(uint64_t));
    unsigned char *big = symrail_malloc(T_BIG);
    unsigned char *priv = malloc(T_BIG);
    T_ASSERT(small && big && priv, "allocation failed");
    memset(small, 0, 64 * sizeof(uint64_t));
    memset(big, 0, T_BIG);
    T_CHECK(symrail_barrier_all());
    for (unsigned round = 1; round <= 50; round++) {
        if (me == 0) {
            /* A short unsignalled tail of 8-byte puts from the stack ... */
            for (int i = 0; i < T_SMALL; i++) {
                uint64_t v = ((uint64_t)round << 32) | (uint64_t)i;
                T_CHECK(symrail_put(&small[i], &v, sizeof(v), 1));
                v = ~0ull;  /* the put completed: the source is ours again */
                __asm__ __volatile__("" ::: "memory");
            }
            /* ... and a staged put from private memory. */
            t_fill(priv, T_BIG, 0, round);
            T_CHECK(symrail_put(big, priv, T_BIG, 1));
            memset(priv, 0xee, T_BIG);
            T_CHECK(symrail_quiet());
            uint64_t got = 0;
            T_CHECK(symrail_get(&got, &small[T_SMALL - 1], sizeof(got), 1));
            T_ASSERT(got == (((uint64_t)round << 32) | (T_SMALL - 1)),
                     "round %u: get after quiet saw %#llx", round, (unsigned long long)got);
        }
        T_CHECK(symrail_barrier_all());
        if (me == 1) {
            for (int i = 0; i < T_SMALL; i++)
                T_ASSERT(small[i] == (((uint64_t)round << 32) | (uint64_t)i),
                         "round %u: word %d is %#llx", round, i, (unsigned long long)small[i]);
            size_t bad = t_verify(big, T_BIG, 0, round);
            T_ASSERT(bad == SIZE_MAX, "round %u: staged put byte %zu wrong", round, bad);
        }
        T_CHECK(symrail_barrier_all());
    }
    t_pass("puts complete at post, quiet makes them visible");
    free(priv);
    symrail_free(big);
    symrail_free(small);
    return 0;
}

static uint64_t rail0_bytes(void)
{
    symrail_stats_t st;
    T_CHECK(symrail_stats(&st));
    T_ASSERT(st.nrails >= 2, "%u rails: this mode wants two", st.nrails);
    return st.rails[0].bytes;
}

static int repair_mode(void)
{
    int me = symrail_my_pe();
    size_t block = 4096, count = 64;
    unsigned char *dst = symrail_malloc(block * count);
    unsigned char *src = symrail_malloc(block * count);
    unsigned *done = symrail_malloc(sizeof(unsigned));
    T_ASSERT(dst && src && done, "allocation failed");
    *done = 0;
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        symrail_stats_t st;
        time_t t0 = time(NULL);
        unsigned round = 0;
        /* Until the lane failed and came back. */
        do {
            t_fill(src, block * count, 0, ++round);
            for (size_t i = 0; i < count; i++)
                T_CHECK(symrail_put_nbi(dst + i * block, src + i * block, block, 1));
            T_CHECK(symrail_quiet());
            T_CHECK(symrail_stats(&st));
            T_ASSERT(time(NULL) - t0 < 120, "no lane repaired after 120 s");
        } while (st.repairs == 0);
        /* Reports of the lane coming back reach the core from progress. */
        for (int i = 0; i < 100; i++)
            T_CHECK(symrail_quiet());
        uint64_t b0 = rail0_bytes();
        for (int k = 0; k < 20; k++) {
            t_fill(src, block * count, 0, ++round);
            for (size_t i = 0; i < count; i++)
                T_CHECK(symrail_put_nbi(dst + i * block, src + i * block, block, 1));
            T_CHECK(symrail_quiet());
        }
        uint64_t b1 = rail0_bytes();
        T_ASSERT(b1 > b0, "the repaired lane's rail carried nothing after the repair");
        printf("PE 0: rail 0 carried %llu bytes after the repair\n",
               (unsigned long long)(b1 - b0));
        T_CHECK(symrail_put(done, &round, sizeof(round), 1));
        T_CHECK(symrail_quiet());
    }
    T_CHECK(symrail_barrier_all());
    if (me == 1) {
        size_t bad = t_verify(dst, block * count, 0, (unsigned)*done);
        T_ASSERT(bad == SIZE_MAX, "data of the last round wrong at byte %zu", bad);
    }
    t_check_rails();
    t_pass("a repaired lane carries data again");
    symrail_free(done);
    symrail_free(src);
    symrail_free(dst);
    return 0;
}

int main(int argc, char **argv)
{
    symrail_init();
    T_ASSERT(symrail_n_pes() == 2, "run with 2 PEs");
    int rc = argc > 1 && strcmp(argv[1], "repair") == 0 ? repair_mode() : local_mode();
    symrail_finalize();
    return rc;
}
