/*
 * The OpenSHMEM team and collective calls, checked against values computed
 * locally, and their refusals of bad input (each ends the job with one line
 * naming the call and the argument).
 *   t_shmem_coll             the calls
 *   t_shmem_coll bad CASE    badteam, root, psync, nonmember, overrun
 * Global and static buffers, pSync and pWrk are as symmetric as the heap's:
 * every collective takes them (statics()).  A team context made right
 * after shmem_init, before any team call, numbers its PEs in its team.
 */
#include <shmem.h>

/* The active-set forms are deprecated, and tested here on purpose. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "tcommon.h"

/* Static buffers for up to S_MAXPE PEs; S_N elements make two chunks of
 * pWrk in the active-set reduction. */
#define S_MAXPE 8
#define S_N     40
static long s_src[S_N * S_MAXPE], s_dst[S_N * S_MAXPE], s_one;
static long s_wrk[S_N / 2 + 1 + SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long s_ps[SHMEM_REDUCE_SYNC_SIZE];
long g_ps[SHMEM_BCAST_SYNC_SIZE] = { SHMEM_SYNC_VALUE };  /* in .data, not .bss */

static void s_reset(int n, int it)
{
    int me = shmem_my_pe();
    for (int i = 0; i < S_N * S_MAXPE; i++) {
        s_src[i] = me * 10000 + i * 10 + it;
        s_dst[i] = -1;
    }
    (void)n;
    shmem_barrier_all();
}

static void s_psync_clean(const long *ps, int words)
{
    for (int q = 0; q < words; q++)
        T_ASSERT(ps[q] == SHMEM_SYNC_VALUE, "static pSync[%d] = %ld", q, ps[q]);
}

#define S_V(pe, i, it) ((long)(pe) * 10000 + (i) * 10 + (it))

static void statics(int me, int n, int iters)
{
    if (n > S_MAXPE)
        return;
    for (int it = 0; it < iters; it++) {
        int root = it % n;
        /* Active-set forms: static dest, source, pSync and pWrk. */
        s_reset(n, it);
        shmem_broadcast64(s_dst, s_src, S_N, root, 0, 0, n, s_ps);
        for (int i = 0; i < S_N && me != root; i++)
            T_ASSERT(s_dst[i] == S_V(root, i, it), "static broadcast64 [%d] = %ld", i, s_dst[i]);
        shmem_barrier(0, 0, n, g_ps);  /* a pSync in .data */
        s_psync_clean(s_ps, SHMEM_BCAST_SYNC_SIZE);
        s_reset(n, it);
        shmem_fcollect64(s_dst, s_src, S_N, 0, 0, n, s_ps);
        for (int p = 0; p < n; p++)
            for (int i = 0; i < S_N; i++)
                T_ASSERT(s_dst[p * S_N + i] == S_V(p, i, it), "static fcollect64 %d/%d", p, i);
        s_reset(n, it);
        shmem_collect64(s_dst, s_src, (size_t)me + 1, 0, 0, n, s_ps);
        for (int p = 0, at = 0; p < n; at += ++p)
            for (int i = 0; i <= p; i++)
                T_ASSERT(s_dst[at + i] == S_V(p, i, it), "static collect64 %d/%d", p, i);
        s_reset(n, it);
        shmem_alltoall64(s_dst, s_src, 2, 0, 0, n, s_ps);
        for (int p = 0; p < n; p++)
            for (int k = 0; k < 2; k++)
                T_ASSERT(s_dst[2 * p + k] == S_V(p, 2 * me + k, it), "static alltoall64 %d", p);
        s_reset(n, it);
        shmem_alltoalls64(s_dst, s_src, 2, 1, 1, 0, 0, n, s_ps);
        for (int p = 0; p < n; p++)
            T_ASSERT(s_dst[2 * p] == S_V(p, me, it) && s_dst[2 * p + 1] == -1,
                     "static alltoalls64 %d", p);
        s_reset(n, it);
        for (int i = 0; i < S_N; i++)
            s_src[i] = me + i;
        shmem_long_sum_to_all(s_dst, s_src, S_N, 0, 0, n, s_wrk, s_ps);
        for (int i = 0; i < S_N; i++)
            T_ASSERT(s_dst[i] == (long)n * i + (long)n * (n - 1) / 2, "static sum_to_all [%d]", i);
        shmem_sync(0, 0, n, g_ps);
        s_psync_clean(s_ps, SHMEM_REDUCE_SYNC_SIZE);
        s_psync_clean(g_ps, SHMEM_BCAST_SYNC_SIZE);

        /* Team forms: static dest and source. */
        s_reset(n, it);
        shmem_long_broadcast(SHMEM_TEAM_WORLD, s_dst, s_src, S_N, root);
        for (int i = 0; i < S_N; i++)
            T_ASSERT(s_dst[i] == S_V(root, i, it), "static team broadcast [%d]", i);
        s_reset(n, it);
        shmem_long_fcollect(SHMEM_TEAM_WORLD, s_dst, s_src, S_N);
        for (int p = 0; p < n; p++)
            T_ASSERT(s_dst[p * S_N + S_N - 1] == S_V(p, S_N - 1, it), "static team fcollect");
        s_reset(n, it);
        shmem_long_collect(SHMEM_TEAM_WORLD, s_dst, s_src, (size_t)me + 1);
        for (int p = 0, at = 0; p < n; at += ++p)
            T_ASSERT(s_dst[at + p] == S_V(p, p, it), "static team collect %d", p);
        s_reset(n, it);
        shmem_long_alltoall(SHMEM_TEAM_WORLD, s_dst, s_src, 2);
        for (int p = 0; p < n; p++)
            T_ASSERT(s_dst[2 * p + 1] == S_V(p, 2 * me + 1, it), "static team alltoall %d", p);
        s_reset(n, it);
        shmem_long_alltoalls(SHMEM_TEAM_WORLD, s_dst, s_src, 2, 1, 1);
        for (int p = 0; p < n; p++)
            T_ASSERT(s_dst[2 * p] == S_V(p, me, it), "static team alltoalls %d", p);
        s_reset(n, it);
        for (int i = 0; i < S_N; i++)
            s_src[i] = me + i;
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, s_dst, s_src, S_N);
        for (int i = 0; i < S_N; i++)
            T_ASSERT(s_dst[i] == (long)n * i + (long)n * (n - 1) / 2, "static sum_reduce [%d]", i);
        s_one = me;
        shmem_long_max_reduce(SHMEM_TEAM_WORLD, &s_one, &s_one, 1);
        T_ASSERT(s_one == n - 1, "static in-place max_reduce %ld", s_one);
        shmem_long_sum_inscan(SHMEM_TEAM_WORLD, s_dst, s_src, S_N);
        for (int i = 0; i < S_N; i++)
            T_ASSERT(s_dst[i] == (long)(me + 1) * i + (long)me * (me + 1) / 2,
                     "static sum_inscan [%d]", i);
        shmem_long_sum_exscan(SHMEM_TEAM_WORLD, s_dst, s_src, S_N);
        for (int i = 0; i < S_N && me > 0; i++)
            T_ASSERT(s_dst[i] == (long)me * i + (long)me * (me - 1) / 2,
                     "static sum_exscan [%d]", i);
    }
}

