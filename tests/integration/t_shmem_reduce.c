/*
 * OpenSHMEM reductions, written against shmem.h alone: every team-based
 * (type, operator) pair of the specification's table, 1 and 1024 elements,
 * distinct and in place; sum over a large count; back-to-back calls without
 * user synchronisation; sum inscan/exscan for every type; reductions and
 * scans on a strided team; the active-set _to_all forms over the whole world
 * and strided sets, reusing two pWrk and pSync pairs in turn.  Each check
 * compares with a fold computed locally.
 *
 * Usage: t_shmem_reduce [team|scan|subteam|toall|large|chain]  (default: all)
 *        t_shmem_reduce badcount|badaddr|badteam: a bad argument, which must end the job
 *        t_shmem_reduce perf: microseconds per long sum reduce of 1 and 1024
 */
#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The _to_all forms are deprecated, and tested on purpose. */
#define SHMEMX_NO_DEPRECATION_WARNINGS
#include <shmem.h>

static int me, npes;
static void *buf_a, *buf_b;      /* symmetric scratch, BUF_BYTES each */
#define BUF_BYTES (1024 * 16 + 64)

#define FAIL(...) \
    do { \
        fprintf(stderr, "PE %d: FAIL %s:%d: ", me, __FILE__, __LINE__); \
        fprintf(stderr, __VA_ARGS__); \
        fputc('\n', stderr); \
        fflush(stderr); \
        shmem_global_exit(1); \
    } while (0)

enum { C_INT, C_FLT, C_CPX };
enum { O_AND, O_OR, O_XOR, O_MAX, O_MIN, O_SUM, O_PROD };

/* The specification's team-reduction table: X(TYPE, TYPENAME, class, ops). */
#define TEAM_TYPES(X) \
    X(char, char, C_INT, ORD) X(signed char, schar, C_INT, ORD) X(short, short, C_INT, ORD) \
    X(int, int, C_INT, ORD) X(long, long, C_INT, ORD) X(long long, longlong, C_INT, ORD) \
    X(ptrdiff_t, ptrdiff, C_INT, ORD) \
    X(unsigned char, uchar, C_INT, BIT) X(unsigned short, ushort, C_INT, BIT) \
    X(unsigned int, uint, C_INT, BIT) X(unsigned long, ulong, C_INT, BIT) \
    X(unsigned long long, ulonglong, C_INT, BIT) \
    X(int8_t, int8, C_INT, BIT) X(int16_t, int16, C_INT, BIT) X(int32_t, int32, C_INT, BIT) \
    X(int64_t, int64, C_INT, BIT) X(uint8_t, uint8, C_INT, BIT) X(uint16_t, uint16, C_INT, BIT) \
    X(uint32_t, uint32, C_INT, BIT) X(uint64_t, uint64, C_INT, BIT) X(size_t, size, C_INT, BIT) \
    X(float, float, C_FLT, ORD) X(double, double, C_FLT, ORD) \
    X(long double, longdouble, C_FLT, ORD) \
    X(double _Complex, complexd, C_CPX, ARITH) X(float _Complex, complexf, C_CPX, ARITH)

#define TOALL_TYPES(X) \
    X(short, short, C_INT, BIT) X(int, int, C_INT, BIT) X(long, long, C_INT, BIT) \
    X(long long, longlong, C_INT, BIT) \
    X(float, float, C_FLT, ORD) X(double, double, C_FLT, ORD) \
    X(long double, longdouble, C_FLT, ORD) \
    X(double _Complex, complexd, C_CPX, ARITH) X(float _Complex, complexf, C_CPX, ARITH)

#define OPS_ARITH(Y, ...) Y(sum, O_SUM, __VA_ARGS__) Y(prod, O_PROD, __VA_ARGS__)
#define OPS_ORD(Y, ...) Y(max, O_MAX, __VA_ARGS__) Y(min, O_MIN, __VA_ARGS__) \
    OPS_ARITH(Y, __VA_ARGS__)
