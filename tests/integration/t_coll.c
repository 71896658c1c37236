/*
 * Teams and collectives of the core, each result checked against a value
 * computed locally, many times back to back (no barrier between, so fast
 * PEs run ahead), on the world, splits and 2-d splits in turn, and the
 * active-set forms with pSync reused.
 *   t_coll [iters]     everything
 *   t_coll badteam     a collective on a destroyed team fails naming the call
 *   t_coll threads     two threads, each with its own team, collectives at once
 */
#include "core/coll.h"
#include "tcommon.h"

#include <pthread.h>

static int me, npes;

static long val(int pe, int i, int it)
{
    return (long)pe * 1000003L + (long)i * 31 + it;
}

static void *smalloc(size_t n)
{
    void *p = symrail_malloc(n);
    T_ASSERT(p != NULL, "symrail_malloc(%zu)", n);
    return p;
}

/* Every collective on team t, iteration it. */
static void run_team(sr_team_t *t, int it, long *a, long *b, size_t big)
{
    int n = t->size, my = t->my_pe;
    T_CHECK(sr_coll_sync("sync", t));
    /* Broadcast, root turning over, small and large (pipelined chunks). */
    size_t cnt = it % 3 == 0 ? big : (size_t)(it % 7) + 1;
    int root = it % n;
    for (size_t i = 0; i < cnt; i++) {
        a[i] = val(t->world[my], (int)i, it);
        b[i] = -1;
    }
    T_CHECK(sr_coll_bcast("broadcast", t, b, a, cnt * sizeof(long), root));
    for (size_t i = 0; i < cnt; i++)
        T_ASSERT(b[i] == val(t->world[root], (int)i, it), "bcast[%zu] = %ld it %d root %d", i,
                 b[i], it, root);
    /* fcollect of 1 + it % 5 longs. */
    size_t fc = 1 + (size_t)(it % 5);
    for (size_t i = 0; i < fc; i++)
        a[i] = val(t->world[my], (int)i, it);
    T_CHECK(sr_coll_fcollect("fcollect", t, b, a, fc * sizeof(long)));
    for (int p = 0; p < n; p++)
        for (size_t i = 0; i < fc; i++)
            T_ASSERT(b[p * fc + i] == val(t->world[p], (int)i, it), "fcollect[%d][%zu] it %d", p,
                     i, it);
    /* collect: member p gives p % 3 + it % 2 longs. */
    size_t mine = (size_t)(my % 3 + it % 2);
    for (size_t i = 0; i < mine; i++)
        a[i] = val(t->world[my], (int)i, it);
    T_CHECK(sr_coll_collect("collect", t, b, a, mine * sizeof(long)));
    size_t at = 0;
    for (int p = 0; p < n; p++)
        for (size_t i = 0; i < (size_t)(p % 3 + it % 2); i++, at++)
            T_ASSERT(b[at] == val(t->world[p], (int)i, it), "collect[%zu] it %d", at, it);
    /* alltoall of 2 longs per pair. */
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 2; i++)
            a[p * 2 + i] = val(t->world[my], p * 2 + i, it);
    T_CHECK(sr_coll_alltoall("alltoall", t, b, a, 2 * sizeof(long)));
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 2; i++)
            T_ASSERT(b[p * 2 + i] == val(t->world[p], my * 2 + i, it), "alltoall[%d] it %d", p, it);
    /* alltoalls: dst 2, sst 3, 2 elements a pair. */
    for (int k = 0; k < n * 2; k++)
        a[k * 3] = val(t->world[my], k, it);
    for (int k = 0; k < n * 4; k++)
        b[k] = -7;
    T_CHECK(sr_coll_alltoalls("alltoalls", t, b, a, 2, 3, 2, sizeof(long)));
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 2; i++)
            T_ASSERT(b[(p * 2 + i) * 2] == val(t->world[p], my * 2 + i, it) &&
                     b[(p * 2 + i) * 2 + 1] == -7, "alltoalls[%d][%d] it %d", p, i, it);
    /* Sum and max over members, in place and not; large ones in chunks. */
    size_t rc = it % 4 == 1 ? big : (size_t)(it % 9) + 1;
    for (size_t i = 0; i < rc; i++)
        a[i] = val(t->world[my], (int)i, it);
    T_CHECK(sr_coll_reduce("sum_reduce", t, SR_DT_LONG, SR_ROP_SUM, b, a, rc));
    for (size_t i = 0; i < rc; i++) {
        long want = 0;
        for (int p = 0; p < n; p++)
            want += val(t->world[p], (int)i, it);
        T_ASSERT(b[i] == want, "sum[%zu] = %ld, want %ld (it %d, n %d)", i, b[i], want, it, n);
    }
    T_CHECK(sr_coll_reduce("max_reduce", t, SR_DT_LONG, SR_ROP_MAX, a, a, rc));
    for (size_t i = 0; i < rc; i++)
        T_ASSERT(a[i] == val(t->world[n - 1] > t->world[0] ? t->world[n - 1] : t->world[0],
                             (int)i, it), "max[%zu] it %d", i, it);
    /* Scans. */
    for (size_t i = 0; i < 3; i++)
        a[i] = val(t->world[my], (int)i, it);
    b[0] = b[1] = b[2] = 99;
    T_CHECK(sr_coll_scan("sum_inscan", t, SR_DT_LONG, SR_ROP_SUM, b, a, 3, 0));
    for (size_t i = 0; i < 3; i++) {
        long want = 0;
        for (int p = 0; p <= my; p++)
            want += val(t->world[p], (int)i, it);
        T_ASSERT(b[i] == want, "inscan[%zu] it %d", i, it);
    }
    b[0] = b[1] = b[2] = 99;
    T_CHECK(sr_coll_scan("sum_exscan", t, SR_DT_LONG, SR_ROP_SUM, b, a, 3, 1));
    for (size_t i = 0; i < 3; i++) {
        long want = my ? 0 : 99;
        for (int p = 0; p < my; p++)
            want += val(t->world[p], (int)i, it);
        T_ASSERT(b[i] == want, "exscan[%zu] = %ld want %ld it %d", i, b[i], want, it);
    }
}

