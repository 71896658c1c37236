/*
 * The type-generic names of shmem.h (C11 _Generic, C++ overloads): shmem.h includes it where it
 * belongs; programs include <shmem.h>, never this part alone.
 */
#ifndef SHMEM_GENERIC_H
#define SHMEM_GENERIC_H

#ifndef SHMEM_H
#error "include <shmem.h>, not <shmem_generic.h>"
#endif

/* ---- type-generic names ---------------------------------------------------------------- */
/* The first and second arguments of a call (the trailing 0 keeps `...` non-empty). */
#define SHMEMX_A1_(a, ...) a
#define SHMEMX_A2_(a, b, ...) b

#if defined(__cplusplus)

/* One overload a type and a context form, from the same tables. */
#define SHMEMX_CXX_RMA_(N, T, OP)                                                       \
    inline void shmem_##OP(T *d, const T *s, size_t n, int pe) { shmem_##N##_##OP(d, s, n, pe); } \
    inline void shmem_##OP(shmem_ctx_t c, T *d, const T *s, size_t n, int pe)          \
    { shmem_ctx_##N##_##OP(c, d, s, n, pe); }
#define SHMEMX_CXX_IRMA_(N, T, OP)                                                      \
    inline void shmem_##OP(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) \
    { shmem_##N##_##OP(d, s, dst, sst, n, pe); }                                       \
    inline void shmem_##OP(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, \
                           size_t n, int pe)                                           \
    { shmem_ctx_##N##_##OP(c, d, s, dst, sst, n, pe); }
#define SHMEMX_CXX_IBRMA_(N, T, OP)                                                     \
    inline void shmem_##OP(T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, size_t b,   \
                           size_t nb, int pe)                                          \
    { shmem_##N##_##OP(d, s, dst, sst, b, nb, pe); }                                   \
    inline void shmem_##OP(shmem_ctx_t c, T *d, const T *s, ptrdiff_t dst, ptrdiff_t sst, \
                           size_t b, size_t nb, int pe)                                \
    { shmem_ctx_##N##_##OP(c, d, s, dst, sst, b, nb, pe); }
#define SHMEMX_CXX_P_(N, T, _)                                                          \
    inline void shmem_p(T *d, T v, int pe) { shmem_##N##_p(d, v, pe); }                \
    inline void shmem_p(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_p(c, d, v, pe); } \
    inline T shmem_g(const T *s, int pe) { return shmem_##N##_g(s, pe); }              \
    inline T shmem_g(shmem_ctx_t c, const T *s, int pe) { return shmem_ctx_##N##_g(c, s, pe); }
#define SHMEMX_CXX_PUTSIG_(N, T, OP)                                                    \
    inline void shmem_##OP(T *d, const T *s, size_t n, uint64_t *sa, uint64_t sv, int so, \
                           int pe)                                                     \
    { shmem_##N##_##OP(d, s, n, sa, sv, so, pe); }                                     \
    inline void shmem_##OP(shmem_ctx_t c, T *d, const T *s, size_t n, uint64_t *sa,    \
                           uint64_t sv, int so, int pe)                                \
    { shmem_ctx_##N##_##OP(c, d, s, n, sa, sv, so, pe); }
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_RMA_, put)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_RMA_, get)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_RMA_, put_nbi)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_RMA_, get_nbi)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_IRMA_, iput)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_IRMA_, iget)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_IBRMA_, ibput)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_IBRMA_, ibget)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_P_, ~)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_PUTSIG_, put_signal)
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_PUTSIG_, put_signal_nbi)

#define SHMEMX_CXX_AMO_FETCH_(N, T, OP)                                                 \
    inline T shmem_##OP(const T *s, int pe) { return shmem_##N##_##OP(s, pe); }        \
    inline T shmem_##OP(shmem_ctx_t c, const T *s, int pe) { return shmem_ctx_##N##_##OP(c, s, pe); }