#define OPS_BIT(Y, ...) Y(and, O_AND, __VA_ARGS__) Y(or, O_OR, __VA_ARGS__) \
    Y(xor, O_XOR, __VA_ARGS__) OPS_ORD(Y, __VA_ARGS__)

/* Operands that keep every result exact and in range of the narrowest
 * type (char, at most 4 PEs here but any count for and/or/xor/min/max):
 * sums stay under 100 for up to 4 PEs, products are powers of 2 up to 2^4,
 * bitwise operands are bytes. */
static long gen(int op, int pe, size_t i, unsigned round)
{
    switch (op) {
    case O_AND: case O_OR: case O_XOR:
        return (long)((pe * 29u + i * 7u + round * 13u) & 0x7F);
    case O_MAX: case O_MIN:
        return (long)((pe * 37u + i * 11u + round) % 101u);
    case O_SUM:
        return (long)((pe + 1) * (int)((i + round) % 5 + 1) % 25);
    default:
        return ((size_t)pe + i + round) % 3 == 0 ? 2 : 1;
    }
}

/* The imaginary part of complex operands (none for the others). */
static long gen_im(int op, int pe, size_t i, unsigned round)
{
    if (op == O_PROD)
        return ((size_t)pe + i + round) % 2;  /* (1|2) + (0|1)i: products stay small */
    return (long)(((size_t)pe * 3 + i + round) % 4);
}

/* Every operand and result is a small integer (or a complex one), which
 * long double _Complex holds exactly: the reference computes in it. */
typedef long double _Complex num_t;

static num_t val(int cls, int op, int pe, size_t i, unsigned r)
{
    long double im = cls == C_CPX ? (long double)gen_im(op, pe, i, r) : 0;
    return (long double)gen(op, pe, i, r) + im * I;
}

static num_t apply(int op, num_t a, num_t b)
{
    long x = (long)creall(a), y = (long)creall(b);
    switch (op) {
    case O_AND: return x & y;
    case O_OR: return x | y;
    case O_XOR: return x ^ y;
    case O_MAX: return creall(b) > creall(a) ? b : a;
    case O_MIN: return creall(b) < creall(a) ? b : a;
    case O_SUM: return a + b;
    default: return a * b;
    }
}

/* Members of a set: start + k * stride, k < size. */
typedef struct { int start, stride, size; } set_t;
static set_t world_set(void) { set_t s = { 0, 1, 0 }; s.size = npes; return s; }

/* The team the team-based cases run on, and its members as a set. */
static shmem_team_t cur_team;
static set_t cur_set;

static void team_sync(void)
{
    if (cur_team == SHMEM_TEAM_WORLD)
        shmem_barrier_all();
    else
        shmem_team_sync(cur_team);
}

/* The fold over members 0..upto-1 of the set (0 for none). */
static num_t expect(int cls, int op, set_t s, int upto, size_t i, unsigned r)
{
    if (upto == 0)
        return 0;
    num_t acc = val(cls, op, s.start, i, r);
    for (int k = 1; k < upto; k++)
        acc = apply(op, acc, val(cls, op, s.start + k * s.stride, i, r));
    return acc;
}

static void mismatch(const char *what, const char *name, size_t n, unsigned r, size_t i,
                     num_t got, num_t want)
{
    FAIL("%s %s n=%zu round %u: element %zu is %g%+gi, expected %g%+gi", what, name, n, r, i,
         (double)creall(got), (double)cimagl(got), (double)creall(want), (double)cimagl(want));
}

#define FILL(T, cls, op, src, n, r) \
    for (size_t i = 0; i < (n); i++) \
        (src)[i] = (T)val(cls, op, me, i, r)