static void run_aset(int it, long *a, long *b, long *psync, long *pwrk)
{
    /* Even PEs, then all. */
    int lstride = it % 2 && npes > 1 ? 1 : 0, size = lstride ? (npes + 1) / 2 : npes;
    int in = me % (1 << lstride) == 0, my = me >> lstride;
    long *ps = psync + (it % 2) * 8;
    if (!in)
        return;
    /* dest ready before anyone calls, as the active-set forms require. */
    int root = it % size;
    for (int i = 0; i < 4; i++) {
        a[i] = val(me, i, it);
        b[i] = -1;
    }
    T_CHECK(sr_coll_barrier_aset("shmem_barrier", 0, lstride, size, ps));
    T_CHECK(sr_coll_barrier_aset("shmem_barrier", 0, lstride, size, ps));  /* reused at once */
    T_CHECK(sr_coll_bcast_aset("shmem_broadcast64", b, a, 4 * 8, root, 0, lstride, size, ps));
    for (int i = 0; i < 4; i++)
        T_ASSERT(b[i] == (my == root ? -1 : val(root << lstride, i, it)), "aset bcast it %d", it);
    T_CHECK(sr_coll_barrier_aset("shmem_barrier", 0, lstride, size, ps));
    T_CHECK(sr_coll_fcollect_aset("shmem_fcollect64", b, a, 2 * 8, 0, lstride, size, ps));
    for (int p = 0; p < size; p++)
        for (int i = 0; i < 2; i++)
            T_ASSERT(b[p * 2 + i] == val(p << lstride, i, it), "aset fcollect it %d", it);
    T_CHECK(sr_coll_barrier_aset("shmem_barrier", 0, lstride, size, ps));
    T_CHECK(sr_coll_collect_aset("shmem_collect64", b, a, (size_t)(my % 2 + 1) * 8, 0, lstride,
                                 size, ps));
    int at = 0;
    for (int p = 0; p < size; p++)
        for (int i = 0; i < p % 2 + 1; i++, at++)
            T_ASSERT(b[at] == val(p << lstride, i, it), "aset collect it %d", it);
    T_CHECK(sr_coll_barrier_aset("shmem_barrier", 0, lstride, size, ps));
    for (int i = 0; i < 5; i++)
        a[i] = val(me, i, it) * (me + 1);
    T_CHECK(sr_coll_reduce_aset("shmem_long_sum_to_all", 0, lstride, size, SR_DT_LONG,
                                SR_ROP_SUM, b, a, 5, pwrk, ps));
    for (int i = 0; i < 5; i++) {
        long want = 0;
        for (int p = 0; p < size; p++)
            want += val(p << lstride, i, it) * ((p << lstride) + 1);
        T_ASSERT(b[i] == want, "aset sum[%d] = %ld want %ld it %d", i, b[i], want, it);
    }
    T_CHECK(sr_coll_barrier_aset("shmem_barrier", 0, lstride, size, ps));
    for (int p = 0; p < size; p++)
        a[p] = val(me, p, it);
    T_CHECK(sr_coll_alltoall_aset("shmem_alltoall64", b, a, 8, 0, lstride, size, ps));
    for (int p = 0; p < size; p++)
        T_ASSERT(b[p] == val(p << lstride, my, it), "aset alltoall it %d", it);
    T_CHECK(sr_coll_barrier_aset("shmem_barrier", 0, lstride, size, ps));
    for (int k = 0; k < 8; k++)
        T_ASSERT(ps[k] == 0, "pSync[%d] = %ld after the calls", k, ps[k]);
}

typedef struct {
    sr_team_t *t;
    long      *a, *b;
} t_thr_t;

static void *t_thread(void *arg)
{
    t_thr_t *th = arg;
    for (int it = 0; it < 100; it++)
        run_team(th->t, it, th->a, th->b, it < 4 ? 5000 : 20);
    return NULL;
}

/* Each thread runs every collective on a team of its own while the other
 * does too: the teams' words, scratch and contexts are apart. */
