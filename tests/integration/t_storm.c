/*
 * nbi storm: far more slices in flight than the transport has room for (run
 * with a small SYMRAIL_IB_MAX_WR or SYMRAIL_IB_CQ_SIZE).  Nothing may fail or be
 * lost; with T_EXPECT_STALLS=qp or =cq the matching counter must show that
 * the backpressure was hit and handled.
 */
#include "tcommon.h"

int main(void)
{
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;
    size_t count = t_env("T_COUNT", 2000), block = t_env("T_BLOCK", 4096);
    unsigned char *dst = symrail_malloc(count * block);
    unsigned char *src = symrail_malloc(count * block);  /* registered: zero copy */
    unsigned char *priv = malloc(count * block);         /* private: staged */
    T_ASSERT(dst && src && priv, "allocation failed");

    for (int pass = 0; pass < 2; pass++) {
        unsigned char *from = pass ? priv : src;
        t_fill(from, count * block, me, (unsigned)pass);
        memset(dst, 0, count * block);
        T_CHECK(symrail_barrier_all());
        /* Reverse order, so completions and posts interleave oddly. */
        for (size_t i = count; i-- > 0;)
            T_CHECK(symrail_put_nbi(dst + i * block, from + i * block, block, right));
        T_CHECK(symrail_quiet());
        T_CHECK(symrail_barrier_all());
        size_t bad = t_verify(dst, count * block, left, (unsigned)pass);
        T_ASSERT(bad == SIZE_MAX, "pass %d: byte %zu of %zu wrong", pass, bad, count * block);
        /* And read it all back with nbi gets. */
        memset(priv, 0, count * block);
        for (size_t i = 0; i < count; i++)
            T_CHECK(symrail_get_nbi(priv + i * block, dst + i * block, block, right));
        T_CHECK(symrail_quiet());
        bad = t_verify(priv, count * block, me, (unsigned)pass);
        T_ASSERT(bad == SIZE_MAX, "pass %d: get back byte %zu wrong", pass, bad);
        T_CHECK(symrail_barrier_all());
    }

    symrail_stats_t st;
    T_CHECK(symrail_stats(&st));
    const char *want = getenv("T_EXPECT_STALLS");
    if (want && strcmp(want, "qp") == 0)
        T_ASSERT(st.qp_full > 0, "no QP-full stall with %zu slices in flight", count);
    if (want && strcmp(want, "cq") == 0)
        T_ASSERT(st.cq_full > 0, "no CQ-full stall with %zu slices in flight", count);
    if (me == 0)
        printf("PE 0: %llu slices, %llu stalls (qp full %llu, cq full %llu)\n",
               (unsigned long long)st.slices_posted, (unsigned long long)st.stalls,
               (unsigned long long)st.qp_full, (unsigned long long)st.cq_full);
    t_pass("nbi storm, data verified");
    free(priv);
    symrail_free(src);
    symrail_free(dst);
    symrail_finalize();
    return 0;
}
