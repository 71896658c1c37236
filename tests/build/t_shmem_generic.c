/*
 * Every type-generic name of shmem.h with every type it takes, with and
 * without a context: compiled as C11 and as C++ (check_shmem_header.sh),
 * whose objects must then call the same typed functions.  Never run.
 */
#define SHMEMX_NO_DEPRECATION_WARNINGS
#include <shmem.h>

/* The types of each generic name, written here apart from the header's
 * tables (whose expansion cannot contain the generic names, which expand
 * the same tables). */
#define STD_INT(X, A) X(int, int, A) X(long, long, A) X(longlong, long long, A)          \
    X(uint, unsigned int, A) X(ulong, unsigned long, A) X(ulonglong, unsigned long long, A)
#define RMA_T(X, A) X(float, float, A) X(double, double, A) X(longdouble, long double, A)  \
    X(char, char, A) X(schar, signed char, A) X(short, short, A) X(uchar, unsigned char, A) \
    X(ushort, unsigned short, A) STD_INT(X, A)
#define AMO_EXT_T(X, A) X(float, float, A) X(double, double, A) STD_INT(X, A)
#define AMO_BIT_T(X, A) X(uint, unsigned int, A) X(ulong, unsigned long, A)              \
    X(ulonglong, unsigned long long, A) X(int, int, A) X(long, long, A)
#define P2P_T(X, A) X(short, short, A) X(ushort, unsigned short, A) STD_INT(X, A)
#define RED_BIT_T(X, A) X(uchar, unsigned char, A) X(ushort, unsigned short, A)          \
    X(uint, unsigned int, A) X(ulong, unsigned long, A) X(ulonglong, unsigned long long, A)
#define RED_MINMAX_T(X, A) RED_BIT_T(X, A) X(char, char, A) X(schar, signed char, A)     \
    X(short, short, A) X(int, int, A) X(long, long, A) X(longlong, long long, A)        \
    X(float, float, A) X(double, double, A) X(longdouble, long double, A)
#define RED_SUMPROD_T(X, A) RED_MINMAX_T(X, A) X(complexf, SHMEMX_COMPLEXF, A)           \
    X(complexd, SHMEMX_COMPLEXD, A)
#define OLD_T(X, A) X(int, int, A) X(long, long, A) X(longlong, long long, A)
#define OLD_EXT_T(X, A) OLD_T(X, A) X(float, float, A) X(double, double, A)
#define OLD_WAIT_T(X, A) X(short, short, A) OLD_T(X, A)

#define USE_RMA(N, T, _)                                                               \
    void use_rma_##N(shmem_ctx_t c)                                                    \
    {                                                                                  \
        static T d[8], s[8];                                                           \
        static uint64_t sig;                                                           \
        T v = (T)1;                                                                    \
        shmem_put(d, s, 1, 0); shmem_put(c, d, s, 1, 0);                               \
        shmem_get(d, s, 1, 0); shmem_get(c, d, s, 1, 0);                               \
        shmem_put_nbi(d, s, 1, 0); shmem_put_nbi(c, d, s, 1, 0);                       \
        shmem_get_nbi(d, s, 1, 0); shmem_get_nbi(c, d, s, 1, 0);                       \
        shmem_iput(d, s, 2, 2, 2, 0); shmem_iput(c, d, s, 2, 2, 2, 0);                 \
        shmem_iget(d, s, 2, 2, 2, 0); shmem_iget(c, d, s, 2, 2, 2, 0);                 \
        shmem_ibput(d, s, 4, 4, 2, 2, 0); shmem_ibput(c, d, s, 4, 4, 2, 2, 0);         \
        shmem_ibget(d, s, 4, 4, 2, 2, 0); shmem_ibget(c, d, s, 4, 4, 2, 2, 0);         \
        shmem_p(d, v, 0); shmem_p(c, d, v, 0);                                         \
        v = shmem_g(s, 0); v = shmem_g(c, s, 0);                                       \
        v = shmem_g((const T *)s, 0);                                                  \
        shmem_put_signal(d, s, 1, &sig, 1, SHMEM_SIGNAL_ADD, 0);                       \
        shmem_put_signal(c, d, s, 1, &sig, 1, SHMEM_SIGNAL_SET, 0);                    \
        shmem_put_signal_nbi(d, s, 1, &sig, 1, SHMEM_SIGNAL_ADD, 0);                   \
        shmem_put_signal_nbi(c, d, s, 1, &sig, 1, SHMEM_SIGNAL_SET, 0);                \
        shmem_broadcast(SHMEM_TEAM_WORLD, d, s, 1, 0);                                 \
        shmem_collect(SHMEM_TEAM_WORLD, d, s, 1);                                      \
        shmem_fcollect(SHMEM_TEAM_WORLD, d, s, 1);                                     \
        shmem_alltoall(SHMEM_TEAM_WORLD, d, s, 1);                                     \
        shmem_alltoalls(SHMEM_TEAM_WORLD, d, s, 1, 1, 1);                              \
        (void)v;                                                                       \
    }