static int t_threads(void)
{
    int prov;
    T_CHECK(symrail_init_thread(SYMRAIL_THREAD_MULTIPLE, &prov));
    T_ASSERT(prov == SYMRAIL_THREAD_MULTIPLE, "THREAD_MULTIPLE");
    me = symrail_my_pe();
    npes = symrail_n_pes();
    t_thr_t th[2];
    pthread_t tid[2];
    for (int i = 0; i < 2; i++) {
        T_CHECK(sr_team_split_strided("shmem_team_split_strided", sr_team_world(), 0, 1, npes, 0,
                                      &th[i].t));
        th[i].a = smalloc(6000 * 8 * 3);
        th[i].b = smalloc(6000 * 8 * 3);
    }
    for (int i = 0; i < 2; i++)
        T_ASSERT(pthread_create(&tid[i], NULL, t_thread, &th[i]) == 0, "pthread_create");
    for (int i = 0; i < 2; i++)
        pthread_join(tid[i], NULL);
    for (int i = 0; i < 2; i++)
        T_CHECK(sr_team_destroy("shmem_team_destroy", th[i].t));
    symrail_barrier_all();
    if (me == 0)
        printf("ok: collectives of two teams on two threads at once, %d PEs\n", npes);
    symrail_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "threads") == 0)
        return t_threads();
    symrail_init();
    me = symrail_my_pe();
    npes = symrail_n_pes();
    sr_team_t *w = sr_team_world();
    if (argc > 1 && strcmp(argv[1], "badteam") == 0) {
        sr_team_t *t;
        T_CHECK(sr_team_split_strided("split", w, 0, 1, npes, 0, &t));
        T_CHECK(sr_team_destroy("shmem_team_destroy", t));
        T_EXPECT(sr_coll_sync("shmem_team_sync", t), SYMRAIL_ERR_INVALID);
        printf("ok: a destroyed team is refused\n");
        symrail_finalize();
        return 0;
    }
    int iters = argc > 1 ? atoi(argv[1]) : 60;
    size_t big = 70000;  /* over the scratch's half and the broadcast chunk */
    long *a = smalloc((big + 64) * 8 * 3), *b = smalloc((big + 64) * 8 * 3);
    long *psync = smalloc(16 * sizeof(long)), *pwrk = smalloc(64 * sizeof(long));
    memset(psync, 0, 16 * sizeof(long));
    symrail_barrier_all();

    T_ASSERT(w->size == npes && w->my_pe == me, "world team");
    sr_team_t *sh = sr_team_shared();
    T_ASSERT(sh->my_pe >= 0 && sr_team_translate(sh, sh->my_pe, w) == me, "shared team");
    /* Odd members of the world; a 2-d grid of 2 columns. */
    sr_team_t *odd = NULL, *x = NULL, *y = NULL;
    if (npes > 1)
        T_CHECK(sr_team_split_strided("shmem_team_split_strided", w, 1, 2, npes / 2, 0, &odd));
    T_ASSERT((odd != NULL) == (me % 2 == 1 && npes > 1), "odd team membership");
    if (odd) {
        T_ASSERT(odd->my_pe == me / 2 && odd->size == npes / 2, "odd team index");
        T_ASSERT(sr_team_translate(odd, 0, w) == 1, "translate odd 0 -> world");
        T_ASSERT(sr_team_translate(w, 0, odd) == -1, "translate world 0 -> odd");
    }
    T_CHECK(sr_team_split_2d("shmem_team_split_2d", w, 2, 0, 0, &x, &y));
    T_ASSERT(x && y, "2-d split gives both teams");
    int xs = npes - me / 2 * 2 < 2 ? npes - me / 2 * 2 : 2;
    T_ASSERT(x->my_pe == me % 2 && x->size == xs,
             "x team: index %d size %d", x->my_pe, x->size);
    T_ASSERT(y->my_pe == me / 2 && y->size == (npes - me % 2 + 1) / 2, "y team: index %d size %d",
             y->my_pe, y->size);
    T_ASSERT(sr_team_translate(x, 0, y) == (me % 2 == 0 ? me / 2 : -1), "translate x -> y");

    for (int it = 0; it < iters; it++) {
        run_team(w, it, a, b, it < 6 ? big : 40);
        if (odd && it % 2)
            run_team(odd, it, a, b, 40);
        run_team(it % 2 ? x : y, it, a, b, 40);
        run_aset(it, a, b, psync, pwrk);
    }
    if (odd)
        T_CHECK(sr_team_destroy("shmem_team_destroy", odd));
    T_CHECK(sr_team_destroy("shmem_team_destroy", x));
    T_CHECK(sr_team_destroy("shmem_team_destroy", y));
    /* Slots come back: many splits and destroys in a row. */
    for (int i = 0; i < 100; i++) {
        sr_team_t *t;
        T_CHECK(sr_team_split_strided("shmem_team_split_strided", w, 0, 1, npes, 0, &t));
        run_team(t, i, a, b, 8);
        T_CHECK(sr_team_destroy("shmem_team_destroy", t));
    }
    symrail_barrier_all();
    if (me == 0)
        printf("ok: teams and collectives on %d PEs, %d iterations\n", npes, iters);
    symrail_finalize();
    return 0;
}
