/*
 * t_sh_more, second part: context get/put (blocking, nbi, with signal) and
 * the atomics the other tests leave out, from every PE on one word, in four
 * forms a round: default context, `ctx`, and their nbi fetches read after
 * quiet.  Every PE owns one bit of the word, so each fetched value says
 * exactly what that PE's previous operation left, whatever the others do.
 */
#include <shmem.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "t_sh_more.h"

#define ROUNDS 40

void test_ctx_rma(shmem_ctx_t ctx)
{
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    unsigned char *buf = shmem_calloc(512, 1), src[512], got[512];
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    CHECK(buf && sig, "calloc");
    for (int k = 0; k < 512; k++)
        src[k] = (unsigned char)(me * 31 + k);
    shmem_barrier_all();
    shmem_ctx_putmem_nbi(ctx, buf, src, 200, next);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    for (int k = 0; k < 200; k++)
        CHECK(buf[k] == (unsigned char)(prev * 31 + k), "ctx_putmem_nbi byte %d", k);
    memset(got, 0, sizeof(got));
    shmem_ctx_getmem(ctx, got, buf, 100, next);
    shmem_ctx_getmem_nbi(ctx, got + 100, buf + 100, 100, next);
    shmem_ctx_quiet(ctx);
    for (int k = 0; k < 200; k++)
        CHECK(got[k] == (unsigned char)(me * 31 + k), "ctx_getmem(_nbi) byte %d", k);
    shmem_barrier_all();
    /* Five slices, each with ADD 1; then one with SET 77. */
    for (int s = 0; s < 5; s++)
        shmem_ctx_putmem_signal_nbi(ctx, buf + 200 + 40 * s, src + 10 * s, 40, sig, 1,
                                    SHMEM_SIGNAL_ADD, next);
    CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 5) == 5, "signal after 5 adds");
    for (int s = 0; s < 5; s++)
        for (int k = 0; k < 40; k++)
            CHECK(buf[200 + 40 * s + k] == (unsigned char)(prev * 31 + 10 * s + k),
                  "putmem_signal_nbi slice %d byte %d", s, k);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    shmem_ctx_putmem_signal_nbi(ctx, buf + 420, src + 7, 80, sig, 77, SHMEM_SIGNAL_SET, next);
    CHECK(shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 77) == 77, "signal set");
    for (int k = 0; k < 80; k++)
        CHECK(buf[420 + k] == (unsigned char)(prev * 31 + 7 + k), "signal set byte %d", k);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    shmem_free(sig);
    shmem_free(buf);
}

/* The old value of OP on `dest` at `pe`, in form `mode` of four. */
#define AMO_F(N, T, OP, mode, ctx, dest, v, pe)                                        \
    ({                                                                                 \
        T o_ = 0;                                                                      \
        switch (mode) {                                                                \
        case 0: o_ = shmem_##N##_atomic_fetch_##OP(dest, v, pe); break;                \
        case 1: o_ = shmem_ctx_##N##_atomic_fetch_##OP(ctx, dest, v, pe); break;       \
        case 2: shmem_##N##_atomic_fetch_##OP##_nbi(&o_, dest, v, pe); shmem_quiet(); break; \
        default:                                                                       \
            shmem_ctx_##N##_atomic_fetch_##OP##_nbi(ctx, &o_, dest, v, pe);            \
            shmem_ctx_quiet(ctx);                                                      \
        }                                                                              \
        o_;                                                                            \
    })
/* A non-fetching OP, completed before the next one. */
#define AMO_N(N, OP, mode, ctx, dest, v, pe)                                           \
    do {                                                                               \
        if ((mode) % 2) {                                                              \
            shmem_ctx_##N##_atomic_##OP(ctx, dest, v, pe);                             \
            shmem_ctx_quiet(ctx);                                                      \
        } else {                                                                       \
            shmem_##N##_atomic_##OP(dest, v, pe);                                      \
            shmem_quiet();                                                             \
        }                                                                              \
    } while (0)