#define SHMEMX_CXX_AMO_SET_(N, T, OP)                                                   \
    inline void shmem_##OP(T *d, T v, int pe) { shmem_##N##_##OP(d, v, pe); }          \
    inline void shmem_##OP(shmem_ctx_t c, T *d, T v, int pe) { shmem_ctx_##N##_##OP(c, d, v, pe); }
#define SHMEMX_CXX_AMO_FOP_(N, T, OP)                                                   \
    inline T shmem_##OP(T *d, T v, int pe) { return shmem_##N##_##OP(d, v, pe); }      \
    inline T shmem_##OP(shmem_ctx_t c, T *d, T v, int pe) { return shmem_ctx_##N##_##OP(c, d, v, pe); }
#define SHMEMX_CXX_AMO_CSWAP_(N, T, OP)                                                 \
    inline T shmem_##OP(T *d, T k, T v, int pe) { return shmem_##N##_##OP(d, k, v, pe); } \
    inline T shmem_##OP(shmem_ctx_t c, T *d, T k, T v, int pe)                         \
    { return shmem_ctx_##N##_##OP(c, d, k, v, pe); }
#define SHMEMX_CXX_AMO_FINC_(N, T, OP)                                                  \
    inline T shmem_##OP(T *d, int pe) { return shmem_##N##_##OP(d, pe); }              \
    inline T shmem_##OP(shmem_ctx_t c, T *d, int pe) { return shmem_ctx_##N##_##OP(c, d, pe); }
#define SHMEMX_CXX_AMO_INC_(N, T, OP)                                                   \
    inline void shmem_##OP(T *d, int pe) { shmem_##N##_##OP(d, pe); }                  \
    inline void shmem_##OP(shmem_ctx_t c, T *d, int pe) { shmem_ctx_##N##_##OP(c, d, pe); }
#define SHMEMX_CXX_AMO_FETCH_NBI_(N, T, OP)                                             \
    inline void shmem_##OP(T *f, const T *s, int pe) { shmem_##N##_##OP(f, s, pe); }   \
    inline void shmem_##OP(shmem_ctx_t c, T *f, const T *s, int pe)                    \
    { shmem_ctx_##N##_##OP(c, f, s, pe); }
#define SHMEMX_CXX_AMO_FOP_NBI_(N, T, OP)                                               \
    inline void shmem_##OP(T *f, T *d, T v, int pe) { shmem_##N##_##OP(f, d, v, pe); } \
    inline void shmem_##OP(shmem_ctx_t c, T *f, T *d, T v, int pe)                     \
    { shmem_ctx_##N##_##OP(c, f, d, v, pe); }
#define SHMEMX_CXX_AMO_CSWAP_NBI_(N, T, OP)                                             \
    inline void shmem_##OP(T *f, T *d, T k, T v, int pe) { shmem_##N##_##OP(f, d, k, v, pe); } \
    inline void shmem_##OP(shmem_ctx_t c, T *f, T *d, T k, T v, int pe)                \
    { shmem_ctx_##N##_##OP(c, f, d, k, v, pe); }
#define SHMEMX_CXX_AMO_FINC_NBI_(N, T, OP)                                              \
    inline void shmem_##OP(T *f, T *d, int pe) { shmem_##N##_##OP(f, d, pe); }         \
    inline void shmem_##OP(shmem_ctx_t c, T *f, T *d, int pe) { shmem_ctx_##N##_##OP(c, f, d, pe); }
#define SHMEMX_CXX_AMO_(SHAPE, TAB, OP, GTAB) GTAB(SHMEMX_CXX_AMO_##SHAPE##_, OP)
SHMEM_X_AMO_OPS(SHMEMX_CXX_AMO_)

#define SHMEMX_CXX_P2P_(N, T, _)                                                        \
    inline void shmem_wait_until(T *v, int c, T x) { shmem_##N##_wait_until(v, c, x); } \
    inline void shmem_wait_until_all(T *v, size_t n, const int *st, int c, T x)        \
    { shmem_##N##_wait_until_all(v, n, st, c, x); }                                    \
    inline size_t shmem_wait_until_any(T *v, size_t n, const int *st, int c, T x)      \
    { return shmem_##N##_wait_until_any(v, n, st, c, x); }                             \
    inline size_t shmem_wait_until_some(T *v, size_t n, size_t *ix, const int *st, int c, T x) \
    { return shmem_##N##_wait_until_some(v, n, ix, st, c, x); }                        \
    inline void shmem_wait_until_all_vector(T *v, size_t n, const int *st, int c, T *x) \
    { shmem_##N##_wait_until_all_vector(v, n, st, c, x); }                             \
    inline size_t shmem_wait_until_any_vector(T *v, size_t n, const int *st, int c, T *x) \
    { return shmem_##N##_wait_until_any_vector(v, n, st, c, x); }                      \
    inline size_t shmem_wait_until_some_vector(T *v, size_t n, size_t *ix, const int *st, \
                                               int c, T *x)                            \
    { return shmem_##N##_wait_until_some_vector(v, n, ix, st, c, x); }                 \
    inline int shmem_test(T *v, int c, T x) { return shmem_##N##_test(v, c, x); }      \
    inline int shmem_test_all(T *v, size_t n, const int *st, int c, T x)               \
    { return shmem_##N##_test_all(v, n, st, c, x); }                                   \
    inline size_t shmem_test_any(T *v, size_t n, const int *st, int c, T x)            \
    { return shmem_##N##_test_any(v, n, st, c, x); }                                   \
    inline size_t shmem_test_some(T *v, size_t n, size_t *ix, const int *st, int c, T x) \
    { return shmem_##N##_test_some(v, n, ix, st, c, x); }                              \
    inline int shmem_test_all_vector(T *v, size_t n, const int *st, int c, T *x)       \
    { return shmem_##N##_test_all_vector(v, n, st, c, x); }                            \
    inline size_t shmem_test_any_vector(T *v, size_t n, const int *st, int c, T *x)    \
    { return shmem_##N##_test_any_vector(v, n, st, c, x); }                            \
    inline size_t shmem_test_some_vector(T *v, size_t n, size_t *ix, const int *st, int c, \
                                         T *x)                                         \
    { return shmem_##N##_test_some_vector(v, n, ix, st, c, x); }
SHMEM_X_P2P_GTYPES(SHMEMX_CXX_P2P_, ~)

#define SHMEMX_CXX_COLL_(N, T, _)                                                       \
    inline int shmem_broadcast(shmem_team_t t, T *d, const T *s, size_t n, int root)   \
    { return shmem_##N##_broadcast(t, d, s, n, root); }                                \
    inline int shmem_collect(shmem_team_t t, T *d, const T *s, size_t n)               \
    { return shmem_##N##_collect(t, d, s, n); }                                        \
    inline int shmem_fcollect(shmem_team_t t, T *d, const T *s, size_t n)              \
    { return shmem_##N##_fcollect(t, d, s, n); }                                       \
    inline int shmem_alltoall(shmem_team_t t, T *d, const T *s, size_t n)              \
    { return shmem_##N##_alltoall(t, d, s, n); }                                       \
    inline int shmem_alltoalls(shmem_team_t t, T *d, const T *s, ptrdiff_t dst,        \
                               ptrdiff_t sst, size_t n)                                \
    { return shmem_##N##_alltoalls(t, d, s, dst, sst, n); }
SHMEM_X_RMA_STD_TYPES(SHMEMX_CXX_COLL_, ~)

#define SHMEMX_CXX_RED_T_(N, T, OP)                                                     \
    inline int shmem_##OP##_reduce(shmem_team_t t, T *d, const T *s, size_t n)         \
    { return shmem_##N##_##OP##_reduce(t, d, s, n); }
#define SHMEMX_CXX_SCAN_T_(N, T, _)                                                     \
    inline int shmem_sum_inscan(shmem_team_t t, T *d, const T *s, size_t n)            \
    { return shmem_##N##_sum_inscan(t, d, s, n); }                                     \
    inline int shmem_sum_exscan(shmem_team_t t, T *d, const T *s, size_t n)            \
    { return shmem_##N##_sum_exscan(t, d, s, n); }
SHMEM_X_RED_BIT_GTYPES(SHMEMX_CXX_RED_T_, and)
SHMEM_X_RED_BIT_GTYPES(SHMEMX_CXX_RED_T_, or)
SHMEM_X_RED_BIT_GTYPES(SHMEMX_CXX_RED_T_, xor)
SHMEM_X_RED_MINMAX_GTYPES(SHMEMX_CXX_RED_T_, min)
SHMEM_X_RED_MINMAX_GTYPES(SHMEMX_CXX_RED_T_, max)
SHMEM_X_RED_SUMPROD_GTYPES(SHMEMX_CXX_RED_T_, sum)
SHMEM_X_RED_SUMPROD_GTYPES(SHMEMX_CXX_RED_T_, prod)
SHMEM_X_RED_SUMPROD_GTYPES(SHMEMX_CXX_SCAN_T_, ~)

/* Deprecated generic names of 1.3 and 1.4. */
#define SHMEMX_CXX_OLD_T_(N, T, _)                                                      \
    SHMEMX_DEPRECATED inline T shmem_cswap(T *d, T k, T v, int pe) { return shmem_##N##_atomic_compare_swap(d, k, v, pe); } \
    SHMEMX_DEPRECATED inline T shmem_finc(T *d, int pe) { return shmem_##N##_atomic_fetch_inc(d, pe); } \
    SHMEMX_DEPRECATED inline void shmem_inc(T *d, int pe) { shmem_##N##_atomic_inc(d, pe); } \
    SHMEMX_DEPRECATED inline T shmem_fadd(T *d, T v, int pe) { return shmem_##N##_atomic_fetch_add(d, v, pe); } \
    SHMEMX_DEPRECATED inline void shmem_add(T *d, T v, int pe) { shmem_##N##_atomic_add(d, v, pe); }
#define SHMEMX_CXX_OLD_EXT_T_(N, T, _)                                                  \
    SHMEMX_DEPRECATED inline T shmem_fetch(const T *s, int pe) { return shmem_##N##_atomic_fetch(s, pe); } \
    SHMEMX_DEPRECATED inline void shmem_set(T *d, T v, int pe) { shmem_##N##_atomic_set(d, v, pe); }
#define SHMEMX_CXX_OLD_SWAP_T_(N, T, _)                                                 \
    SHMEMX_DEPRECATED inline T shmem_swap(T *d, T v, int pe) { return shmem_##N##_atomic_swap(d, v, pe); }
#define SHMEMX_CXX_OLD_WAIT_T_(N, T, _)                                                 \
    SHMEMX_DEPRECATED inline void shmem_wait(T *v, T x) { shmem_##N##_wait_until(v, SHMEM_CMP_NE, x); }
SHMEM_X_OLD_AMO_TYPES(SHMEMX_CXX_OLD_T_, ~)
SHMEM_X_OLD_AMO_EXT_TYPES(SHMEMX_CXX_OLD_EXT_T_, ~)
SHMEM_X_OLD_AMO_EXT_TYPES(SHMEMX_CXX_OLD_SWAP_T_, ~)
SHMEM_X_OLD_WAIT_TYPES(SHMEMX_CXX_OLD_WAIT_T_, ~)

#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L

/* Each association names T * and const T *; anything else selects the
 * never-defined error function. */
#define SHMEMX_GA_(N, T, PRE, OP) T *: shmem_##PRE##N##_##OP, const T *: shmem_##PRE##N##_##OP,
#define SHMEMX_GSEL_(TAB, P, PRE, OP)                                                   \
    _Generic((P), TAB(SHMEMX_GA_, PRE, OP) default: shmemx_generic_type_error_)
/* A call whose first argument may be a context. */
#define SHMEMX_GCTX_(TAB, OP, ...)                                                      \
    _Generic(SHMEMX_A1_(__VA_ARGS__, 0),                                               \
             shmem_ctx_t: SHMEMX_GSEL_(TAB, SHMEMX_A2_(__VA_ARGS__, 0), ctx_, OP),     \
             default: SHMEMX_GSEL_(TAB, SHMEMX_A1_(__VA_ARGS__, 0), , OP))(__VA_ARGS__)
/* Calls typed by their first, or (after a team) second, argument. */
#define SHMEMX_G1_(TAB, OP, ...) SHMEMX_GSEL_(TAB, SHMEMX_A1_(__VA_ARGS__, 0), , OP)(__VA_ARGS__)
#define SHMEMX_G2_(TAB, OP, ...) SHMEMX_GSEL_(TAB, SHMEMX_A2_(__VA_ARGS__, 0), , OP)(__VA_ARGS__)

#define shmem_put(...)            SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, put, __VA_ARGS__)
#define shmem_get(...)            SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, get, __VA_ARGS__)
#define shmem_put_nbi(...)        SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...)        SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, get_nbi, __VA_ARGS__)
#define shmem_iput(...)           SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, iput, __VA_ARGS__)
#define shmem_iget(...)           SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, iget, __VA_ARGS__)
#define shmem_ibput(...)          SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, ibput, __VA_ARGS__)
#define shmem_ibget(...)          SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, ibget, __VA_ARGS__)
#define shmem_p(...)              SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, p, __VA_ARGS__)
#define shmem_g(...)              SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, g, __VA_ARGS__)
#define shmem_put_signal(...)     SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) SHMEMX_GCTX_(SHMEM_X_RMA_STD_TYPES, put_signal_nbi, __VA_ARGS__)

#define shmem_atomic_fetch(...)        SHMEMX_GCTX_(SHMEM_X_AMO_EXT_GTYPES, atomic_fetch, __VA_ARGS__)
#define shmem_atomic_set(...)          SHMEMX_GCTX_(SHMEM_X_AMO_EXT_GTYPES, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...)         SHMEMX_GCTX_(SHMEM_X_AMO_EXT_GTYPES, atomic_swap, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...)    SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...)          SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...)    SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...)          SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_add, __VA_ARGS__)
#define shmem_atomic_fetch_and(...)    SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_and(...)          SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_or(...)     SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_or(...)           SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...)    SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_xor(...)          SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...)    SHMEMX_GCTX_(SHMEM_X_AMO_EXT_GTYPES, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...)     SHMEMX_GCTX_(SHMEM_X_AMO_EXT_GTYPES, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) \
    SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) SHMEMX_GCTX_(SHMEM_X_AMO_STD_GTYPES, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...)  SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) SHMEMX_GCTX_(SHMEM_X_AMO_BIT_GTYPES, atomic_fetch_xor_nbi, __VA_ARGS__)

#define shmem_wait_until(...)            SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until, __VA_ARGS__)
#define shmem_wait_until_all(...)        SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_all, __VA_ARGS__)
#define shmem_wait_until_any(...)        SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_any, __VA_ARGS__)
#define shmem_wait_until_some(...)       SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_some, __VA_ARGS__)
#define shmem_wait_until_all_vector(...) SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_all_vector, __VA_ARGS__)
#define shmem_wait_until_any_vector(...) SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_any_vector, __VA_ARGS__)
#define shmem_wait_until_some_vector(...) \
    SHMEMX_G1_(SHMEM_X_P2P_GTYPES, wait_until_some_vector, __VA_ARGS__)
#define shmem_test(...)             SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test, __VA_ARGS__)
#define shmem_test_all(...)         SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_all, __VA_ARGS__)
#define shmem_test_any(...)         SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_any, __VA_ARGS__)
#define shmem_test_some(...)        SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_some, __VA_ARGS__)
#define shmem_test_all_vector(...)  SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_all_vector, __VA_ARGS__)
#define shmem_test_any_vector(...)  SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_any_vector, __VA_ARGS__)
#define shmem_test_some_vector(...) SHMEMX_G1_(SHMEM_X_P2P_GTYPES, test_some_vector, __VA_ARGS__)

#define shmem_broadcast(...) SHMEMX_G2_(SHMEM_X_RMA_STD_TYPES, broadcast, __VA_ARGS__)
#define shmem_collect(...)   SHMEMX_G2_(SHMEM_X_RMA_STD_TYPES, collect, __VA_ARGS__)
#define shmem_fcollect(...)  SHMEMX_G2_(SHMEM_X_RMA_STD_TYPES, fcollect, __VA_ARGS__)
#define shmem_alltoall(...)  SHMEMX_G2_(SHMEM_X_RMA_STD_TYPES, alltoall, __VA_ARGS__)
#define shmem_alltoalls(...) SHMEMX_G2_(SHMEM_X_RMA_STD_TYPES, alltoalls, __VA_ARGS__)

#define shmem_and_reduce(...)  SHMEMX_G2_(SHMEM_X_RED_BIT_GTYPES, and_reduce, __VA_ARGS__)
#define shmem_or_reduce(...)   SHMEMX_G2_(SHMEM_X_RED_BIT_GTYPES, or_reduce, __VA_ARGS__)
#define shmem_xor_reduce(...)  SHMEMX_G2_(SHMEM_X_RED_BIT_GTYPES, xor_reduce, __VA_ARGS__)
#define shmem_min_reduce(...)  SHMEMX_G2_(SHMEM_X_RED_MINMAX_GTYPES, min_reduce, __VA_ARGS__)
#define shmem_max_reduce(...)  SHMEMX_G2_(SHMEM_X_RED_MINMAX_GTYPES, max_reduce, __VA_ARGS__)
#define shmem_sum_reduce(...)  SHMEMX_G2_(SHMEM_X_RED_SUMPROD_GTYPES, sum_reduce, __VA_ARGS__)
#define shmem_prod_reduce(...) SHMEMX_G2_(SHMEM_X_RED_SUMPROD_GTYPES, prod_reduce, __VA_ARGS__)
#define shmem_sum_inscan(...)  SHMEMX_G2_(SHMEM_X_RED_SUMPROD_GTYPES, sum_inscan, __VA_ARGS__)
#define shmem_sum_exscan(...)  SHMEMX_G2_(SHMEM_X_RED_SUMPROD_GTYPES, sum_exscan, __VA_ARGS__)

/* Deprecated generic names of 1.3 and 1.4, onto the current calls. */
#define shmem_cswap(...) SHMEMX_G1_(SHMEM_X_OLD_AMO_TYPES, atomic_compare_swap, __VA_ARGS__)
#define shmem_finc(...)  SHMEMX_G1_(SHMEM_X_OLD_AMO_TYPES, atomic_fetch_inc, __VA_ARGS__)
#define shmem_inc(...)   SHMEMX_G1_(SHMEM_X_OLD_AMO_TYPES, atomic_inc, __VA_ARGS__)
#define shmem_fadd(...)  SHMEMX_G1_(SHMEM_X_OLD_AMO_TYPES, atomic_fetch_add, __VA_ARGS__)
#define shmem_add(...)   SHMEMX_G1_(SHMEM_X_OLD_AMO_TYPES, atomic_add, __VA_ARGS__)
#define shmem_fetch(...) SHMEMX_G1_(SHMEM_X_OLD_AMO_EXT_TYPES, atomic_fetch, __VA_ARGS__)
#define shmem_set(...)   SHMEMX_G1_(SHMEM_X_OLD_AMO_EXT_TYPES, atomic_set, __VA_ARGS__)
#define shmem_swap(...)  SHMEMX_G1_(SHMEM_X_OLD_AMO_EXT_TYPES, atomic_swap, __VA_ARGS__)
#define shmem_wait(ivar, cmp_value) shmem_wait_until((ivar), SHMEM_CMP_NE, (cmp_value))

#endif /* C11 */

#endif /* SHMEM_GENERIC_H */
