/*
 * The OpenSHMEM team and collective calls, checked against values computed
 * locally, and their refusals of bad input (each ends the job with one line
 * naming the call and the argument).
 *   t_shmem_coll             the calls
 *   t_shmem_coll bad CASE    badteam, root, psync, nonmember, overrun
 */
#include <shmem.h>

/* The active-set forms are deprecated, and tested here on purpose. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include "tcommon.h"

static long psync[2][SHMEM_BCAST_SYNC_SIZE];

int main(int argc, char **argv)
{
    symrail_init();
    int me = symrail_my_pe(), n = symrail_n_pes();
    long *src = symrail_calloc(64, sizeof(long)), *dst = symrail_calloc(64 * (size_t)n, 8);
    long *ps = symrail_calloc(2 * SHMEM_BCAST_SYNC_SIZE, sizeof(long));
    T_ASSERT(src && dst && ps, "symrail_calloc");
    symrail_barrier_all();
    (void)psync;

    if (argc > 2 && strcmp(argv[1], "bad") == 0) {
        const char *c = argv[2];
        if (strcmp(c, "badteam") == 0)
            shmem_team_sync(SHMEM_TEAM_INVALID);
        else if (strcmp(c, "root") == 0)
            shmem_long_broadcast(SHMEM_TEAM_WORLD, dst, src, 1, n + 3);
        else if (strcmp(c, "psync") == 0)
            shmem_broadcast64(dst, src, 1, 0, 0, 0, n, psync[0]);  /* not in the heap */
        else if (strcmp(c, "nonmember") == 0 && me == 0)
            shmem_barrier(1, 0, n - 1, ps);
        else if (strcmp(c, "overrun") == 0)
            shmem_long_fcollect(SHMEM_TEAM_WORLD, dst, src, (size_t)1 << 40);
        symrail_barrier_all();
        printf("not refused: %s\n", c);
        symrail_finalize();
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
    shmem_barrier_all();
    if (me == 0)
        printf("ok: shmem teams and collectives on %d PEs\n", n);
    symrail_finalize();
    return 0;
}