RMA_T(USE_RMA, ~)

#define USE_AMO_EXT(N, T, _)                                                           \
    void use_amo_ext_##N(shmem_ctx_t c)                                                \
    {                                                                                  \
        static T d, f;                                                                 \
        T v = (T)1;                                                                    \
        v = shmem_atomic_fetch(&d, 0); v = shmem_atomic_fetch(c, &d, 0);               \
        shmem_atomic_set(&d, v, 0); shmem_atomic_set(c, &d, v, 0);                     \
        v = shmem_atomic_swap(&d, v, 0); v = shmem_atomic_swap(c, &d, v, 0);           \
        shmem_atomic_fetch_nbi(&f, &d, 0); shmem_atomic_fetch_nbi(c, &f, &d, 0);       \
        shmem_atomic_swap_nbi(&f, &d, v, 0); shmem_atomic_swap_nbi(c, &f, &d, v, 0);   \
    }
AMO_EXT_T(USE_AMO_EXT, ~)

#define USE_AMO_STD(N, T, _)                                                           \
    void use_amo_std_##N(shmem_ctx_t c)                                                \
    {                                                                                  \
        static T d, f;                                                                 \
        T v = (T)1;                                                                    \
        v = shmem_atomic_compare_swap(&d, v, v, 0);                                    \
        v = shmem_atomic_compare_swap(c, &d, v, v, 0);                                 \
        v = shmem_atomic_fetch_inc(&d, 0); v = shmem_atomic_fetch_inc(c, &d, 0);       \
        shmem_atomic_inc(&d, 0); shmem_atomic_inc(c, &d, 0);                           \
        v = shmem_atomic_fetch_add(&d, v, 0); v = shmem_atomic_fetch_add(c, &d, v, 0); \
        shmem_atomic_add(&d, v, 0); shmem_atomic_add(c, &d, v, 0);                     \
        shmem_atomic_compare_swap_nbi(&f, &d, v, v, 0);                                \
        shmem_atomic_compare_swap_nbi(c, &f, &d, v, v, 0);                             \
        shmem_atomic_fetch_inc_nbi(&f, &d, 0); shmem_atomic_fetch_inc_nbi(c, &f, &d, 0); \
        shmem_atomic_fetch_add_nbi(&f, &d, v, 0);                                      \
        shmem_atomic_fetch_add_nbi(c, &f, &d, v, 0);                                   \
    }
STD_INT(USE_AMO_STD, ~)

#define USE_AMO_BIT(N, T, _)                                                           \
    void use_amo_bit_##N(shmem_ctx_t c)                                          \
    {                                                                                  \
        static T d, f;                                                                 \
        T v = (T)1;                                                                    \
        v = shmem_atomic_fetch_and(&d, v, 0); v = shmem_atomic_fetch_and(c, &d, v, 0); \
        v = shmem_atomic_fetch_or(&d, v, 0); v = shmem_atomic_fetch_or(c, &d, v, 0);   \
        v = shmem_atomic_fetch_xor(&d, v, 0); v = shmem_atomic_fetch_xor(c, &d, v, 0); \
        shmem_atomic_and(&d, v, 0); shmem_atomic_and(c, &d, v, 0);                     \
        shmem_atomic_or(&d, v, 0); shmem_atomic_or(c, &d, v, 0);                       \
        shmem_atomic_xor(&d, v, 0); shmem_atomic_xor(c, &d, v, 0);                     \
        shmem_atomic_fetch_and_nbi(&f, &d, v, 0);                                      \
        shmem_atomic_fetch_and_nbi(c, &f, &d, v, 0);                                   \
        shmem_atomic_fetch_or_nbi(&f, &d, v, 0); shmem_atomic_fetch_or_nbi(c, &f, &d, v, 0); \
        shmem_atomic_fetch_xor_nbi(&f, &d, v, 0);                                      \
        shmem_atomic_fetch_xor_nbi(c, &f, &d, v, 0);                                   \
    }
