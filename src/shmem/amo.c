/*
 * OpenSHMEM atomics: every typed atomic, its context form, the fetching
 * _nbi forms and the deprecated names of 1.3 and earlier, generated from the
 * type tables of shmem.h.  A value travels as its bits (width 4 or 8), so
 * signed, unsigned and floating types share one path into the core.  Bad
 * input (PE out of range, a target outside the symmetric heap or not
 * aligned to its type) and a failed atomic end the job with one line naming
 * the call.
 */
#include "config.h"

#include "shmem/sh.h"

#include <string.h>

/* The core's kind of a 4- or 8-byte word. */
static inline sr_tl_amo_t sr_sh_kind(sr_tl_amo_t kind, size_t width)
{
    return (sr_tl_amo_t)((unsigned)kind | (width == 4 ? SR_TL_AMO_W32 : 0u));
}

/* Checks the arguments of `fn` and returns the context to issue on, the
 * target's heap offset and its world PE; ends the job on bad input. */
static sr_ctx_t *sr_sh_amo_args(const char *fn, shmem_ctx_t uctx, const void *target,
                                size_t width, int store, int *pe_p, uint64_t *off_p)
{
    SR_SH_UP(fn);
    sr_ctx_t *ctx = sr_sh_ctx_live(fn, uctx, store);
    int pe = sr_sh_pe(fn, ctx, *pe_p);
    if (!sr_api_amo_ok(fn, store ? "dest" : "source", target, width, off_p))
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    *pe_p = pe;
    return ctx;
}

static uint64_t sr_sh_amo(const char *fn, shmem_ctx_t uctx, sr_tl_amo_t kind, const void *target,
                          size_t width, uint64_t value, uint64_t cond, int pe)
{
    uint64_t off, old = 0;
    sr_ctx_t *ctx = sr_sh_amo_args(fn, uctx, target, width, kind != SR_TL_AMO_FETCH, &pe, &off);
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_amo(ctx, sr_sh_kind(kind, width), off, value, cond, pe, &old);
    sr_ctx_leave(ctx);
    if (st != SYMRAIL_OK)
        sr_sh_fail(fn, st);
    return old;
}

static void sr_sh_amo_nbi(const char *fn, shmem_ctx_t uctx, sr_tl_amo_t kind, void *fetch,
                          const void *target, size_t width, uint64_t value, uint64_t cond,
                          int pe)
{
    uint64_t off;
    sr_ctx_t *ctx = sr_sh_amo_args(fn, uctx, target, width, kind != SR_TL_AMO_FETCH, &pe, &off);
    if (fetch == NULL)
        sr_sh_fatal(fn, "fetch is NULL");
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_amo_nbi(ctx, sr_sh_kind(kind, width), off, value, cond, pe, fetch);
    sr_ctx_leave(ctx);
    if (st != SYMRAIL_OK)
        sr_sh_fail(fn, st);
}

/* A value's bits, and back. */
static inline uint64_t sr_sh_bits(const void *v, size_t width)
{
    if (width == 4) {
        uint32_t b;
        memcpy(&b, v, 4);
        return b;
    }
    uint64_t b;
    memcpy(&b, v, 8);
    return b;
}

static inline void sr_sh_unbits(void *v, size_t width, uint64_t b)
{
    if (width == 4) {
        uint32_t b32 = (uint32_t)b;
        memcpy(v, &b32, 4);
    } else {
        memcpy(v, &b, 8);
    }
}

/* The shapes of shmem.h (SHMEMX_D_AMO_*_): each defines the call, its
 * context form and, through `PFX`, the names it is known by.  K: the core's
 * kind. */
