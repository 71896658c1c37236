/*
 * OpenSHMEM locks: every PE increments counters on PE 0 by a plain get and
 * put (not atomic) under the lock, many rounds, also holding two locks at
 * once (their words live on different PEs); the totals must be exact.
 * test_lock: refuses while another PE holds the lock, takes a free one, and
 * a loop of test_lock by every PE ends with each having had it once.
 *
 * `t_lock ROUNDS` (default 2000); `t_lock bad CASE`: misuse ends the job.
 */
#include "../integration/tcommon.h"

#include <shmem.h>
#include <time.h>

static long seen_lo = -1, seen_hi = -1;

/* counter++ on PE 0 by a get and a put: only the lock keeps it whole. */
static long t_incr(long *counter)
{
    long v;
    T_CHECK(symrail_get(&v, counter, sizeof(v), 0));
    T_CHECK(symrail_put(counter, &(long){ v + 1 }, sizeof(v), 0));
    return v;
}

static void t_bad(const char *what, long *locks)
{
    long priv = 0;
    if (strcmp(what, "notsym") == 0)
        shmem_set_lock(&priv);
    else if (strcmp(what, "notheld") == 0)
        shmem_clear_lock(&locks[0]);
    else if (strcmp(what, "twice") == 0) {
        shmem_set_lock(&locks[0]);
        shmem_set_lock(&locks[0]);
    }
    printf("FAIL: bad input %s was accepted\n", what);
    exit(1);
}

int main(int argc, char **argv)
{
    shmem_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    long rounds = argc > 1 && strcmp(argv[1], "bad") != 0 ? atol(argv[1]) : 2000;
    /* locks[0] and locks[1]: consecutive words, so different home PEs when n > 1. */
    long *locks = symrail_calloc(2, sizeof(long));
    long *counters = symrail_calloc(3, sizeof(long));
    T_ASSERT(locks && counters, "calloc");
    T_CHECK(symrail_barrier_all());
    if (argc > 2 && strcmp(argv[1], "bad") == 0)
        t_bad(argv[2], locks);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long r = 0; r < rounds; r++) {
        shmem_set_lock(&locks[0]);
        long v = t_incr(&counters[0]);
        if (seen_lo < 0)
            seen_lo = v;
        seen_hi = v;
        if (r % 4 == 0) {  /* nested: two locks held at once */
            shmem_set_lock(&locks[1]);
            t_incr(&counters[1]);
            shmem_clear_lock(&locks[1]);
        }
        shmem_clear_lock(&locks[0]);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        long want0 = rounds * n, want1 = ((rounds + 3) / 4) * n;
        T_ASSERT(counters[0] == want0, "counter under the lock is %ld, want %ld", counters[0],
                 want0);
        T_ASSERT(counters[1] == want1, "counter under the nested lock is %ld, want %ld",
                 counters[1], want1);
        double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3;
        /* Interleaved: others held the lock between PE 0's first and last turn. */
        printf("lock: %ld rounds x %d PEs, %.2f us per round on PE 0, PE 0's turns %s\n",
               rounds, n, us / rounds,
               seen_hi - seen_lo + 1 > rounds ? "interleaved with others'" : "in one run");
    }

    /* test_lock while PE 0 holds the lock: refused. */
    if (me == 0) {
        T_ASSERT(shmem_test_lock(&locks[0]) == 0, "test_lock of a free lock failed");
        T_ASSERT(shmem_test_lock(&locks[0]) == 1, "test_lock of a lock we hold took it");
    }
    T_CHECK(symrail_barrier_all());
    if (me != 0)
        for (int i = 0; i < 10; i++)
            T_ASSERT(shmem_test_lock(&locks[0]) == 1, "test_lock took a lock PE 0 holds");
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        shmem_clear_lock(&locks[0]);
    T_CHECK(symrail_barrier_all());
    /* Everybody polls with test_lock until it has the lock once. */
    long tries = 0;
    while (shmem_test_lock(&locks[0]) != 0)
        tries++;
    t_incr(&counters[2]);
    shmem_clear_lock(&locks[0]);
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        T_ASSERT(counters[2] == n, "test_lock loop: counter %ld, want %d", counters[2], n);
    /* set_lock against test_lock pollers. */
    if (me == 0)
        shmem_set_lock(&locks[1]);
    T_CHECK(symrail_barrier_all());
    if (me != 0)
        T_ASSERT(shmem_test_lock(&locks[1]) == 1, "test_lock took a lock PE 0 holds");
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        shmem_clear_lock(&locks[1]);
    shmem_set_lock(&locks[1]);
    shmem_clear_lock(&locks[1]);
    T_CHECK(symrail_barrier_all());
    /* Fairness: for 300 ms every PE takes the lock as often as it can; the
     * queue serves them in turn, so the counts stay close. */
    long *counts = symrail_calloc((size_t)n, sizeof(long));
    T_ASSERT(counts != NULL, "calloc");
    T_CHECK(symrail_barrier_all());
    long mine = 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        shmem_set_lock(&locks[0]);
        t_incr(&counters[2]);
        shmem_clear_lock(&locks[0]);
        mine++;
        clock_gettime(CLOCK_MONOTONIC, &ts);
    } while ((ts.tv_sec - t0.tv_sec) * 1000000000L + (ts.tv_nsec - t0.tv_nsec) < 300000000L);
    T_CHECK(symrail_put(&counts[me], &mine, sizeof(mine), 0));
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        long lo = counts[0], hi = counts[0], sum = 0;
        for (int i = 0; i < n; i++) {
            lo = counts[i] < lo ? counts[i] : lo;
            hi = counts[i] > hi ? counts[i] : hi;
            sum += counts[i];
        }
        T_ASSERT(counters[2] == n + sum, "counter %ld after the timed phase, want %ld",
                 counters[2], n + sum);
        printf("lock fairness: %ld acquisitions in 300 ms by %d PEs, fewest %ld, most %ld\n",
               sum, n, lo, hi);
    }
    symrail_free(counts);
    if (me == 0)
        printf("ok: locks: mutual exclusion, nested locks, test_lock, %d PEs\n", n);
    (void)tries;
    symrail_free(counters);
    symrail_free(locks);
    shmem_finalize();
    return 0;
}