#define TEST_BITS(N, T, _)                                                             \
    static void test_bits_##N(shmem_ctx_t ctx)                                         \
    {                                                                                  \
        const T hi = (T)((uint64_t)0xa5 << (8 * sizeof(T) - 8)), b = (T)((uint64_t)1 << me); \
        T mask = 0;                                                                    \
        for (int p = 0; p < npes; p++)                                                 \
            mask |= (T)((uint64_t)1 << p);                                             \
        T *w = shmem_malloc(sizeof(T));                                                \
        CHECK(w, "malloc");                                                            \
        *w = hi;                                                                       \
        shmem_barrier_all();                                                           \
        for (int r = 0; r < ROUNDS; r++) {                                             \
            int pe = r % npes, m = r % 4;                                              \
            T o = AMO_F(N, T, or, m, ctx, w, b, pe);                                   \
            CHECK(!(o & b) && (o & hi) == hi, #N " fetch_or %d: %#llx", r, (unsigned long long)o); \
            o = AMO_F(N, T, and, (m + 1) % 4, ctx, w, (T)~b, pe);                      \
            CHECK((o & b) && (o & hi) == hi, #N " fetch_and %d: %#llx", r, (unsigned long long)o); \
            o = AMO_F(N, T, xor, (m + 2) % 4, ctx, w, b, pe);                          \
            CHECK(!(o & b), #N " fetch_xor %d: %#llx", r, (unsigned long long)o);      \
            o = AMO_F(N, T, xor, (m + 3) % 4, ctx, w, b, pe);                          \
            CHECK(o & b, #N " second fetch_xor %d: %#llx", r, (unsigned long long)o);  \
            AMO_N(N, or, m, ctx, w, b, pe);                                            \
            o = AMO_F(N, T, xor, m, ctx, w, b, pe);                                    \
            CHECK(o & b, #N " or then fetch_xor %d: %#llx", r, (unsigned long long)o); \
            AMO_N(N, xor, m + 1, ctx, w, b, pe);                                       \
            o = AMO_F(N, T, and, (m + 1) % 4, ctx, w, (T)~b, pe);                      \
            CHECK(o & b, #N " xor then fetch_and %d: %#llx", r, (unsigned long long)o); \
            AMO_N(N, xor, m, ctx, w, b, pe);                                           \
            AMO_N(N, and, m + 1, ctx, w, (T)~b, pe);                                   \
        }                                                                              \
        for (int pe = 0; pe < npes; pe++)                                              \
            AMO_N(N, or, pe, ctx, w, b, pe);                                           \
        shmem_barrier_all();                                                           \
        CHECK(*w == (T)(hi | mask), #N " word %#llx, want %#llx", (unsigned long long)*w, \
              (unsigned long long)(T)(hi | mask));                                     \
        shmem_barrier_all();                                                           \
        shmem_free(w);                                                                 \
    }
#define BIT_TYPES(X) X(uint, unsigned int, ~) X(ulong, unsigned long, ~)               \
    X(int32, int32_t, ~) X(int64, int64_t, ~) X(uint32, uint32_t, ~) X(uint64, uint64_t, ~)
BIT_TYPES(TEST_BITS)

/* inc and fetch_inc on PE 0's counter, set of one slot a PE and of one shared
 * word, compare-swap increments of `step` on the last PE's counter. */
#define TEST_COUNT(N, T, step)                                                         \
    static void test_count_##N(shmem_ctx_t ctx)                                        \
    {                                                                                  \
        T *c = shmem_calloc(3 + npes, sizeof(T)), last = 0;                            \
        CHECK(c, "calloc");                                                            \
        shmem_barrier_all();                                                           \
        const T total = (T)(2 * ROUNDS * npes);                                        \
        for (int r = 0; r < ROUNDS; r++) {                                             \
            T o = 0;                                                                   \
            switch (r % 4) {                                                           \
            case 0: o = shmem_##N##_atomic_fetch_inc(c, 0); break;                     \
            case 1: o = shmem_ctx_##N##_atomic_fetch_inc(ctx, c, 0); break;            \
            case 2: shmem_##N##_atomic_fetch_inc_nbi(&o, c, 0); shmem_quiet(); break;  \
            default: shmem_ctx_##N##_atomic_fetch_inc_nbi(ctx, &o, c, 0); shmem_ctx_quiet(ctx); \
            }                                                                          \
            CHECK(o < total && (r == 0 || o > last), #N " fetch_inc %d: %lld after %lld", r, \
                  (long long)o, (long long)last);                                      \
            last = o;                                                                  \
            if (r % 2) {                                                               \
                shmem_ctx_##N##_atomic_inc(ctx, c, 0);                                 \
                shmem_ctx_quiet(ctx);                                                  \
            } else {                                                                   \
                shmem_##N##_atomic_inc(c, 0);                                          \
                shmem_quiet();                                                         \
            }                                                                          \
            T old = shmem_##N##_atomic_fetch(&c[1], npes - 1), seen;                   \
            for (int tries = 0;; tries++) {                                            \
                if (r % 2)                                                             \
                    shmem_ctx_##N##_atomic_compare_swap_nbi(ctx, &seen, &c[1], old,    \
                                                            (T)(old + (step)), npes - 1); \
                else                                                                   \
                    seen = shmem_##N##_atomic_compare_swap(&c[1], old, (T)(old + (step)), \
                                                           npes - 1);                 \
                if (r % 2)                                                             \
                    shmem_ctx_quiet(ctx);                                              \
                if (seen == old)                                                       \
                    break;                                                             \
                CHECK(tries < 1000000, #N " compare_swap never won");                  \
                old = seen;                                                            \
            }                                                                          \
        }                                                                              \
        shmem_##N##_atomic_set(&c[3 + me], (T)(me * 7 + 1), 0);                        \
        shmem_ctx_##N##_atomic_set(ctx, &c[2], (T)(me + 100), 0);                      \
        shmem_ctx_quiet(ctx);                                                          \
        shmem_barrier_all();                                                           \
        if (me == 0) {                                                                 \
            CHECK(c[0] == total, #N " counter %lld, want %lld", (long long)c[0],       \
                  (long long)total);                                                   \
            CHECK(c[2] >= (T)100 && c[2] < (T)(100 + npes), #N " set %lld", (long long)c[2]); \
            for (int p = 0; p < npes; p++)                                             \
                CHECK(c[3 + p] == (T)(p * 7 + 1), #N " set slot %d: %lld", p, (long long)c[3 + p]); \
        }                                                                              \
        if (me == npes - 1)                                                            \
            CHECK(c[1] == (T)(ROUNDS * npes * (step)), #N " compare_swap sum %lld, want %lld", \
                  (long long)c[1], (long long)(ROUNDS * npes * (step)));                \
        shmem_barrier_all();                                                           \
        shmem_free(c);                                                                 \
    }
#define COUNT_TYPES(X) X(size, size_t, 5) X(ptrdiff, ptrdiff_t, -3) X(uint64, uint64_t, 1) \
    X(int32, int32_t, -2) X(ulonglong, unsigned long long, 3)
COUNT_TYPES(TEST_COUNT)

void test_amo(shmem_ctx_t ctx)
{
    CHECK(npes <= 24, "one bit a PE needs at most 24 PEs, not %d", npes);
#define RUN_(N, T, _) test_bits_##N(ctx);
    BIT_TYPES(RUN_)
#undef RUN_
#define RUN_(N, T, _) test_count_##N(ctx);
    COUNT_TYPES(RUN_)
#undef RUN_
}