#define SR_SH_FETCH(N, T, OP, K)                                                            \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, const T *source, int pe)                        \
    {                                                                                       \
        T r;                                                                                \
        sr_sh_unbits(&r, sizeof(T),                                                         \
                     sr_sh_amo("shmem_ctx_" #N "_" #OP, ctx, K, source, sizeof(T), 0, 0, pe)); \
        return r;                                                                           \
    }                                                                                       \
    T shmem_##N##_##OP(const T *source, int pe)                                             \
    {                                                                                       \
        T r;                                                                                \
        sr_sh_unbits(&r, sizeof(T), sr_sh_amo("shmem_" #N "_" #OP, SHMEM_CTX_DEFAULT, K,   \
                                              source, sizeof(T), 0, 0, pe));                \
        return r;                                                                           \
    }
#define SR_SH_SET(N, T, OP, K)                                                              \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, T value, int pe)                    \
    {                                                                                       \
        (void)sr_sh_amo("shmem_ctx_" #N "_" #OP, ctx, K, dest, sizeof(T),                   \
                        sr_sh_bits(&value, sizeof(T)), 0, pe);                              \
    }                                                                                       \
    void shmem_##N##_##OP(T *dest, T value, int pe)                                         \
    {                                                                                       \
        (void)sr_sh_amo("shmem_" #N "_" #OP, SHMEM_CTX_DEFAULT, K, dest, sizeof(T),         \
                        sr_sh_bits(&value, sizeof(T)), 0, pe);                              \
    }
#define SR_SH_FOP(N, T, OP, K)                                                              \
    static inline T sr_sh_##N##_##OP(const char *fn, shmem_ctx_t ctx, T *dest, T value,     \
                                     int pe)                                                \
    {                                                                                       \
        T r;                                                                                \
        sr_sh_unbits(&r, sizeof(T), sr_sh_amo(fn, ctx, K, dest, sizeof(T),                  \
                                              sr_sh_bits(&value, sizeof(T)), 0, pe));       \
        return r;                                                                           \
    }                                                                                       \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, T value, int pe)                       \
    {                                                                                       \
        return sr_sh_##N##_##OP("shmem_ctx_" #N "_" #OP, ctx, dest, value, pe);             \
    }                                                                                       \
    T shmem_##N##_##OP(T *dest, T value, int pe)                                            \
    {                                                                                       \
        return sr_sh_##N##_##OP("shmem_" #N "_" #OP, SHMEM_CTX_DEFAULT, dest, value, pe);   \
    }
#define SR_SH_CSWAP(N, T, OP, K)                                                            \
    static inline T sr_sh_##N##_##OP(const char *fn, shmem_ctx_t ctx, T *dest, T cond,      \
                                     T value, int pe)                                       \
    {                                                                                       \
        T r;                                                                                \
        sr_sh_unbits(&r, sizeof(T),                                                         \
                     sr_sh_amo(fn, ctx, K, dest, sizeof(T), sr_sh_bits(&value, sizeof(T)),  \
                               sr_sh_bits(&cond, sizeof(T)), pe));                          \
        return r;                                                                           \
    }                                                                                       \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, T cond, T value, int pe)               \
    {                                                                                       \
        return sr_sh_##N##_##OP("shmem_ctx_" #N "_" #OP, ctx, dest, cond, value, pe);       \
    }                                                                                       \
    T shmem_##N##_##OP(T *dest, T cond, T value, int pe)                                    \
    {                                                                                       \
        return sr_sh_##N##_##OP("shmem_" #N "_" #OP, SHMEM_CTX_DEFAULT, dest, cond, value,  \
                                pe);                                                        \
    }
#define SR_SH_FINC(N, T, OP, K)                                                             \
    static inline T sr_sh_##N##_##OP(const char *fn, shmem_ctx_t ctx, T *dest, int pe)      \
    {                                                                                       \
        T r;                                                                                \
        sr_sh_unbits(&r, sizeof(T), sr_sh_amo(fn, ctx, K, dest, sizeof(T), 1, 0, pe));      \
        return r;                                                                           \
    }                                                                                       \
    T shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, int pe)                                \
    {                                                                                       \
        return sr_sh_##N##_##OP("shmem_ctx_" #N "_" #OP, ctx, dest, pe);                    \
    }                                                                                       \
    T shmem_##N##_##OP(T *dest, int pe)                                                     \
    {                                                                                       \
        return sr_sh_##N##_##OP("shmem_" #N "_" #OP, SHMEM_CTX_DEFAULT, dest, pe);          \
    }
