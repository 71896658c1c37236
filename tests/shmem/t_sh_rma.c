/*
 * OpenSHMEM setup, memory, RMA, ordering and contexts, written against
 * shmem.h: each PE writes to the next and checks what the previous wrote.
 * Synchronisation uses symrail_barrier_all, which needs nothing of the
 * OpenSHMEM collectives.
 */
#define SHMEMX_NO_DEPRECATION_WARNINGS  /* _my_pe and _num_pes are tested too */
#include <shmem.h>
#include <shmemx.h>
#include <symrail.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/team.h"  /* a team made by hand, until the teams' calls exist */

static int me, npes;

#define CHECK(c, ...)                                                                  \
    do {                                                                               \
        if (!(c)) {                                                                    \
            fprintf(stderr, "PE %d: FAIL %s:%d: ", me, __FILE__, __LINE__);            \
            fprintf(stderr, __VA_ARGS__);                                              \
            fprintf(stderr, "\n");                                                     \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static void bar(void)
{
    CHECK(symrail_barrier_all() == SYMRAIL_OK, "barrier");
}

#define N 64
/* One test a type: contiguous, nbi, p/g, strided, block-strided, with the
 * default context and with `ctx`.  Values name the writer, element and type. */
#define TEST_TYPE(NAME, T)                                                             \
    static void test_##NAME(shmem_ctx_t ctx)                                           \
    {                                                                                  \
        T *buf = shmem_calloc(4 * N, sizeof(T)), src[4 * N], got[4 * N];               \
        CHECK(buf != NULL, "calloc");                                                  \
        int nx = (me + 1) % npes, pv = (me + npes - 1) % npes;                         \
        for (int i = 0; i < 4 * N; i++)                                                \
            src[i] = (T)(me * 7 + i % 50 + 1);                                         \
        shmem_##NAME##_put(buf, src, N, nx);                                           \
        shmem_ctx_##NAME##_put_nbi(ctx, buf + N, src + N, N, nx);                      \
        shmem_ctx_quiet(ctx);                                                          \
        shmem_##NAME##_p(buf + 2 * N, (T)(me + 3), nx);                                \
        shmem_ctx_##NAME##_iput(ctx, buf + 2 * N + 1, src, 2, 3, 8, nx);               \
        shmem_##NAME##_ibput(buf + 3 * N, src, 8, 5, 3, 4, nx);                        \
        shmem_quiet();                                                                 \
        bar();                                                                         \
        for (int i = 0; i < 2 * N; i++)                                                \
            CHECK(buf[i] == (T)(pv * 7 + i % 50 + 1), #NAME " put [%d]", i);           \
        CHECK(buf[2 * N] == (T)(pv + 3), #NAME " p");                                  \
        for (int i = 0; i < 8; i++)                                                    \
            CHECK(buf[2 * N + 1 + 2 * i] == (T)(pv * 7 + (3 * i) % 50 + 1), #NAME " iput %d", i); \
        for (int b = 0; b < 4; b++)                                                    \
            for (int j = 0; j < 3; j++)                                                \
                CHECK(buf[3 * N + 8 * b + j] == (T)(pv * 7 + (5 * b + j) % 50 + 1),    \
                      #NAME " ibput %d.%d", b, j);                                     \
        /* Gets from the next PE read what this PE wrote there. */                     \
        memset(got, 0, sizeof(got));                                                   \
        shmem_ctx_##NAME##_get(ctx, got, buf, N, nx);                                  \
        shmem_##NAME##_get_nbi(got + N, buf + N, N, nx);                               \
        shmem_quiet();                                                                 \
        for (int i = 0; i < 2 * N; i++)                                                \
            CHECK(got[i] == (T)(me * 7 + i % 50 + 1), #NAME " get [%d]", i);           \
        CHECK(shmem_ctx_##NAME##_g(ctx, buf + 2 * N, nx) == (T)(me + 3), #NAME " g");   \
        shmem_##NAME##_iget(got, buf + 2 * N + 1, 3, 2, 8, nx);                        \
        for (int i = 0; i < 8; i++)                                                    \
            CHECK(got[3 * i] == (T)(me * 7 + (3 * i) % 50 + 1), #NAME " iget %d", i);  \
        shmem_ctx_##NAME##_ibget(ctx, got, buf + 3 * N, 4, 8, 3, 4, nx);               \
        for (int b = 0; b < 4; b++)                                                    \
            for (int j = 0; j < 3; j++)                                                \
                CHECK(got[4 * b + j] == (T)(me * 7 + (5 * b + j) % 50 + 1),            \
                      #NAME " ibget %d.%d", b, j);                                     \
        bar();                                                                         \
        shmem_free(buf);                                                               \
    }
#define TYPES(X) X(float, float) X(double, double) X(longdouble, long double)          \
    X(char, char) X(schar, signed char) X(short, short) X(int, int) X(long, long)      \
    X(longlong, long long) X(uchar, unsigned char) X(ushort, unsigned short)           \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long)     \
    X(int8, int8_t) X(int16, int16_t) X(int32, int32_t) X(int64, int64_t)              \
    X(uint8, uint8_t) X(uint16, uint16_t) X(uint32, uint32_t) X(uint64, uint64_t)      \
    X(size, size_t) X(ptrdiff, ptrdiff_t)
TYPES(TEST_TYPE)
#define CALL_TYPE(NAME, T) test_##NAME(ctx);

static void test_sized(void)
{
    uint64_t *buf = shmem_malloc(64 * 16);
    unsigned char src[64 * 16];
    int nx = (me + 1) % npes, pv = (me + npes - 1) % npes;
    for (int i = 0; i < (int)sizeof(src); i++)
        src[i] = (unsigned char)(me + i);
    shmem_putmem(buf, src, 100, nx);
    shmem_put8((char *)buf + 100, src + 100, 10, nx);
    shmem_put16((char *)buf + 110, src + 110, 5, nx);
    shmem_put32((char *)buf + 120, src + 120, 2, nx);
    shmem_put64((char *)buf + 128, src + 128, 4, nx);
    shmem_put128((char *)buf + 160, src + 160, 4, nx);
    shmem_putmem_nbi((char *)buf + 224, src + 224, 32, nx);
    shmem_iput64((char *)buf + 256, src + 256, 2, 1, 4, nx);
    shmem_quiet();
    bar();
    const unsigned char *b = (const unsigned char *)buf;
    for (int i = 0; i < 256; i++)
        CHECK(b[i] == (unsigned char)(pv + i), "sized put byte %d", i);
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 8; k++)
            CHECK(b[256 + 16 * i + k] == (unsigned char)(pv + 256 + 8 * i + k), "iput64 %d", i);
    unsigned char got[256];
    shmem_getmem(got, buf, 256, nx);
    for (int i = 0; i < 256; i++)
        CHECK(got[i] == (unsigned char)(me + i), "getmem byte %d", i);
    shmem_get128(got, buf, 2, nx);
    shmem_getmem_nbi(got + 32, (char *)buf + 32, 32, nx);
    shmem_quiet();
    for (int i = 0; i < 64; i++)
        CHECK(got[i] == (unsigned char)(me + i), "get128/getmem_nbi byte %d", i);
    bar();
    shmem_free(buf);
}

static void test_memory(void)
{
    long *a = shmem_malloc(10 * sizeof(long));
    CHECK(a != NULL, "malloc");
    for (int i = 0; i < 10; i++)
        a[i] = me * 100 + i;
    a = shmem_realloc(a, 1000 * sizeof(long));
    CHECK(a != NULL, "realloc");
    for (int i = 0; i < 10; i++)
        CHECK(a[i] == me * 100 + i, "realloc kept [%d]", i);
    long *z = shmem_calloc(100, sizeof(long));
    for (int i = 0; i < 100; i++)
        CHECK(z[i] == 0, "calloc zero");
    void *al = shmem_align(4096, 100);
    CHECK(al != NULL && ((uintptr_t)al & 4095) == 0, "align");
    void *h = shmem_malloc_with_hints(64, SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE);
    CHECK(h != NULL, "malloc_with_hints");
    /* All PEs see the same addresses: a put to the realloc'ed block lands. */
    long v = me;
    shmem_long_put(a + 999, &v, 1, (me + 1) % npes);
    shmem_quiet();
    bar();
    CHECK(a[999] == (me + npes - 1) % npes, "put into realloc'ed block");
    CHECK(shmem_addr_accessible(a, (me + 1) % npes) == 1, "addr_accessible heap");
    CHECK(shmem_addr_accessible(&v, 0) == 0, "addr_accessible of a stack variable");
    CHECK(shmem_pe_accessible(npes - 1) == 1 && shmem_pe_accessible(npes) == 0, "pe_accessible");
    CHECK(shmem_ptr(a, me) == a, "shmem_ptr to self");
    CHECK(shmem_malloc(0) == NULL || 1, "malloc(0)");
    shmem_free(h);
    shmem_free(al);
    shmem_free(z);
    a = shmem_realloc(a, 0);
    CHECK(a == NULL, "realloc to 0 frees");
    shmem_free(NULL);
}

/* Accesses that end exactly at their allocation's end, to small objects
 * that share a page with others (the bounds table sends those to the
 * segment list), to a realloc'ed block's new end and to a block made where
 * another was freed, are no errors (t_sh_bad has the ones that are). */
static void test_alloc_bounds(void)
{
    int to = (me + 1) % npes, from = (me + npes - 1) % npes;
    char *a = shmem_malloc(1000);
    long *b = shmem_malloc(24), *c = shmem_malloc(8);
    char *big = shmem_malloc(3 * 4096 + 8);
    char buf[64] = {0};
    long v = me + 1, vv[3] = { v, v, v };
    for (int i = 0; i < 3; i++)
        b[i] = 0;
    *c = 0;
    bar();
    shmem_putmem(a + 1000 - 8, &v, 8, to);
    shmem_long_put(b, vv, 3, to);
    shmem_long_p(b + 2, v, to);
    shmem_putmem(big + 3 * 4096, &v, 8, to);
    shmem_putmem_nbi(big + 4090, buf, 18, to);  /* across a page of the block */
    shmem_long_atomic_add(c, 1, to);
    shmem_long_iput(b, vv, 2, 1, 2, to);
    shmem_quiet();
    bar();
    CHECK(*(long *)(void *)(a + 992) == from + 1 && b[1] == from + 1 && b[2] == from + 1,
          "puts that end at their allocation's end");
    CHECK(*c == 1 && shmem_long_g(c, to) == 1, "atomic on a small object after others");
    CHECK(shmem_long_atomic_fetch(b + 2, to) == me + 1, "fetch at an object's last word");
    bar();
    b = shmem_realloc(b, 4000);
    shmem_long_p(b + 499, v, to);
    shmem_free(c);
    long *d = shmem_malloc(8);
    *d = 0;
    bar();
    shmem_long_p(d, v, to);
    shmem_quiet();
    bar();
    CHECK(b[499] == from + 1 && *d == from + 1, "put to a realloc'ed end and a reused range");
    bar();
    shmem_free(d);
    shmem_free(big);
    shmem_free(b);
    shmem_free(a);
}

static void test_contexts(void)
{
    shmem_ctx_t c;
    shmem_team_t t;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &t) == 0 && t == SHMEM_TEAM_WORLD,
          "default context's team");
    long opts[] = {0, SHMEM_CTX_PRIVATE, SHMEM_CTX_SERIALIZED,
                   SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED};
    for (int i = 0; i < 4; i++) {
        CHECK(shmem_ctx_create(opts[i], &c) == 0 && c != SHMEM_CTX_INVALID, "ctx_create %ld",
              opts[i]);
        CHECK(shmem_ctx_get_team(c, &t) == 0 && t == SHMEM_TEAM_WORLD, "ctx team");
        shmem_ctx_fence(c);
        shmem_ctx_destroy(c);
    }
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_WORLD, 0, &c) == 0, "team_create_ctx world");
    CHECK(shmem_ctx_get_team(c, &t) == 0 && t == SHMEM_TEAM_WORLD, "team ctx team");
    shmem_ctx_session_start(c, SHMEM_SESSION_BATCH, NULL, 0);
    shmem_ctx_t ctx = c;
    TYPES(CALL_TYPE)
    shmem_ctx_session_stop(c);
    shmem_ctx_destroy(c);
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &c) != 0 && c == SHMEM_CTX_INVALID,
          "team_create_ctx of SHMEM_TEAM_INVALID");
    CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &t) != 0 && t == SHMEM_TEAM_INVALID,
          "ctx_get_team of SHMEM_CTX_INVALID");
    shmem_ctx_destroy(SHMEM_CTX_INVALID);  /* nothing to do */
    /* A context that promises no stores may still get. */
    CHECK(shmem_ctx_create(SHMEM_CTX_NOSTORE, &c) == 0, "NOSTORE");
    long *x = shmem_malloc(sizeof(long));
    *x = me;
    bar();
    CHECK(shmem_ctx_long_g(c, x, (me + 1) % npes) == (me + 1) % npes, "NOSTORE get");
    bar();
    shmem_free(x);
    shmem_ctx_destroy(c);
}

