/*
 * OpenSHMEM RMA (every type and size, contiguous, strided, non-blocking,
 * single elements) and ordering.  The typed calls are made from the
 * header's tables; each goes to the core as symrail_ctx_put/get do, with
 * the calls' own names in their messages.
 */
#include "config.h"
#include "shmem/sh.h"

#define SR_SH_DCTX (&symrail_ctx_default)

void sr_sh_rma_flagged(const char *fn, sr_ctx_t *ctx, int is_put, void *local, uint64_t off,
                       size_t nbytes, int pe, int blocking)
{
    if (!sr_api_ctx_check(fn, ctx, is_put))
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    if (nbytes == 0)
        return;
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_rma(ctx, is_put, local, off, nbytes, pe, blocking);
    sr_ctx_leave(ctx);
    if (st != SYMRAIL_OK)
        sr_sh_fail(fn, st);
}

void sr_sh_rma_strided(const char *fn, sr_ctx_t *ctx, int is_put, void *dst, const void *src,
                       ptrdiff_t dstride, ptrdiff_t sstride, size_t bsize, size_t nblocks,
                       size_t esize, int pe)
{
    uint64_t off;
    SR_SH_UP(fn);
    pe = sr_sh_pe(fn, ctx, pe);
    if (dstride < 0)
        sr_sh_fatal(fn, "dst %td is negative", dstride);
    if (sstride < 0)
        sr_sh_fatal(fn, "sst %td is negative", sstride);
    if (nblocks == 0 || bsize == 0)
        return;
    /* The extents the blocks span, in bytes. */
    size_t blen = sr_sh_bytes(fn, bsize, esize);
    size_t dspan = sr_sh_bytes(fn, sr_sh_bytes(fn, nblocks - 1, (size_t)dstride), esize);
    size_t sspan = sr_sh_bytes(fn, sr_sh_bytes(fn, nblocks - 1, (size_t)sstride), esize);
    if (dspan > SIZE_MAX - blen || sspan > SIZE_MAX - blen)
        sr_sh_fatal(fn, "the strided extent overflows");
    const char *sym = is_put ? (const char *)dst : (const char *)src;
    const char *loc = is_put ? (const char *)src : (const char *)dst;
    size_t symspan = (is_put ? dspan : sspan) + blen, locspan = (is_put ? sspan : dspan) + blen;
    ptrdiff_t symstride = (is_put ? dstride : sstride) * (ptrdiff_t)esize;
    ptrdiff_t locstride = (is_put ? sstride : dstride) * (ptrdiff_t)esize;
    if (!sr_api_sym_ok(fn, is_put ? "dest" : "source", sym, symspan, &off) ||
        !sr_api_buf_ok(fn, is_put ? "source" : "dest", loc, locspan))
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    if (ctx->state != SR_CTX_LIVE && !sr_api_ctx_check(fn, ctx, is_put))
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    symrail_status_t st = SYMRAIL_OK;
    sr_ctx_enter(ctx);
    if ((size_t)dstride == bsize && (size_t)sstride == bsize) {
        st = sr_rma(ctx, is_put, (void *)loc, off, symspan, pe, 1);  /* one run after all */
    } else {
        /* Gets go out together and complete in one quiet; a put's source
         * must be free on return, so each completes locally as it goes. */
        for (size_t i = 0; i < nblocks && st == SYMRAIL_OK; i++)
            st = sr_rma(ctx, is_put, (void *)(loc + (ptrdiff_t)i * locstride),
                        off + (uint64_t)((ptrdiff_t)i * symstride), blen, pe, is_put);
        if (!is_put && st == SYMRAIL_OK)
            st = sr_quiet(ctx);
    }
    sr_ctx_leave(ctx);
    if (st != SYMRAIL_OK)
        sr_sh_fail(fn, st);
}

/* ---- the families ------------------------------------------------------------------ */

