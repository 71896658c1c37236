/*
 * OpenSHMEM calls the other shmem tests leave out, through shmem.h alone,
 * every result checked against a value computed here: split_2d teams, the
 * active-set collect/fcollect/broadcast/alltoall(s) of 32 and 64 bits, the
 * team mem and typed collectives, sync_all, sessions, the deprecated setup
 * and memory names, context get/put (nbi, with signal), and the bitwise,
 * set, inc and compare-swap atomics from every PE on one word.
 */
#define SHMEMX_NO_DEPRECATION_WARNINGS  /* start_pes, shmalloc and the active sets */
#include <shmem.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t_sh_more.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

int me, npes;

#define NE 3  /* elements a block in the collectives */

/* ---- split_2d --------------------------------------------------------------------- */
static void test_split_2d(int xr)
{
    shmem_team_t xt = SHMEM_TEAM_INVALID, yt = SHMEM_TEAM_INVALID;
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, xr, NULL, 0, &xt, NULL, 0, &yt) == 0,
          "split_2d xrange %d", xr);
    CHECK(xt != SHMEM_TEAM_INVALID && yt != SHMEM_TEAM_INVALID, "split_2d %d teams", xr);
    int x = me % xr, y = me / xr;
    int xsize = npes - y * xr < xr ? npes - y * xr : xr;
    int ysize = (npes - 1 - x) / xr + 1;
    CHECK(shmem_team_n_pes(xt) == xsize && shmem_team_my_pe(xt) == x,
          "xrange %d: x team %d/%d, want %d/%d", xr, shmem_team_my_pe(xt),
          shmem_team_n_pes(xt), x, xsize);
    CHECK(shmem_team_n_pes(yt) == ysize && shmem_team_my_pe(yt) == y,
          "xrange %d: y team %d/%d, want %d/%d", xr, shmem_team_my_pe(yt),
          shmem_team_n_pes(yt), y, ysize);
    for (int i = 0; i < xsize; i++)
        CHECK(shmem_team_translate_pe(xt, i, SHMEM_TEAM_WORLD) == y * xr + i,
              "xrange %d: x team PE %d", xr, i);
    for (int j = 0; j < ysize; j++)
        CHECK(shmem_team_translate_pe(yt, j, SHMEM_TEAM_WORLD) == j * xr + x,
              "xrange %d: y team PE %d", xr, j);
    CHECK(shmem_team_translate_pe(xt, xsize, SHMEM_TEAM_WORLD) == -1, "past the x team");
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, yt) == y, "world -> y team");
    /* A PE of another row is in no x team of mine. */
    if (npes > xr)
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, y == 0 ? xr : 0, xt) == -1,
              "xrange %d: another row's PE in my x team", xr);
    /* The teams work: team_sync, and an fcollect of world ranks along each axis. */
    int *src = shmem_malloc(sizeof(int)), *dst = shmem_malloc(npes * sizeof(int));
    CHECK(src && dst, "malloc");
    *src = me;
    CHECK(shmem_team_sync(xt) == 0 && shmem_team_sync(yt) == 0, "team_sync");
    CHECK(shmem_int_fcollect(xt, dst, src, 1) == 0, "fcollect x");
    for (int i = 0; i < xsize; i++)
        CHECK(dst[i] == y * xr + i, "xrange %d: x fcollect[%d] = %d", xr, i, dst[i]);
    CHECK(shmem_int_fcollect(yt, dst, src, 1) == 0, "fcollect y");
    for (int j = 0; j < ysize; j++)
        CHECK(dst[j] == j * xr + x, "xrange %d: y fcollect[%d] = %d", xr, j, dst[j]);
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
    shmem_team_destroy(xt);
    shmem_team_destroy(yt);
}

/* ---- active-set collectives ------------------------------------------------------- */
/* The set: every PE (stride 0), or the even PEs (log stride 1).  One pSync
 * serves every call; the barrier between calls lets it be reused. */