/* A team's num_contexts (OpenSHMEM 1.6, shmem_team_config_t): that many
 * contexts of the team at a time; without SHMEM_TEAM_NUM_CONTEXTS any number
 * (programs that split with no configuration make contexts of the team). */
static void test_team_nctx(void)
{
    shmem_team_t none, two;
    shmem_team_config_t cfg = { .num_contexts = 2 };
    shmem_ctx_t c[3];
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, &cfg, 0, &none) == 0,
          "split without config");
    for (int i = 0; i < 3; i++)
        CHECK(shmem_team_create_ctx(none, 0, &c[i]) == 0, "context %d of a team split without "
              "a configuration", i);
    for (int i = 0; i < 3; i++)
        shmem_ctx_destroy(c[i]);
    shmem_team_config_t got = { .num_contexts = 7 };
    CHECK(shmem_team_get_config(none, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 0,
          "num_contexts of a team split without a configuration reads 0");
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, &cfg, SHMEM_TEAM_NUM_CONTEXTS,
                                   &two) == 0, "split with num_contexts 2");
    CHECK(shmem_team_create_ctx(two, 0, &c[0]) == 0 && shmem_team_create_ctx(two, 0, &c[1]) == 0,
          "two contexts of a team configured for two");
    CHECK(shmem_team_create_ctx(two, 0, &c[2]) != 0 && c[2] == SHMEM_CTX_INVALID,
          "a third context of a team configured for two");
    shmem_ctx_destroy(c[0]);
    CHECK(shmem_team_create_ctx(two, 0, &c[2]) == 0, "a context again after one is destroyed");
    shmem_ctx_destroy(c[1]);
    shmem_ctx_destroy(c[2]);
    for (int i = 0; i < 3; i++)  /* the predefined teams have no limit */
        CHECK(shmem_team_create_ctx(SHMEM_TEAM_SHARED, 0, &c[i]) == 0, "shared team ctx %d", i);
    for (int i = 0; i < 3; i++)
        shmem_ctx_destroy(c[i]);
    shmem_team_destroy(none);
    shmem_team_destroy(two);
}

