/* Atomics under contention: N PEs x M fetch-adds sum exactly; a CAS lock
 * protects a plain counter; swap/set/fetch/compare-swap semantics. */
#include "tcommon.h"

#define ADDS 20000
#define LOCKED 500

int main(void)
{
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    uint64_t *ctr = symrail_calloc(4, sizeof(uint64_t));
    const int adds = (int)t_env("T_ADDS", ADDS);
    uint64_t *seen = calloc((size_t)adds, sizeof(uint64_t));
    T_ASSERT(ctr && seen, "allocation failed");
    T_CHECK(symrail_barrier_all());

    /* Every PE hammers the counter on every PE (starting at a different one). */
    for (int i = 0; i < adds; i++) {
        uint64_t old;
        T_CHECK(symrail_atomic_fetch_add(&ctr[0], 1, (me + i) % n, &old));
        if ((me + i) % n == 0)
            seen[i] = old;
        T_CHECK(symrail_atomic_add(&ctr[1], 3, i % n));
    }
    T_CHECK(symrail_barrier_all());
    uint64_t total = 0, v;
    for (int pe = 0; pe < n; pe++) {
        T_CHECK(symrail_atomic_fetch(&ctr[0], pe, &v));
        total += v;
    }
    T_ASSERT(total == (uint64_t)n * adds, "fetch_add total %llu, expected %llu",
             (unsigned long long)total, (unsigned long long)n * adds);
    T_CHECK(symrail_atomic_fetch(&ctr[1], me, &v));
    uint64_t want = 0;
    for (int i = 0; i < adds; i++)
        want += (i % n == me) ? 3u * (uint64_t)n : 0;
    T_ASSERT(v == want, "add total on PE %d: %llu, expected %llu", me, (unsigned long long)v,
             (unsigned long long)want);
    /* The old values one PE saw from PE 0's counter strictly increase. */
    uint64_t last = 0;
    int first = 1;
    for (int i = 0; i < adds; i++) {
        if ((me + i) % n != 0)
            continue;
        T_ASSERT(first || seen[i] > last, "fetch_add returned %llu after %llu",
                 (unsigned long long)seen[i], (unsigned long long)last);
        last = seen[i];
        first = 0;
    }
    t_pass("fetch_add / add under contention");

    /* A spin lock from compare-swap guarding a non-atomic read-modify-write. */
    uint64_t *lock = &ctr[2], *plain = &ctr[3];
    for (int i = 0; i < LOCKED; i++) {
        uint64_t old;
        do
            T_CHECK(symrail_atomic_compare_swap(lock, 0, (uint64_t)me + 1, 0, &old));
        while (old != 0);
        uint64_t x;
        T_CHECK(symrail_get(&x, plain, sizeof(x), 0));
        x++;
        T_CHECK(symrail_put(plain, &x, sizeof(x), 0));
        T_CHECK(symrail_atomic_swap(lock, 0, 0, &old));
        T_ASSERT(old == (uint64_t)me + 1, "lock held by %llu while I (PE %d) released it",
                 (unsigned long long)old, me);
    }
    T_CHECK(symrail_barrier_all());
    if (me == 0)
        T_ASSERT(*plain == (uint64_t)n * LOCKED, "locked counter %llu, expected %llu",
                 (unsigned long long)*plain, (unsigned long long)n * LOCKED);
    t_pass("compare_swap lock");

    /* Plain semantics on the right neighbour's word. */
    int right = (me + 1) % n;
    uint64_t old;
    T_CHECK(symrail_barrier_all());
    T_CHECK(symrail_atomic_set(&ctr[0], 10, right));
    T_CHECK(symrail_atomic_swap(&ctr[0], 20, right, &old));
    T_ASSERT(old == 10, "swap old %llu", (unsigned long long)old);
    T_CHECK(symrail_atomic_compare_swap(&ctr[0], 19, 30, right, &old));
    T_ASSERT(old == 20, "failed cswap old %llu", (unsigned long long)old);
    T_CHECK(symrail_atomic_compare_swap(&ctr[0], 20, 30, right, &old));
    T_ASSERT(old == 20, "cswap old %llu", (unsigned long long)old);
    T_CHECK(symrail_atomic_fetch(&ctr[0], right, &old));
    T_ASSERT(old == 30, "fetch %llu", (unsigned long long)old);
    t_pass("set / swap / compare_swap / fetch");

    free(seen);
    symrail_free(ctr);
    symrail_finalize();
    return 0;
}