AMO_BIT_T(USE_AMO_BIT, ~)

#define USE_P2P(N, T, _)                                                               \
    void use_p2p_##N(void)                                                             \
    {                                                                                  \
        static T iv[4], cv[4];                                                         \
        static int st[4];                                                              \
        size_t ix[4], r = 0;                                                           \
        int t = 0;                                                                     \
        shmem_wait_until(iv, SHMEM_CMP_EQ, (T)1);                                      \
        shmem_wait_until_all(iv, 4, st, SHMEM_CMP_EQ, (T)1);                           \
        r += shmem_wait_until_any(iv, 4, st, SHMEM_CMP_EQ, (T)1);                      \
        r += shmem_wait_until_some(iv, 4, ix, st, SHMEM_CMP_EQ, (T)1);                 \
        shmem_wait_until_all_vector(iv, 4, st, SHMEM_CMP_EQ, cv);                      \
        r += shmem_wait_until_any_vector(iv, 4, st, SHMEM_CMP_EQ, cv);                 \
        r += shmem_wait_until_some_vector(iv, 4, ix, st, SHMEM_CMP_EQ, cv);            \
        t += shmem_test(iv, SHMEM_CMP_EQ, (T)1);                                       \
        t += shmem_test_all(iv, 4, st, SHMEM_CMP_EQ, (T)1);                            \
        r += shmem_test_any(iv, 4, st, SHMEM_CMP_EQ, (T)1);                            \
        r += shmem_test_some(iv, 4, ix, st, SHMEM_CMP_EQ, (T)1);                       \
        t += shmem_test_all_vector(iv, 4, st, SHMEM_CMP_EQ, cv);                       \
        r += shmem_test_any_vector(iv, 4, st, SHMEM_CMP_EQ, cv);                       \
        r += shmem_test_some_vector(iv, 4, ix, st, SHMEM_CMP_EQ, cv);                  \
        (void)r; (void)t;                                                              \
    }
P2P_T(USE_P2P, ~)

#define USE_RED(N, T, OP)                                                              \
    void use_red_##OP##_##N(void)                                                      \
    {                                                                                  \
        static T d[2], s[2];                                                           \
        shmem_##OP##_reduce(SHMEM_TEAM_WORLD, d, s, 2);                                \
        shmem_##OP##_inscan(SHMEM_TEAM_WORLD, d, s, 2);                                \
        shmem_##OP##_exscan(SHMEM_TEAM_WORLD, d, s, 2);                                \
    }
RED_BIT_T(USE_RED, and)
RED_BIT_T(USE_RED, or)
RED_BIT_T(USE_RED, xor)
RED_MINMAX_T(USE_RED, min)
RED_MINMAX_T(USE_RED, max)
RED_SUMPROD_T(USE_RED, sum)
RED_SUMPROD_T(USE_RED, prod)

#define USE_OLD(N, T, _)                                                               \
    void use_old_##N(void)                                                             \
    {                                                                                  \
        static T d;                                                                    \
        T v = (T)1;                                                                    \
        v = shmem_cswap(&d, v, v, 0); v = shmem_finc(&d, 0); shmem_inc(&d, 0);         \
        v = shmem_fadd(&d, v, 0); shmem_add(&d, v, 0);                                 \
        (void)v;                                                                       \
    }
OLD_T(USE_OLD, ~)
#define USE_OLD_EXT(N, T, _)                                                           \
    void use_old_ext_##N(void)                                                         \
    {                                                                                  \
        static T d;                                                                    \
        T v = shmem_fetch(&d, 0);                                                      \
        shmem_set(&d, v, 0); v = shmem_swap(&d, v, 0);                                 \
        (void)v;                                                                       \
    }
OLD_EXT_T(USE_OLD_EXT, ~)
#define USE_OLD_WAIT(N, T, _)                                                          \
    void use_old_wait_##N(void) { static T d; shmem_wait(&d, (T)0); }
OLD_WAIT_T(USE_OLD_WAIT, ~)

/* A pointer to a fixed-width type selects the function of its standard type. */
void use_fixed(void)
{
    static int64_t d, s;
    static uint32_t u;
    shmem_put(&d, &s, 1, 0);
    shmem_atomic_add(&u, 1u, 0);
    shmem_atomic_fetch_xor(SHMEM_CTX_DEFAULT, &d, (int64_t)1, 0);
}