#define TEST_ASET(S, T)                                                                \
    static void test_aset##S(long *psync, int log_stride)                              \
    {                                                                                  \
        int st = 1 << log_stride, size = (npes + st - 1) / st, in = me % st == 0;      \
        int idx = me / st;                                                             \
        size_t cap = (size_t)NE * npes * 4;                                            \
        T *src = shmem_malloc(cap * sizeof(T)), *dst = shmem_malloc(cap * sizeof(T));  \
        CHECK(src && dst, "malloc");                                                   \
        for (int it = 0; it < 4; it++) {                                               \
            for (size_t k = 0; k < cap; k++) {                                         \
                src[k] = (T)(me * 1000 + it * 100 + k);                                \
                dst[k] = (T)-1;                                                        \
            }                                                                          \
            int root = it % size;                                                      \
            shmem_barrier_all();                                                       \
            if (in)                                                                    \
                shmem_broadcast##S(dst, src, NE, root, 0, log_stride, size, psync);    \
            for (int k = 0; k < NE; k++)                                               \
                CHECK(!in || idx == root ? dst[k] == (T)-1                             \
                                         : dst[k] == (T)(root * st * 1000 + it * 100 + k), \
                      "broadcast" #S " it %d [%d]", it, k);                            \
            shmem_barrier_all();                                                       \
            /* collect: PE of index i gives i + 1 elements. */                         \
            if (in)                                                                    \
                shmem_collect##S(dst, src, idx + 1, 0, log_stride, size, psync);       \
            for (int i = 0, at = 0; in && i < size; at += ++i)                         \
                for (int k = 0; k <= i; k++)                                           \
                    CHECK(dst[at + k] == (T)(i * st * 1000 + it * 100 + k),            \
                          "collect" #S " it %d block %d [%d]", it, i, k);               \
            shmem_barrier_all();                                                       \
            if (in)                                                                    \
                shmem_fcollect##S(dst, src, NE, 0, log_stride, size, psync);           \
            for (int i = 0; in && i < size; i++)                                       \
                for (int k = 0; k < NE; k++)                                           \
                    CHECK(dst[i * NE + k] == (T)(i * st * 1000 + it * 100 + k),        \
                          "fcollect" #S " it %d block %d [%d]", it, i, k);              \
            shmem_barrier_all();                                                       \
            if (in)                                                                    \
                shmem_alltoall##S(dst, src, NE, 0, log_stride, size, psync);           \
            for (int i = 0; in && i < size; i++)                                       \
                for (int k = 0; k < NE; k++)                                           \
                    CHECK(dst[i * NE + k] == (T)(i * st * 1000 + it * 100 + idx * NE + k), \
                          "alltoall" #S " it %d block %d [%d]", it, i, k);              \
            shmem_barrier_all();                                                       \
            for (size_t k = 0; k < cap; k++)                                           \
                dst[k] = (T)-1;                                                        \
            shmem_barrier_all();                                                       \
            ptrdiff_t dstr = 1 + it % 2, sstr = 1 + (it / 2) % 2;                      \
            if (in)                                                                    \
                shmem_alltoalls##S(dst, src, dstr, sstr, NE, 0, log_stride, size, psync); \
            for (int i = 0; in && i < size; i++)                                       \
                for (int k = 0; k < NE; k++) {                                         \
                    size_t at = (size_t)dstr * (i * NE + k);                           \
                    CHECK(dst[at] == (T)(i * st * 1000 + it * 100 + sstr * (idx * NE + k)), \
                          "alltoalls" #S " it %d block %d [%d]", it, i, k);             \
                    if (dstr == 2)                                                     \
                        CHECK(dst[at + 1] == (T)-1, "alltoalls" #S " wrote a gap");    \
                }                                                                      \
            shmem_barrier_all();                                                       \
        }                                                                              \
        for (int k = 0; k < SHMEM_ALLTOALLS_SYNC_SIZE; k++)                            \
            CHECK(psync[k] == SHMEM_SYNC_VALUE, "pSync[%d] left %ld", k, psync[k]);    \
        shmem_free(dst);                                                               \
        shmem_free(src);                                                               \
    }
TEST_ASET(32, int32_t)
TEST_ASET(64, int64_t)

/* ---- team collectives, mem and typed ---------------------------------------------- */
static void test_team_mem(shmem_team_t t)
{
    int tn = shmem_team_n_pes(t), tme = shmem_team_my_pe(t);
    size_t cap = (size_t)NE * npes * 2 + 8;
    unsigned char *src = shmem_malloc(cap), *dst = shmem_malloc(cap);
    CHECK(src && dst, "malloc");
    if (t == SHMEM_TEAM_INVALID)  /* the allocations are the world's */
        goto out;
#define WPE(i) shmem_team_translate_pe(t, (i), SHMEM_TEAM_WORLD)
    for (int it = 0; it < 3; it++) {
        for (size_t k = 0; k < cap; k++) {
            src[k] = (unsigned char)(me * 50 + it * 7 + k);
            dst[k] = 0xee;
        }
        int root = (it + 1) % tn;
        shmem_team_sync(t);
        CHECK(shmem_broadcastmem(t, dst, src, 5, root) == 0, "broadcastmem");
        for (int k = 0; k < 5; k++)
            CHECK(dst[k] == (unsigned char)(WPE(root) * 50 + it * 7 + k), "broadcastmem [%d]", k);
        CHECK(dst[5] == 0xee, "broadcastmem past the end");
        /* collectmem: member i gives i + 1 bytes. */
        CHECK(shmem_collectmem(t, dst, src, tme + 1) == 0, "collectmem");
        for (int i = 0, at = 0; i < tn; at += ++i)
            for (int k = 0; k <= i; k++)
                CHECK(dst[at + k] == (unsigned char)(WPE(i) * 50 + it * 7 + k),
                      "collectmem block %d [%d]", i, k);
        CHECK(shmem_fcollectmem(t, dst, src, NE) == 0, "fcollectmem");
        for (int i = 0; i < tn; i++)
            for (int k = 0; k < NE; k++)
                CHECK(dst[i * NE + k] == (unsigned char)(WPE(i) * 50 + it * 7 + k),
                      "fcollectmem block %d [%d]", i, k);
        CHECK(shmem_alltoallmem(t, dst, src, NE) == 0, "alltoallmem");
        for (int i = 0; i < tn; i++)
            for (int k = 0; k < NE; k++)
                CHECK(dst[i * NE + k] == (unsigned char)(WPE(i) * 50 + it * 7 + tme * NE + k),
                      "alltoallmem block %d [%d]", i, k);
        memset(dst, 0xee, cap);
        shmem_team_sync(t);
        CHECK(shmem_alltoallsmem(t, dst, src, 2, 1, 2) == 0, "alltoallsmem");
        for (int i = 0; i < tn; i++)
            for (int k = 0; k < 2; k++) {
                CHECK(dst[2 * (i * 2 + k)] ==
                      (unsigned char)(WPE(i) * 50 + it * 7 + tme * 2 + k),
                      "alltoallsmem block %d [%d]", i, k);
                CHECK(dst[2 * (i * 2 + k) + 1] == 0xee, "alltoallsmem wrote a gap");
            }
    }
out:
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

#define TEST_TEAM_TYPE(NAME, T)                                                        \
    static void test_team_##NAME(shmem_team_t t)                                       \
    {                                                                                  \
        int tn = shmem_team_n_pes(t), tme = shmem_team_my_pe(t);                       \
        size_t cap = (size_t)NE * npes * 3;                                            \
        T *src = shmem_malloc(cap * sizeof(T)), *dst = shmem_malloc(cap * sizeof(T));  \
        CHECK(src && dst, "malloc");                                                   \
        if (t == SHMEM_TEAM_INVALID)                                                   \
            goto out;                                                                  \
        for (size_t k = 0; k < cap; k++) {                                             \
            src[k] = (T)(me * 40 + k);                                                 \
            dst[k] = (T)0;                                                             \
        }                                                                              \
        shmem_team_sync(t);                                                            \
        CHECK(shmem_##NAME##_collect(t, dst, src, tn - tme) == 0, #NAME "_collect");   \
        for (int i = 0, at = 0; i < tn; at += tn - i++)                                \
            for (int k = 0; k < tn - i; k++)                                           \
                CHECK(dst[at + k] == (T)(WPE(i) * 40 + k), #NAME "_collect %d [%d]", i, k); \
        CHECK(shmem_##NAME##_alltoall(t, dst, src, NE) == 0, #NAME "_alltoall");       \
        for (int i = 0; i < tn; i++)                                                   \
            for (int k = 0; k < NE; k++)                                               \
                CHECK(dst[i * NE + k] == (T)(WPE(i) * 40 + tme * NE + k),              \
                      #NAME "_alltoall %d [%d]", i, k);                                \
        shmem_team_sync(t);                                                            \
        for (size_t k = 0; k < cap; k++)                                               \
            dst[k] = (T)0;                                                             \
        shmem_team_sync(t);                                                            \
        CHECK(shmem_##NAME##_alltoalls(t, dst, src, 1, 3, NE) == 0, #NAME "_alltoalls"); \
        for (int i = 0; i < tn; i++)                                                   \
            for (int k = 0; k < NE; k++)                                               \
                CHECK(dst[i * NE + k] == (T)(WPE(i) * 40 + 3 * (tme * NE + k)),        \
                      #NAME "_alltoalls %d [%d]", i, k);                               \
        CHECK(dst[tn * NE] == (T)0, #NAME "_alltoalls past the end");                  \
    out:                                                                               \
        shmem_barrier_all();                                                           \
        shmem_free(dst);                                                               \
        shmem_free(src);                                                               \
    }
TEST_TEAM_TYPE(int, int)
TEST_TEAM_TYPE(double, double)
TEST_TEAM_TYPE(uint64, uint64_t)
TEST_TEAM_TYPE(short, short)
TEST_TEAM_TYPE(size, size_t)

int main(void)
{
    start_pes(0);
    shmem_init();  /* after start_pes: initialises nothing twice */
    me = shmem_my_pe();
    npes = shmem_n_pes();
    CHECK(_my_pe() == me && _num_pes() == npes && npes >= 1, "_my_pe/_num_pes");

    /* The deprecated memory names. */
    long *a = shmalloc(4 * sizeof(long));
    double *b = shmemalign(256, 8 * sizeof(double));
    CHECK(a && b && ((uintptr_t)b & 255) == 0, "shmalloc %p shmemalign %p", (void *)a, (void *)b);
    CHECK(shmem_addr_accessible(a, (me + 1) % npes) && shmem_addr_accessible(b, 0),
          "shmalloc'd memory is symmetric");
    b[0] = -1;
    shmem_barrier_all();
    shmem_double_p(b, me + 0.5, (me + 1) % npes);
    shmem_barrier_all();
    CHECK(b[0] == (me + npes - 1) % npes + 0.5, "put into shmemalign'd memory: %g", b[0]);
    shmem_barrier_all();
    shfree(b);
    shfree(a);

    shmem_session_config_t scfg = { .total_ops = 10 };
    shmem_session_start(SHMEM_CTX_DEFAULT, SHMEM_SESSION_BATCH, &scfg, SHMEM_SESSION_TOTAL_OPS);
    shmem_session_stop(SHMEM_CTX_DEFAULT);

    /* split_2d: every x range that leaves a partial row or none. */
    for (int xr = 1; xr <= npes; xr++)
        test_split_2d(xr);

    long *psync = shmem_malloc(SHMEM_ALLTOALLS_SYNC_SIZE * sizeof(long));
    CHECK(psync, "pSync");
    for (int k = 0; k < SHMEM_ALLTOALLS_SYNC_SIZE; k++)
        psync[k] = SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    for (int ls = 0; ls <= 1; ls++) {
        test_aset32(psync, ls);
        test_aset64(psync, ls);
    }
    shmem_free(psync);

    /* The world, and the PEs of odd world rank when there are some. */
    shmem_team_t odd = SHMEM_TEAM_INVALID;
    if (npes > 1)
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odd) == 0,
              "split odd");
    shmem_team_t teams[2] = { SHMEM_TEAM_WORLD, odd };
    for (int i = 0; i < (npes > 1 ? 2 : 1); i++) {
        test_team_mem(teams[i]);
        test_team_int(teams[i]);
        test_team_double(teams[i]);
        test_team_uint64(teams[i]);
        test_team_short(teams[i]);
        test_team_size(teams[i]);
    }
    shmem_barrier_all();
    if (odd != SHMEM_TEAM_INVALID)
        shmem_team_destroy(odd);

    /* sync_all orders no memory: a put completed by quiet is seen after it. */
    int *w = shmem_calloc(1, sizeof(int));
    CHECK(w, "calloc");
    shmem_barrier_all();
    for (int it = 1; it <= 20; it++) {
        shmem_int_p(w, it * 10 + me, (me + 1) % npes);
        shmem_quiet();
        shmem_sync_all();
        CHECK(*w == it * 10 + (me + npes - 1) % npes, "after sync_all %d: %d", it, *w);
        shmem_sync_all();
    }
    shmem_free(w);

    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
    test_ctx_rma(ctx);
    test_ctx_rma(SHMEM_CTX_DEFAULT);
    test_amo(ctx);
    shmem_ctx_destroy(ctx);

    shmem_barrier_all();
    if (me == 0)
        printf("ok: shmem split_2d, active-set and team collectives, sync_all, contexts, "
               "atomics (%d PEs)\n", npes);
    shmem_finalize();
    return 0;
}