/* Made before any team call: SHMEM_TEAM_SHARED must be filled in already
 * (the team calls come only after the context's first use). */
static void early_team_ctx(void)
{
    shmem_ctx_t cw, cs;
    static long box[2];
    T_ASSERT(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &cw) == 0, "world team ctx");
    T_ASSERT(shmem_team_create_ctx(SHMEM_TEAM_SHARED, 0, &cs) == 0, "shared team ctx");
    int me = shmem_my_pe(), n = shmem_n_pes();
    shmem_ctx_long_p(cw, &box[0], me, (me + 1) % n);
    /* Every member of the shared team adds one at its member 0. */
    shmem_ctx_long_atomic_add(cs, &box[1], 1, 0);
    shmem_ctx_quiet(cw);
    shmem_ctx_quiet(cs);
    shmem_barrier_all();
    T_ASSERT(box[0] == (me + n - 1) % n, "early world team ctx put: %ld", box[0]);
    if (shmem_team_my_pe(SHMEM_TEAM_SHARED) == 0)
        T_ASSERT(box[1] == shmem_team_n_pes(SHMEM_TEAM_SHARED),
                 "early shared team ctx adds: %ld of %d", box[1],
                 shmem_team_n_pes(SHMEM_TEAM_SHARED));
    shmem_ctx_destroy(cw);
    shmem_ctx_destroy(cs);
}