/* A team context numbers PEs in its team: here the world reversed. */
static void test_team_ctx(void)
{
    shmem_team_t rev;
    shmem_team_config_t cfg = { .num_contexts = 1 };
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, -1, npes, &cfg,
                                   SHMEM_TEAM_NUM_CONTEXTS, &rev) == 0, "split reversed");
    int *x = shmem_malloc(64 * sizeof(int));
    for (int i = 0; i < 64; i++)
        x[i] = -1;
    shmem_ctx_t c;
    shmem_team_t t;
    CHECK(shmem_team_create_ctx(rev, SHMEM_CTX_PRIVATE, &c) == 0, "team_create_ctx");
    CHECK(shmem_ctx_get_team(c, &t) == 0 && t == rev, "ctx_get_team of a team context");
    bar();
    shmem_ctx_int_p(c, x + me, me, 0);  /* team PE 0 is world PE npes-1 */
    shmem_ctx_quiet(c);
    bar();
    for (int i = 0; i < npes; i++)
        CHECK(x[i] == (me == npes - 1 ? i : -1), "team ctx put [%d] = %d", i, x[i]);
    CHECK(shmem_ctx_int_g(c, x + 1 % npes, 0) == (npes > 1 ? 1 : 0), "team ctx get");
    bar();
    shmem_ctx_destroy(c);
    shmem_free(x);
    if (getenv("T_SH_BAD_TEAM_PE")) {  /* run_shmem.sh: a PE outside the team */
        CHECK(shmem_team_create_ctx(rev, 0, &c) == 0, "team_create_ctx");
        shmem_ctx_int_p(c, (int *)shmem_malloc(8), 1, npes);
    }
    /* A context outliving its team (undefined in OpenSHMEM) can still be
     * destroyed; used, it ends the job saying why (run_shmem.sh). */
    CHECK(shmem_team_create_ctx(rev, 0, &c) == 0, "team_create_ctx before team_destroy");
    shmem_team_destroy(rev);
    if (getenv("T_SH_BAD_TEAM_GONE"))
        shmem_ctx_int_p(c, (int *)shmem_malloc(8), 1, 0);
    shmem_ctx_destroy(c);
}