#define SR_SH_INC(N, T, OP, K)                                                              \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *dest, int pe)                             \
    {                                                                                       \
        (void)sr_sh_amo("shmem_ctx_" #N "_" #OP, ctx, K, dest, sizeof(T), 1, 0, pe);        \
    }                                                                                       \
    void shmem_##N##_##OP(T *dest, int pe)                                                  \
    {                                                                                       \
        (void)sr_sh_amo("shmem_" #N "_" #OP, SHMEM_CTX_DEFAULT, K, dest, sizeof(T), 1, 0,   \
                        pe);                                                                \
    }
#define SR_SH_FETCH_NBI(N, T, OP, K)                                                        \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, const T *source, int pe)           \
    {                                                                                       \
        sr_sh_amo_nbi("shmem_ctx_" #N "_" #OP, ctx, K, fetch, source, sizeof(T), 0, 0, pe);  \
    }                                                                                       \
    void shmem_##N##_##OP(T *fetch, const T *source, int pe)                                \
    {                                                                                       \
        sr_sh_amo_nbi("shmem_" #N "_" #OP, SHMEM_CTX_DEFAULT, K, fetch, source, sizeof(T), 0, \
                      0, pe);                                                               \
    }
#define SR_SH_FOP_NBI(N, T, OP, K)                                                          \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, T *dest, T value, int pe)          \
    {                                                                                       \
        sr_sh_amo_nbi("shmem_ctx_" #N "_" #OP, ctx, K, fetch, dest, sizeof(T),              \
                      sr_sh_bits(&value, sizeof(T)), 0, pe);                                \
    }                                                                                       \
    void shmem_##N##_##OP(T *fetch, T *dest, T value, int pe)                               \
    {                                                                                       \
        sr_sh_amo_nbi("shmem_" #N "_" #OP, SHMEM_CTX_DEFAULT, K, fetch, dest, sizeof(T),    \
                      sr_sh_bits(&value, sizeof(T)), 0, pe);                                \
    }
#define SR_SH_CSWAP_NBI(N, T, OP, K)                                                        \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, T *dest, T cond, T value, int pe)  \
    {                                                                                       \
        sr_sh_amo_nbi("shmem_ctx_" #N "_" #OP, ctx, K, fetch, dest, sizeof(T),              \
                      sr_sh_bits(&value, sizeof(T)), sr_sh_bits(&cond, sizeof(T)), pe);     \
    }                                                                                       \
    void shmem_##N##_##OP(T *fetch, T *dest, T cond, T value, int pe)                       \
    {                                                                                       \
        sr_sh_amo_nbi("shmem_" #N "_" #OP, SHMEM_CTX_DEFAULT, K, fetch, dest, sizeof(T),    \
                      sr_sh_bits(&value, sizeof(T)), sr_sh_bits(&cond, sizeof(T)), pe);     \
    }
#define SR_SH_FINC_NBI(N, T, OP, K)                                                         \
    void shmem_ctx_##N##_##OP(shmem_ctx_t ctx, T *fetch, T *dest, int pe)                   \
    {                                                                                       \
        sr_sh_amo_nbi("shmem_ctx_" #N "_" #OP, ctx, K, fetch, dest, sizeof(T), 1, 0, pe);   \
    }                                                                                       \
    void shmem_##N##_##OP(T *fetch, T *dest, int pe)                                        \
    {                                                                                       \
        sr_sh_amo_nbi("shmem_" #N "_" #OP, SHMEM_CTX_DEFAULT, K, fetch, dest, sizeof(T), 1, \
                      0, pe);                                                               \
    }

/* X(SHAPE, TYPE-TABLE, OP, KIND): every atomic of the specification, once. */
#define SR_SH_AMO_OPS(X)                                                                    \
    X(FETCH, SHMEM_X_AMO_EXT_TYPES, atomic_fetch, SR_TL_AMO_FETCH)                         \
    X(SET, SHMEM_X_AMO_EXT_TYPES, atomic_set, SR_TL_AMO_SET)                               \
    X(FOP, SHMEM_X_AMO_EXT_TYPES, atomic_swap, SR_TL_AMO_SWAP)                             \
    X(CSWAP, SHMEM_X_AMO_STD_TYPES, atomic_compare_swap, SR_TL_AMO_CSWAP)                  \
    X(FINC, SHMEM_X_AMO_STD_TYPES, atomic_fetch_inc, SR_TL_AMO_ADD)                        \
    X(INC, SHMEM_X_AMO_STD_TYPES, atomic_inc, SR_TL_AMO_ADD)                               \
    X(FOP, SHMEM_X_AMO_STD_TYPES, atomic_fetch_add, SR_TL_AMO_ADD)                         \
    X(SET, SHMEM_X_AMO_STD_TYPES, atomic_add, SR_TL_AMO_ADD)                               \
    X(FOP, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_and, SR_TL_AMO_AND)                         \
    X(SET, SHMEM_X_AMO_BIT_TYPES, atomic_and, SR_TL_AMO_AND)                               \
    X(FOP, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_or, SR_TL_AMO_OR)                           \
    X(SET, SHMEM_X_AMO_BIT_TYPES, atomic_or, SR_TL_AMO_OR)                                 \
    X(FOP, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_xor, SR_TL_AMO_XOR)                         \
    X(SET, SHMEM_X_AMO_BIT_TYPES, atomic_xor, SR_TL_AMO_XOR)                               \
    X(FETCH_NBI, SHMEM_X_AMO_EXT_TYPES, atomic_fetch_nbi, SR_TL_AMO_FETCH)                 \
    X(FOP_NBI, SHMEM_X_AMO_EXT_TYPES, atomic_swap_nbi, SR_TL_AMO_SWAP)                     \
    X(CSWAP_NBI, SHMEM_X_AMO_STD_TYPES, atomic_compare_swap_nbi, SR_TL_AMO_CSWAP)          \
    X(FINC_NBI, SHMEM_X_AMO_STD_TYPES, atomic_fetch_inc_nbi, SR_TL_AMO_ADD)                \
    X(FOP_NBI, SHMEM_X_AMO_STD_TYPES, atomic_fetch_add_nbi, SR_TL_AMO_ADD)                 \
    X(FOP_NBI, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_and_nbi, SR_TL_AMO_AND)                 \
    X(FOP_NBI, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_or_nbi, SR_TL_AMO_OR)                   \
    X(FOP_NBI, SHMEM_X_AMO_BIT_TYPES, atomic_fetch_xor_nbi, SR_TL_AMO_XOR)

#define SR_SH_DEF_(SHAPE, TAB, OP, K) TAB(SR_SH_DEF1_, SHAPE, OP, K)
#define SR_SH_DEF1_(N, T, SHAPE, OP, K)                                                     \
    _Static_assert(sizeof(T) == 4 || sizeof(T) == 8, "an AMO type is 4 or 8 bytes");        \
    SR_SH_##SHAPE(N, T, OP, K)
SR_SH_AMO_OPS(SR_SH_DEF_)

/* Deprecated (1.3 and earlier): the same atomics under their old names. */
#define SR_SH_OLD_(N, T, _)                                                                 \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe)                                   \
    {                                                                                       \
        T r;                                                                                \
        sr_sh_unbits(&r, sizeof(T), sr_sh_amo("shmem_" #N "_cswap", SHMEM_CTX_DEFAULT,      \
                                              SR_TL_AMO_CSWAP, dest, sizeof(T),             \
                                              sr_sh_bits(&value, sizeof(T)),                \
                                              sr_sh_bits(&cond, sizeof(T)), pe));           \
        return r;                                                                           \
    }                                                                                       \
    T shmem_##N##_finc(T *dest, int pe)                                                     \
    {                                                                                       \
        T r;                                                                                \
        sr_sh_unbits(&r, sizeof(T), sr_sh_amo("shmem_" #N "_finc", SHMEM_CTX_DEFAULT,       \
                                              SR_TL_AMO_ADD, dest, sizeof(T), 1, 0, pe));   \
        return r;                                                                           \
    }                                                                                       \
    void shmem_##N##_inc(T *dest, int pe)                                                   \
    {                                                                                       \
        (void)sr_sh_amo("shmem_" #N "_inc", SHMEM_CTX_DEFAULT, SR_TL_AMO_ADD, dest,         \
                        sizeof(T), 1, 0, pe);                                               \
    }                                                                                       \
    T shmem_##N##_fadd(T *dest, T value, int pe)                                            \
    {                                                                                       \
        T r;                                                                                \
        sr_sh_unbits(&r, sizeof(T), sr_sh_amo("shmem_" #N "_fadd", SHMEM_CTX_DEFAULT,       \
                                              SR_TL_AMO_ADD, dest, sizeof(T),               \
                                              sr_sh_bits(&value, sizeof(T)), 0, pe));       \
        return r;                                                                           \
    }                                                                                       \
    void shmem_##N##_add(T *dest, T value, int pe)                                          \
    {                                                                                       \
        (void)sr_sh_amo("shmem_" #N "_add", SHMEM_CTX_DEFAULT, SR_TL_AMO_ADD, dest,         \
                        sizeof(T), sr_sh_bits(&value, sizeof(T)), 0, pe);                   \
    }
#define SR_SH_OLD_EXT_(N, T, _)                                                             \
    T shmem_##N##_fetch(const T *source, int pe)                                            \
    {                                                                                       \
        T r;                                                                                \
        sr_sh_unbits(&r, sizeof(T), sr_sh_amo("shmem_" #N "_fetch", SHMEM_CTX_DEFAULT,      \
                                              SR_TL_AMO_FETCH, source, sizeof(T), 0, 0, pe)); \
        return r;                                                                           \
    }                                                                                       \
    void shmem_##N##_set(T *dest, T value, int pe)                                          \
    {                                                                                       \
        (void)sr_sh_amo("shmem_" #N "_set", SHMEM_CTX_DEFAULT, SR_TL_AMO_SET, dest,         \
                        sizeof(T), sr_sh_bits(&value, sizeof(T)), 0, pe);                   \
    }                                                                                       \
    T shmem_##N##_swap(T *dest, T value, int pe)                                            \
    {                                                                                       \
        T r;                                                                                \
        sr_sh_unbits(&r, sizeof(T), sr_sh_amo("shmem_" #N "_swap", SHMEM_CTX_DEFAULT,       \
                                              SR_TL_AMO_SWAP, dest, sizeof(T),              \
                                              sr_sh_bits(&value, sizeof(T)), 0, pe));       \
        return r;                                                                           \
    }
SHMEM_X_OLD_AMO_TYPES(SR_SH_OLD_, ~)
SHMEM_X_OLD_AMO_EXT_TYPES(SR_SH_OLD_EXT_, ~)