int main(int argc, char **argv)
{
    shmem_init();
    if (argc == 1)
        early_team_ctx();
    int me = symrail_my_pe(), n = symrail_n_pes();
    long *src = symrail_calloc(64, sizeof(long)), *dst = symrail_calloc(64 * (size_t)n, 8);
    long *ps = symrail_calloc(2 * SHMEM_BCAST_SYNC_SIZE, sizeof(long));
    T_ASSERT(src && dst && ps, "symrail_calloc");
    symrail_barrier_all();
    long private_ps[SHMEM_BCAST_SYNC_SIZE];

    if (argc > 2 && strcmp(argv[1], "bad") == 0) {
        const char *c = argv[2];
        if (strcmp(c, "badteam") == 0)
            shmem_team_sync(SHMEM_TEAM_INVALID);
        else if (strcmp(c, "root") == 0)
            shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 1, n + 3);
        else if (strcmp(c, "psync") == 0)
            shmem_broadcast64(dst, src, 1, 0, 0, 0, n, private_ps);  /* not symmetric */
        else if (strcmp(c, "nonmember") == 0 && me == 0)
            shmem_barrier(1, 0, n - 1, ps);
        else if (strcmp(c, "overrun") == 0)
            shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, (size_t)1 << 40);
        symrail_barrier_all();
        printf("not refused: %s\n", c);
        shmem_finalize();
        return 0;
    }

    T_ASSERT(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me && shmem_team_n_pes(SHMEM_TEAM_WORLD) == n,
             "world team");
    T_ASSERT(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1, "invalid team's my_pe");
    T_ASSERT(shmem_team_translate_pe(SHMEM_TEAM_SHARED, shmem_team_my_pe(SHMEM_TEAM_SHARED),
                                     SHMEM_TEAM_WORLD) == me, "shared -> world");
    T_ASSERT(shmem_team_ptr(SHMEM_TEAM_WORLD, src, me) == src, "team_ptr to myself");
    shmem_team_t even = SHMEM_TEAM_INVALID;
    shmem_team_config_t cfg = { .num_contexts = 2 }, got = { 0 };
    T_ASSERT(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (n + 1) / 2, &cfg,
                                      SHMEM_TEAM_NUM_CONTEXTS, &even) == 0, "split");
    T_ASSERT((even != SHMEM_TEAM_INVALID) == (me % 2 == 0), "even team membership");
    if (even != SHMEM_TEAM_INVALID) {
        T_ASSERT(shmem_team_get_config(even, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 &&
                 got.num_contexts == 2, "get_config");
        T_ASSERT(shmem_team_translate_pe(even, 1, SHMEM_TEAM_WORLD) == (n > 2 ? 2 : -1),
                 "translate even 1");
    }
    for (int it = 0; it < 100; it++) {
        /* The world, and the even PEs' team in turn. */
        shmem_team_t t = it % 2 ? even : SHMEM_TEAM_WORLD;
        int tn = shmem_team_n_pes(t), tme = shmem_team_my_pe(t);
        if (t == SHMEM_TEAM_INVALID)
            goto aset;
        src[0] = me * 100 + it;
        shmem_team_sync(t);
        shmem_long_broadcast(t, dst, src, 1, it % tn);
        T_ASSERT(dst[0] == shmem_team_translate_pe(t, it % tn, SHMEM_TEAM_WORLD) * 100 + it,
                 "broadcast it %d", it);
        shmem_long_fcollect(t, dst, src, 1);
        for (int p = 0; p < tn; p++)
            T_ASSERT(dst[p] == shmem_team_translate_pe(t, p, SHMEM_TEAM_WORLD) * 100 + it,
                     "fcollect it %d", it);
        for (int p = 0; p < tn; p++)
            src[p] = me * 1000 + p;
        shmem_alltoallmem(t, dst, src, sizeof(long));
        for (int p = 0; p < tn; p++)
            T_ASSERT(dst[p] == shmem_team_translate_pe(t, p, SHMEM_TEAM_WORLD) * 1000 + tme,
                     "alltoallmem it %d", it);
    aset:;
        /* Active set: every PE, pSync alternating, a barrier between uses. */
        long *p = ps + (it % 2) * SHMEM_BCAST_SYNC_SIZE;
        dst[0] = -1;
        shmem_barrier_all();
        src[0] = me + it;
        shmem_broadcast64(dst, src, 1, 0, 0, 0, n, p);
        T_ASSERT(me == 0 ? dst[0] == -1 : dst[0] == it, "broadcast64 it %d", it);
        shmem_barrier(0, 0, n, p);
        shmem_fcollect64(dst, src, 1, 0, 0, n, p);
        for (int q = 0; q < n; q++)
            T_ASSERT(dst[q] == q + it, "fcollect64 it %d", it);
        shmem_sync(0, 0, n, p);
        for (int q = 0; q < SHMEM_BCAST_SYNC_SIZE; q++)
            T_ASSERT(p[q] == SHMEM_SYNC_VALUE, "pSync[%d] = %ld", q, p[q]);
    }
    if (even != SHMEM_TEAM_INVALID)
        shmem_team_destroy(even);
    statics(me, n, 6);
    shmem_barrier_all();
    if (me == 0)
        printf("ok: shmem teams and collectives on %d PEs\n", n);
    shmem_finalize();
    return 0;
}
