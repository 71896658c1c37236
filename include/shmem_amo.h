/*
 * Atomics and ordering of shmem.h: shmem.h includes it where it
 * belongs; programs include <shmem.h>, never this part alone.
 */
#ifndef SHMEM_AMO_H
#define SHMEM_AMO_H

#ifndef SHMEM_H
#error "include <shmem.h>, not <shmem_amo.h>"
#endif

/* ---- atomics ---------------------------------------------------------------------------- */
/* Each shape declares the blocking call and its context form. */
#define SHMEMX_D_AMO_FETCH_(N, T, OP)                                                   \
    T shmem_##N##_##OP(const T *source, int pe);                                       \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, const T *source, int pe);
#define SHMEMX_D_AMO_SET_(N, T, OP)                                                     \
    void shmem_##N##_##OP(T *dest, T value, int pe);                                   \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, T value, int pe);
#define SHMEMX_D_AMO_FOP_(N, T, OP)                                                     \
    T shmem_##N##_##OP(T *dest, T value, int pe);                                      \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, T value, int pe);
#define SHMEMX_D_AMO_CSWAP_(N, T, OP)                                                   \
    T shmem_##N##_##OP(T *dest, T cond, T value, int pe);                              \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, T cond, T value, int pe);
#define SHMEMX_D_AMO_FINC_(N, T, OP)                                                    \
    T shmem_##N##_##OP(T *dest, int pe);                                               \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, int pe);
#define SHMEMX_D_AMO_INC_(N, T, OP)                                                     \
    void shmem_##N##_##OP(T *dest, int pe);                                            \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, int pe);
/* The non-blocking fetching forms return the old value through `fetch`. */
#define SHMEMX_D_AMO_FETCH_NBI_(N, T, OP)                                               \
    void shmem_##N##_##OP(T *fetch, const T *source, int pe);                          \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, const T *source, int pe);
#define SHMEMX_D_AMO_FOP_NBI_(N, T, OP)                                                 \
    void shmem_##N##_##OP(T *fetch, T *dest, T value, int pe);                         \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe);
#define SHMEMX_D_AMO_CSWAP_NBI_(N, T, OP)                                               \
    void shmem_##N##_##OP(T *fetch, T *dest, T cond, T value, int pe);                 \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, T *dest, T cond, T value, int pe);
#define SHMEMX_D_AMO_FINC_NBI_(N, T, OP)                                                \
    void shmem_##N##_##OP(T *fetch, T *dest, int pe);                                  \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, T *dest, int pe);

/* X(SHAPE, TABLE, OP, GENERIC-TABLE): every atomic, once. */
#define SHMEM_X_AMO_OPS(X)                                                              \
    X(FETCH, SHMEM_X_AMO_EXT_TYPES, atomic_fetch, SHMEM_X_AMO_EXT_GTYPES)              \
    X(SET, SHMEM_X_AMO_EXT_TYPES, atomic_set, SHMEM_X_AMO_EXT_GTYPES)                  \
    X(FOP, SHMEM_X_AMO_EXT_TYPES, atomic_swap, SHMEM_X_AMO_EXT_GTYPES)                 \
    X(CSWAP, SHMEM_X_AMO_STD_TYPES, atomic_compare_swap, SHMEM_X_AMO_STD_GTYPES)       \
    X(FINC, SHMEM_X_AMO_STD_TYPES, atomic_fetch_inc, SHMEM_X_AMO_STD_GTYPES)           \
    X(INC, SHMEM_X_AMO_STD_TYPES, atomic_inc, SHMEM_X_AMO_STD_GTYPES)                  \
    X(FOP, SHMEM_X_AMO_STD_TYPES, atomic_fetch_add, SHMEM_X_AMO_STD_GTYPES)            \
    X(SET, SHMEM_X_AMO_STD_TYPES, atomic_add, SHMEM_X_AMO_STD_GTYPES)                  \
    X(FOP, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_and, SHMEM_X_AMO_BIT_GTYPES)            \
    X(SET, SHMEM_X_AMO_BIT_TYPES, atomic_and, SHMEM_X_AMO_BIT_GTYPES)                  \
    X(FOP, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_or, SHMEM_X_AMO_BIT_GTYPES)             \
    X(SET, SHMEM_X_AMO_BIT_TYPES, atomic_or, SHMEM_X_AMO_BIT_GTYPES)                   \
    X(FOP, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_xor, SHMEM_X_AMO_BIT_GTYPES)            \
    X(SET, SHMEM_X_AMO_BIT_TYPES, atomic_xor, SHMEM_X_AMO_BIT_GTYPES)                  \
    X(FETCH_NBI, SHMEM_X_AMO_EXT_TYPES, atomic_fetch_nbi, SHMEM_X_AMO_EXT_GTYPES)      \
    X(FOP_NBI, SHMEM_X_AMO_EXT_TYPES, atomic_swap_nbi, SHMEM_X_AMO_EXT_GTYPES)         \
    X(CSWAP_NBI, SHMEM_X_AMO_STD_TYPES, atomic_compare_swap_nbi, SHMEM_X_AMO_STD_GTYPES) \
    X(FINC_NBI, SHMEM_X_AMO_STD_TYPES, atomic_fetch_inc_nbi, SHMEM_X_AMO_STD_GTYPES)   \
    X(FOP_NBI, SHMEM_X_AMO_STD_TYPES, atomic_fetch_add_nbi, SHMEM_X_AMO_STD_GTYPES)    \
    X(FOP_NBI, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_and_nbi, SHMEM_X_AMO_BIT_GTYPES)    \
    X(FOP_NBI, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_or_nbi, SHMEM_X_AMO_BIT_GTYPES)     \
    X(FOP_NBI, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_xor_nbi, SHMEM_X_AMO_BIT_GTYPES)
#define SHMEMX_D_AMO_(SHAPE, TAB, OP, GTAB) TAB(SHMEMX_D_AMO_##SHAPE##_, OP)
SHMEM_X_AMO_OPS(SHMEMX_D_AMO_)

/* Deprecated atomics (no context forms). */
#define SHMEMX_D_OLD_AMO_(N, T, _)                                                      \
    SHMEMX_DEPRECATED T shmem_##N##_cswap(T *dest, T cond, T value, int pe);           \
    SHMEMX_DEPRECATED T shmem_##N##_finc(T *dest, int pe);                             \
    SHMEMX_DEPRECATED void shmem_##N##_inc(T *dest, int pe);                           \
    SHMEMX_DEPRECATED T shmem_##N##_fadd(T *dest, T value, int pe);                    \
    SHMEMX_DEPRECATED void shmem_##N##_add(T *dest, T value, int pe);
#define SHMEMX_D_OLD_AMO_EXT_(N, T, _)                                                  \
    SHMEMX_DEPRECATED T shmem_##N##_fetch(const T *source, int pe);                    \
    SHMEMX_DEPRECATED void shmem_##N##_set(T *dest, T value, int pe);                  \
    SHMEMX_DEPRECATED T shmem_##N##_swap(T *dest, T value, int pe);
SHMEM_X_OLD_AMO_TYPES(SHMEMX_D_OLD_AMO_, ~)
SHMEM_X_OLD_AMO_EXT_TYPES(SHMEMX_D_OLD_AMO_EXT_, ~)

/* ---- ordering -------------------------------------------------------------------------- */
void shmem_fence(void);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_quiet(void);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_pe_quiet(const int *target_pes, size_t npes);
void shmem_ctx_pe_quiet(shmem_ctx_t ctx, const int *target_pes, size_t npes);

#endif /* SHMEM_AMO_H */