/* NAME and CNAME (the context form) of a contiguous call on TD/TS elements of ES bytes. */
#define SR_SH_CONTIG(NAME, CNAME, TD, TS, ES, ISPUT, BLK)                                \
    void NAME(TD *dest, const TS *source, size_t nelems, int pe)                         \
    {                                                                                    \
        sr_sh_rma(#NAME, SR_SH_DCTX, ISPUT, dest, source, sr_sh_bytes(#NAME, nelems, ES), \
                  pe, BLK);                                                              \
    }                                                                                    \
    void CNAME(shmem_ctx_t ctx, TD *dest, const TS *source, size_t nelems, int pe)       \
    {                                                                                    \
        sr_sh_rma(#CNAME, sr_sh_ctx(#CNAME, ctx), ISPUT, dest, source,                   \
                  sr_sh_bytes(#CNAME, nelems, ES), pe, BLK);                             \
    }
#define SR_SH_ISTRIDED(NAME, CNAME, TD, TS, ES, ISPUT)                                   \
    void NAME(TD *dest, const TS *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe) \
    {                                                                                    \
        sr_sh_rma_strided(#NAME, SR_SH_DCTX, ISPUT, dest, source, dst, sst, 1, nelems, ES, pe); \
    }                                                                                    \
    void CNAME(shmem_ctx_t ctx, TD *dest, const TS *source, ptrdiff_t dst, ptrdiff_t sst, \
               size_t nelems, int pe)                                                    \
    {                                                                                    \
        sr_sh_rma_strided(#CNAME, sr_sh_ctx(#CNAME, ctx), ISPUT, dest, source, dst, sst, 1, \
                          nelems, ES, pe);                                               \
    }
#define SR_SH_BSTRIDED(NAME, CNAME, TD, TS, ES, ISPUT)                                   \
    void NAME(TD *dest, const TS *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize,    \
              size_t nblocks, int pe)                                                    \
    {                                                                                    \
        sr_sh_rma_strided(#NAME, SR_SH_DCTX, ISPUT, dest, source, dst, sst, bsize, nblocks, \
                          ES, pe);                                                       \
    }                                                                                    \
    void CNAME(shmem_ctx_t ctx, TD *dest, const TS *source, ptrdiff_t dst, ptrdiff_t sst, \
               size_t bsize, size_t nblocks, int pe)                                     \
    {                                                                                    \
        sr_sh_rma_strided(#CNAME, sr_sh_ctx(#CNAME, ctx), ISPUT, dest, source, dst, sst,  \
                          bsize, nblocks, ES, pe);                                       \
    }

/* Every call of one element type (typed: T; sized: void with ES bytes). */
#define SR_SH_RMA_ALL(PRE, CPRE, SUF, TD, TS, ES)                                        \
    SR_SH_CONTIG(PRE##put##SUF, CPRE##put##SUF, TD, TS, ES, 1, 1)                        \
    SR_SH_CONTIG(PRE##get##SUF, CPRE##get##SUF, TD, TS, ES, 0, 1)                        \
    SR_SH_CONTIG(PRE##put##SUF##_nbi, CPRE##put##SUF##_nbi, TD, TS, ES, 1, 0)            \
    SR_SH_CONTIG(PRE##get##SUF##_nbi, CPRE##get##SUF##_nbi, TD, TS, ES, 0, 0)            \
    SR_SH_ISTRIDED(PRE##iput##SUF, CPRE##iput##SUF, TD, TS, ES, 1)                       \
    SR_SH_ISTRIDED(PRE##iget##SUF, CPRE##iget##SUF, TD, TS, ES, 0)                       \
    SR_SH_BSTRIDED(PRE##ibput##SUF, CPRE##ibput##SUF, TD, TS, ES, 1)                     \
    SR_SH_BSTRIDED(PRE##ibget##SUF, CPRE##ibget##SUF, TD, TS, ES, 0)

#define SR_SH_TYPED(N, T, U_)                                                             \
    SR_SH_RMA_ALL(shmem_##N##_, shmem_ctx_##N##_, , T, T, sizeof(T))                     \
    void shmem_##N##_p(T *dest, T value, int pe)                                         \
    {                                                                                    \
        sr_sh_rma("shmem_" #N "_p", SR_SH_DCTX, 1, dest, &value, sizeof(T), pe, 1);      \
    }                                                                                    \
    void shmem_ctx_##N##_p(shmem_ctx_t ctx, T *dest, T value, int pe)                   \
    {                                                                                    \
        sr_sh_rma("shmem_ctx_" #N "_p", sr_sh_ctx("shmem_ctx_" #N "_p", ctx), 1, dest,   \
                  &value, sizeof(T), pe, 1);                                             \
    }                                                                                    \
    T shmem_##N##_g(const T *source, int pe)                                             \
    {                                                                                    \
        T v;                                                                             \
        sr_sh_rma("shmem_" #N "_g", SR_SH_DCTX, 0, &v, source, sizeof(T), pe, 1);        \
        return v;                                                                        \
    }                                                                                    \
    T shmem_ctx_##N##_g(shmem_ctx_t ctx, const T *source, int pe)                        \
    {                                                                                    \
        T v;                                                                             \
        sr_sh_rma("shmem_ctx_" #N "_g", sr_sh_ctx("shmem_ctx_" #N "_g", ctx), 0, &v,     \
                  source, sizeof(T), pe, 1);                                             \
        return v;                                                                        \
    }
SHMEM_X_RMA_TYPES(SR_SH_TYPED, ~)

#define SR_SH_SIZED(S, U_) SR_SH_RMA_ALL(shmem_, shmem_ctx_, S, void, void, (S) / 8)
SHMEM_X_SIZES(SR_SH_SIZED, ~)

SR_SH_CONTIG(shmem_putmem, shmem_ctx_putmem, void, void, 1, 1, 1)
SR_SH_CONTIG(shmem_getmem, shmem_ctx_getmem, void, void, 1, 0, 1)
SR_SH_CONTIG(shmem_putmem_nbi, shmem_ctx_putmem_nbi, void, void, 1, 1, 0)
SR_SH_CONTIG(shmem_getmem_nbi, shmem_ctx_getmem_nbi, void, void, 1, 0, 0)

/* ---- ordering ------------------------------------------------------------------------- */

static void sr_sh_order(const char *fn, sr_ctx_t *ctx, int quiet)
{
    SR_SH_UP(fn);
    symrail_status_t st;
    if (sr_likely(ctx->state == SR_CTX_LIVE)) {
        st = quiet ? sr_quiet(ctx) : sr_fence(ctx);
    } else {
        if (!sr_api_ctx_check(fn, ctx, 0))
            sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
        sr_ctx_enter(ctx);
        st = quiet ? sr_quiet(ctx) : sr_fence(ctx);
        sr_ctx_leave(ctx);
    }
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_sh_fail(fn, st);
}

void shmem_quiet(void)
{
    sr_sh_order("shmem_quiet", SR_SH_DCTX, 1);
}

void shmem_fence(void)
{
    sr_sh_order("shmem_fence", SR_SH_DCTX, 0);
}

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    sr_sh_order("shmem_ctx_quiet", sr_sh_ctx("shmem_ctx_quiet", ctx), 1);
}

void shmem_ctx_fence(shmem_ctx_t ctx)
{
    sr_sh_order("shmem_ctx_fence", sr_sh_ctx("shmem_ctx_fence", ctx), 0);
}
