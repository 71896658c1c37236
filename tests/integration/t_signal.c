/* put_signal: a PE that sees the signal sees the whole payload, under stress. */
#include "tcommon.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

#define ROUNDS 2000
#define SLOTS  4

int main(void)
{
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    size_t maxsz = 65536 + 17;
    unsigned char *slots = symrail_malloc(SLOTS * maxsz);
    uint64_t *sig = symrail_calloc(SLOTS, sizeof(uint64_t));
    uint64_t *ack = symrail_calloc(1, sizeof(uint64_t));
    uint64_t *sum = symrail_calloc(1, sizeof(uint64_t));
    unsigned char *gather = symrail_calloc((size_t)n, 64);
    unsigned char *priv = malloc(maxsz);
    T_ASSERT(slots && sig && ack && sum && gather && priv, "allocation failed");

    /* Ring: PE writes round r into slot r%SLOTS of its right neighbour and
     * sets that slot's signal to r+1; the reader checks every byte as soon
     * as it sees the signal, then acks so the slot may be reused. */
    unsigned rounds = (unsigned)t_env("T_ROUNDS", ROUNDS);
    for (unsigned r = 0; r < rounds; r++) {
        size_t sz = 1 + (r * 7919u) % maxsz;
        unsigned s = r % SLOTS;
        if (r >= SLOTS)  /* the reader is done with this slot's last use */
            T_CHECK(symrail_signal_wait_until(ack, SYMRAIL_CMP_GE, r - SLOTS + 1, NULL));
        t_fill(priv, sz, me, r);
        T_CHECK(symrail_put_signal(slots + s * maxsz, priv, sz, &sig[s], r + 1,
                                   SYMRAIL_SIGNAL_SET, right));
        uint64_t seen = 0;
        T_CHECK(symrail_signal_wait_until(&sig[s], SYMRAIL_CMP_EQ, r + 1, &seen));
        T_ASSERT(seen == r + 1, "signal_wait_until returned %llu, expected %u",
                 (unsigned long long)seen, r + 1);
        size_t bad = t_verify(slots + s * maxsz, sz, left, r);
        T_ASSERT(bad == SIZE_MAX, "round %u: signal seen but byte %zu of %zu not there", r, bad,
                 sz);
        T_CHECK(symrail_atomic_add(ack, 1, left));
    }
    T_CHECK(symrail_barrier_all());
    t_pass("put_signal SET ordering stress (ring, 1 B .. 64 KiB)");

    /* ADD: every PE adds its contribution to PE 0's counter after its data. */
    for (unsigned r = 0; r < 50; r++) {
        t_fill(priv, 64, me, r + 10000);
        T_CHECK(symrail_put_signal(gather + (size_t)me * 64, priv, 64, sum, 1,
                                   SYMRAIL_SIGNAL_ADD, 0));
        if (me == 0) {
            T_CHECK(symrail_signal_wait_until(sum, SYMRAIL_CMP_GE, (uint64_t)n * (r + 1), NULL));
            for (int w = 0; w < n; w++) {
                size_t bad = t_verify(gather + (size_t)w * 64, 64, w, r + 10000);
                T_ASSERT(bad == SIZE_MAX, "ADD round %u: PE %d's data not complete", r, w);
            }
            T_ASSERT(symrail_signal_fetch(sum) == (uint64_t)n * (r + 1), "signal_fetch: %llu",
                     (unsigned long long)symrail_signal_fetch(sum));
        }
        T_CHECK(symrail_barrier_all());
    }
    t_pass("put_signal ADD from every PE");

    /* Comparison operators. */
    if (me == 0)
        *sum = 100;
    T_CHECK(symrail_barrier_all());
    if (me == 0) {
        uint64_t v;
        T_CHECK(symrail_signal_wait_until(sum, SYMRAIL_CMP_NE, 5, &v));
        T_CHECK(symrail_signal_wait_until(sum, SYMRAIL_CMP_GT, 99, &v));
        T_CHECK(symrail_signal_wait_until(sum, SYMRAIL_CMP_LT, 101, &v));
        T_CHECK(symrail_signal_wait_until(sum, SYMRAIL_CMP_LE, 100, &v));
        T_CHECK(symrail_signal_wait_until(sum, SYMRAIL_CMP_GE, 100, &v));
        T_ASSERT(v == 100, "value_p %llu", (unsigned long long)v);
    }
    t_pass("signal comparisons");

    /* A long wait sleeps instead of burning a core: PE 0 signals after 600 ms
     * of wall time; the waiter may use a fraction of that in CPU time. */
    uint64_t *late = symrail_calloc(1, sizeof(uint64_t));
    uint64_t one = 1;
    if (me == 0) {
        usleep(600 * 1000);
        T_CHECK(symrail_put_signal(gather, &one, sizeof(one), late, 1, SYMRAIL_SIGNAL_SET, 1));
    } else if (me == 1) {
        double c0 = cpu_seconds();
        T_CHECK(symrail_signal_wait_until(late, SYMRAIL_CMP_EQ, 1, NULL));
        double used = cpu_seconds() - c0;
        if (!t_env("T_WAIT_MAY_SPIN", 0))
            T_ASSERT(used < 0.3, "waiting 600 ms used %.3f s of CPU: the wait does not sleep", used);
    }
    symrail_free(late);
    t_pass("a long wait sleeps");

    /* No data at all: the signal alone. */
    T_CHECK(symrail_put_signal(gather, NULL, 0, sum, 4242, SYMRAIL_SIGNAL_SET, me));
    T_CHECK(symrail_signal_wait_until(sum, SYMRAIL_CMP_EQ, 4242, NULL));
    t_pass("put_signal with no data");

    symrail_free(gather);
    symrail_free(sum);
    symrail_free(ack);
    symrail_free(sig);
    symrail_free(slots);
    free(priv);
    symrail_finalize();
    return 0;
}