#define CHECK_DEST(T, name, cls, op, dst, n, set, upto, r, what) \
    for (size_t i = 0; i < (n); i++) { \
        num_t want_ = expect(cls, op, set, upto, i, r); \
        if ((num_t)(dst)[i] != want_) \
            mismatch(what, name, n, r, i, (num_t)(dst)[i], want_); \
    }

/* ---- team-based reductions -------------------------------------------- */

#define TEAM_FN(opn, op, T, TN, cls) \
    static void team_##TN##_##opn(size_t n, int inplace, unsigned r) \
    { \
        T *src = buf_a, *dst = inplace ? buf_a : buf_b; \
        FILL(T, cls, op, src, n, r); \
        int rc = shmem_##TN##_##opn##_reduce(cur_team, dst, src, n); \
        if (rc != 0) \
            FAIL("shmem_" #TN "_" #opn "_reduce returned %d", rc); \
        CHECK_DEST(T, #TN "_" #opn, cls, op, dst, n, cur_set, cur_set.size, r, \
                   inplace ? "in place" : "reduce") \
        team_sync();  /* buffers are rewritten by the next case */ \
    }
#define TEAM_OF(T, TN, cls, ops) OPS_##ops(TEAM_FN, T, TN, cls)
TEAM_TYPES(TEAM_OF)

#define TEAM_CALL(opn, op, T, TN, cls) \
    for (size_t c = 0; c < 2; c++) \
        for (int ip = 0; ip < 2; ip++) { \
            team_##TN##_##opn(counts[c], ip, (unsigned)(c + ip)); \
            ncases++; \
        }
#define TEAM_CALL_OF(T, TN, cls, ops) OPS_##ops(TEAM_CALL, T, TN, cls)

static int run_team(void)
{
    static const size_t counts[2] = { 1, 1024 };
    int ncases = 0;
    TEAM_TYPES(TEAM_CALL_OF)
    /* n = 0 is a valid call that changes nothing. */
    long *d = buf_b;
    d[0] = 42;
    if (shmem_long_sum_reduce(SHMEM_TEAM_WORLD, d, buf_a, 0) != 0 || d[0] != 42)
        FAIL("shmem_long_sum_reduce with nreduce 0 changed dest or failed");
    shmem_barrier_all();
    return ncases + 1;
}

/* ---- scans ------------------------------------------------------------ */

#define SCAN_FN(T, TN, cls, ops) \
    static void scan_##TN(size_t n, int inplace, int exclusive, unsigned r) \
    { \
        T *src = buf_a, *dst = inplace ? buf_a : buf_b; \
        FILL(T, cls, O_SUM, src, n, r); \
        int rc = exclusive ? shmem_##TN##_sum_exscan(cur_team, dst, src, n) \
                           : shmem_##TN##_sum_inscan(cur_team, dst, src, n); \
        if (rc != 0) \
            FAIL("shmem_" #TN "_sum_%sscan returned %d", exclusive ? "ex" : "in", rc); \
        set_t w = cur_set; \
        int idx = (me - w.start) / w.stride; \
        int upto = exclusive ? idx : idx + 1; \
        CHECK_DEST(T, #TN "_sum", cls, O_SUM, dst, n, w, upto, r, \
                   exclusive ? (inplace ? "exscan in place" : "exscan") \
                             : (inplace ? "inscan in place" : "inscan")) \
        team_sync(); \
    }
TEAM_TYPES(SCAN_FN)

#define SCAN_CALL(T, TN, cls, ops) \
    for (int c = 0; c < 2; c++) \
        for (int ip = 0; ip < 2; ip++) \
            for (int ex = 0; ex < 2; ex++) { \
                scan_##TN(c ? 1024 : 1, ip, ex, (unsigned)(c + ex)); \
                ncases++; \
            }

static int run_scan(void)
{
    int ncases = 0;
    TEAM_TYPES(SCAN_CALL)
    return ncases;
}

/* A team of every other PE from 1 (from 0 with one PE): a sample of every
 * class, reductions and scans, on members only. */
static int run_subteam(void)
{
    shmem_team_t t = SHMEM_TEAM_INVALID;
    int start = npes > 1 ? 1 : 0, size = (npes - start + 1) / 2, ncases = 0;
    if (shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 2, size, NULL, 0, &t) != 0)
        FAIL("shmem_team_split_strided(%d, 2, %d) failed", start, size);
    if (t != SHMEM_TEAM_INVALID) {
        cur_team = t;
        cur_set.start = start;
        cur_set.stride = 2;
        cur_set.size = size;
        if (shmem_team_my_pe(t) != (me - start) / 2)
            FAIL("shmem_team_my_pe is %d, expected %d", shmem_team_my_pe(t), (me - start) / 2);
        for (int c = 0; c < 2; c++)
            for (int ip = 0; ip < 2; ip++) {
                size_t n = c ? 1024 : 1;
                unsigned r = (unsigned)(c + ip);
                team_long_sum(n, ip, r);
                team_int_max(n, ip, r);
                team_uint64_xor(n, ip, r);
                team_double_prod(n, ip, r);
                team_complexd_sum(n, ip, r);
                scan_long(n, ip, 0, r);
                scan_double(n, ip, 1, r);
                ncases += 7;
            }
        shmem_team_destroy(t);
    }
    cur_team = SHMEM_TEAM_WORLD;
    cur_set = world_set();
    shmem_barrier_all();
    return ncases;
}

/* ---- active-set reductions -------------------------------------------- */

static long *psync[2];
static void *pwrk[2];
static int turn;

#define TOALL_FN(opn, op, T, TN, cls) \
    static void toall_##TN##_##opn(size_t n, int inplace, set_t s, int logstride, unsigned r) \
    { \
        int k = (me - s.start) / s.stride; \
        if (me < s.start || (me - s.start) % s.stride != 0 || k >= s.size) \
            return; /* not in the set: not called */ \
        T *src = buf_a, *dst = inplace ? buf_a : buf_b; \
        FILL(T, cls, op, src, n, r); \
        shmem_##TN##_##opn##_to_all(dst, src, (int)n, s.start, logstride, s.size, \
                                    (T *)pwrk[turn], psync[turn]); \
        turn ^= 1; \
        CHECK_DEST(T, #TN "_" #opn, cls, op, dst, n, s, s.size, r, "to_all") \
    }
#define TOALL_OF(T, TN, cls, ops) OPS_##ops(TOALL_FN, T, TN, cls)
TOALL_TYPES(TOALL_OF)

/* Back to back within a set, no barrier: two pSync/pWrk pairs in turn are
 * enough, since a PE in call k+2 has seen every member enter call k+1. */
#define TOALL_CALL(opn, op, T, TN, cls) \
    for (int c = 0; c < 2; c++) \
        for (int ip = 0; ip < 2; ip++) { \
            toall_##TN##_##opn(c ? 1024 : 1, ip, s, logstride, (unsigned)(c * 2 + ip)); \
            ncases++; \
        }
#define TOALL_CALL_OF(T, TN, cls, ops) OPS_##ops(TOALL_CALL, T, TN, cls)

static int run_toall(void)
{
    int ncases = 0;
    size_t wrk = 1024 / 2 + 1;
    if (wrk < SHMEM_REDUCE_MIN_WRKDATA_SIZE)
        wrk = SHMEM_REDUCE_MIN_WRKDATA_SIZE;
    for (int j = 0; j < 2; j++) {
        psync[j] = shmem_malloc(SHMEM_REDUCE_SYNC_SIZE * sizeof(long));
        pwrk[j] = shmem_malloc(wrk * sizeof(long double _Complex));
        if (psync[j] == NULL || pwrk[j] == NULL)
            FAIL("shmem_malloc of pSync/pWrk failed");
        for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
            psync[j][i] = SHMEM_SYNC_VALUE;
    }
    shmem_barrier_all();
    /* The world, then every other PE from 0, then every other from 1. */
    for (int v = 0; v < 3; v++) {
        set_t s = world_set();
        int logstride = 0;
        if (v > 0) {
            logstride = 1;
            s.start = v - 1;
            s.stride = 2;
            s.size = (npes - s.start + 1) / 2;
            if (s.size < 1)
                continue;
        }
        turn = 0;
        TOALL_TYPES(TOALL_CALL_OF)
        /* A PE outside the set has not touched pSync; all meet before the
         * next set reuses the same arrays from the first. */
        shmem_barrier_all();
    }
    for (int j = 0; j < 2; j++) {
        shmem_free(psync[j]);
        shmem_free(pwrk[j]);
    }
    return ncases;
}

/* ---- large counts and back-to-back calls ------------------------------ */

static int run_large(void)
{
    size_t n = (size_t)1 << 20;
    long *src = shmem_malloc(n * sizeof(long)), *dst = shmem_malloc(n * sizeof(long));
    if (src == NULL || dst == NULL)
        FAIL("shmem_malloc of 2 x %zu longs failed", n);
    for (int ip = 0; ip < 2; ip++) {
        long *d = ip ? src : dst;
        for (size_t i = 0; i < n; i++)
            src[i] = (long)(i * 3) + me * 1000003L;
        if (shmem_long_sum_reduce(SHMEM_TEAM_WORLD, d, src, n) != 0)
            FAIL("shmem_long_sum_reduce of %zu returned nonzero", n);
        long pes = npes, base = 1000003L * (pes * (pes - 1) / 2);
        for (size_t i = 0; i < n; i++)
            if (d[i] != (long)(i * 3) * pes + base)
                FAIL("large sum%s: element %zu is %ld, expected %ld", ip ? " in place" : "",
                     i, d[i], (long)(i * 3) * pes + base);
        shmem_barrier_all();
        /* max over a large count too */
        for (size_t i = 0; i < n; i++)
            src[i] = (long)((i + (size_t)me * 7919) % 1000003);
        if (shmem_long_max_reduce(SHMEM_TEAM_WORLD, d, src, n) != 0)
            FAIL("shmem_long_max_reduce of %zu returned nonzero", n);
        for (size_t i = 0; i < n; i++) {
            long want = 0;
            for (int p = 0; p < npes; p++) {
                long v = (long)((i + (size_t)p * 7919) % 1000003);
                want = v > want ? v : want;
            }
            if (d[i] != want)
                FAIL("large max%s: element %zu is %ld, expected %ld", ip ? " in place" : "", i,
                     d[i], want);
        }
        shmem_barrier_all();
    }
    shmem_free(src);
    shmem_free(dst);
    return 4;
}

/* Calls back to back with no barrier: an in-place chain where each result
 * is the next operand, and a run into distinct dests from a source
 * rewritten as soon as each call returns. */
static int run_chain(void)
{
    enum { ITERS = 200, N = 16 };
    long *x = buf_a;
    double *dd = buf_b;  /* ITERS * N doubles fit in buf_b? no: use a fresh block */
    (void)dd;
    double *src = shmem_malloc(N * sizeof(double)), *dst = shmem_malloc(ITERS * N * sizeof(double));
    if (src == NULL || dst == NULL)
        FAIL("shmem_malloc for the chain failed");
    for (int i = 0; i < N; i++)
        x[i] = i + 1;
    shmem_barrier_all();
    unsigned long mod = 1000003;
    long want[N];
    for (int i = 0; i < N; i++)
        want[i] = i + 1;
    for (int it = 0; it < ITERS; it++) {
        if (shmem_long_sum_reduce(SHMEM_TEAM_WORLD, x, x, N) != 0)
            FAIL("chain: shmem_long_sum_reduce returned nonzero");
        for (int i = 0; i < N; i++) {
            want[i] = (long)((unsigned long)(want[i] * npes) % mod);
            if (x[i] != want[i] * 1 && (x[i] % (long)mod) != want[i])
                FAIL("chain iteration %d: element %d is %ld, expected %ld", it, i, x[i], want[i]);
            x[i] %= (long)mod;  /* keep it bounded; every PE does the same */
        }
        for (int i = 0; i < N; i++)
            src[i] = me + it * 0.5 + i;
        if (shmem_double_max_reduce(SHMEM_TEAM_WORLD, dst + it * N, src, N) != 0)
            FAIL("chain: shmem_double_max_reduce returned nonzero");
        for (int i = 0; i < N; i++)
            if (dst[it * N + i] != (npes - 1) + it * 0.5 + i)
                FAIL("chain iteration %d: max element %d is %g, expected %g", it, i,
                     dst[it * N + i], (npes - 1) + it * 0.5 + i);
    }
    shmem_barrier_all();
    shmem_free(src);
    shmem_free(dst);
    return 2 * ITERS;
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    buf_a = shmem_malloc(BUF_BYTES);
    buf_b = shmem_malloc(BUF_BYTES);
    if (buf_a == NULL || buf_b == NULL)
        FAIL("shmem_malloc of the scratch buffers failed");
    if (strcmp(what, "perf") == 0) {
        for (size_t n = 1; n <= 1024; n *= 1024) {
            int iters = 2000;
            for (int it = 0; it < 100; it++)  /* warm-up */
                shmem_long_sum_reduce(SHMEM_TEAM_WORLD, buf_b, buf_a, n);
            shmem_barrier_all();
            struct timespec t0, t1;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            for (int it = 0; it < iters; it++)
                shmem_long_sum_reduce(SHMEM_TEAM_WORLD, buf_b, buf_a, n);
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / iters;
            if (me == 0)
                printf("perf: shmem_long_sum_reduce of %zu on %d PEs: %.2f us\n", n, npes, us);
        }
        shmem_finalize();
        return 0;
    }
    if (strcmp(what, "badteam") == 0) {
        shmem_long_sum_reduce(SHMEM_TEAM_INVALID, buf_b, buf_a, 4);
        printf("PE %d: the bad call returned\n", me);
        shmem_finalize();
        return 0;
    }
    if (strcmp(what, "badcount") == 0 || strcmp(what, "badaddr") == 0) {
        static long psync_bad[SHMEM_REDUCE_SYNC_SIZE], pwrk_bad[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
        long priv[4];
        for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
            psync_bad[i] = SHMEM_SYNC_VALUE;
        shmem_barrier_all();
        if (what[3] == 'c')
            shmem_long_sum_to_all(buf_b, buf_a, -1, 0, 0, npes, pwrk_bad, psync_bad);
        else
            shmem_long_sum_reduce(SHMEM_TEAM_WORLD, priv, buf_a, 4);  /* dest not symmetric */
        printf("PE %d: the bad call returned\n", me);
        shmem_finalize();
        return 0;
    }
    cur_team = SHMEM_TEAM_WORLD;
    cur_set = world_set();
    int all = strcmp(what, "all") == 0, n = 0;
    if (all || strcmp(what, "team") == 0)
        n += run_team();
    if (all || strcmp(what, "scan") == 0)
        n += run_scan();
    if (all || strcmp(what, "subteam") == 0)
        n += run_subteam();
    if (all || strcmp(what, "toall") == 0)
        n += run_toall();
    if (all || strcmp(what, "large") == 0)
        n += run_large();
    if (all || strcmp(what, "chain") == 0)
        n += run_chain();
    shmem_barrier_all();
    if (me == 0)
        printf("ok: shmem reductions %s: %d cases on %d PEs\n", what, n, npes);
    shmem_free(buf_a);
    shmem_free(buf_b);
    shmem_finalize();
    return 0;
}