int main(void)
{
    int flag = -1, maj, min, prov;
    char name[SHMEM_MAX_NAME_LEN];
    CHECK(shmem_query_initialized(&flag) == 0 && flag == 0, "initialized before init");
    shmem_init();
    shmem_init();  /* counted: the matching finalize leaves the library up */
    me = shmem_my_pe();
    npes = shmem_n_pes();
    CHECK(shmem_query_initialized(&flag) == 0 && flag == 1, "initialized");
    shmem_query_thread(&prov);
    CHECK(prov >= SHMEM_THREAD_SINGLE && prov <= SHMEM_THREAD_MULTIPLE, "query_thread");
    shmem_info_get_version(&maj, &min);
    CHECK(maj == 1 && min == 6 && SHMEM_MAJOR_VERSION == 1 && SHMEM_MINOR_VERSION == 6, "version");
    shmem_info_get_name(name);
    CHECK(strcmp(name, SHMEM_VENDOR_STRING) == 0, "name '%s'", name);
    CHECK(_my_pe() == me && _num_pes() == npes, "deprecated queries");

    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    TYPES(CALL_TYPE)
    test_sized();
    test_memory();
    test_alloc_bounds();
    test_contexts();
    test_team_ctx();
    test_team_nctx();
    shmem_fence();

    shmem_finalize();
    CHECK(shmem_query_initialized(&flag) == 0 && flag == 1, "first finalize keeps it up");
    shmem_finalize();
    CHECK(shmem_query_initialized(&flag) == 0 && flag == 0, "down after the last finalize");
    CHECK(shmem_my_pe() == -1, "my_pe after finalize");

    /* 1.6: the library may start again. */
    CHECK(shmem_init_thread(SHMEM_THREAD_MULTIPLE, &prov) == 0 && prov == SHMEM_THREAD_MULTIPLE,
          "init_thread after finalize");
    CHECK(shmem_my_pe() == me && shmem_n_pes() == npes, "same PE after init again");
    test_int(SHMEM_CTX_DEFAULT);
    test_sized();
    shmem_finalize();
    if (me == 0)
        printf("ok: shmem setup, memory, RMA of %d types, contexts, init again (%d PEs)\n",
               24, npes);
    return 0;
}
