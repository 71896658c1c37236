/*
 * What the OpenSHMEM calls share: the checks of api/api.h plus what
 * OpenSHMEM adds (team contexts number PEs in their team; a call that cannot
 * return a status ends the job naming itself).
 */
#ifndef SR_SHMEM_SH_H
#define SR_SHMEM_SH_H

#include "api/api.h"
#include "core/team.h"

#define SHMEMX_NO_DEPRECATION_WARNINGS
#include <shmem.h>

/* Ends the job after the check that failed has named the call and the
 * argument (one line); st says why in the second. */
__attribute__((noreturn, cold)) void sr_sh_fail(const char *fn, symrail_status_t st);
/* Logs "fn: <message>" and ends the job. */
__attribute__((noreturn, cold, format(printf, 2, 3))) void sr_sh_fatal(const char *fn,
                                                                      const char *fmt, ...);

#define SR_SH_UP(_fn)                                                                  \
    do {                                                                               \
        if (sr_unlikely(sr_rt.state != SR_STATE_UP))                                   \
            sr_sh_not_up(_fn);                                                         \
    } while (0)
__attribute__((noreturn, cold)) void sr_sh_not_up(const char *fn);

/* The world PE of `pe` as ctx numbers PEs (a team context: in its team). */
__attribute__((cold)) int sr_sh_team_pe(const char *fn, const sr_ctx_t *ctx, int pe);
static inline __attribute__((always_inline)) int sr_sh_pe(const char *fn, const sr_ctx_t *ctx, int pe)
{
    if (sr_unlikely(ctx->team != NULL))
        pe = sr_sh_team_pe(fn, ctx, pe);
    if (sr_unlikely(!sr_api_pe_ok(fn, pe)))
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    return pe;
}

/* A shmem_ctx_t argument: NULL (SHMEM_CTX_INVALID) ends the job here, the
 * rest is checked where it is used (the state word). */
static inline __attribute__((always_inline)) sr_ctx_t *sr_sh_ctx(const char *fn, shmem_ctx_t uctx)
{
    if (sr_unlikely(uctx == NULL))
        sr_sh_fatal(fn, "ctx is SHMEM_CTX_INVALID (NULL)");
    return (sr_ctx_t *)uctx;
}

/* The same, and the context alive and, for a store, not NOSTORE. */
static inline sr_ctx_t *sr_sh_ctx_live(const char *fn, shmem_ctx_t uctx, int store)
{
    sr_ctx_t *ctx = sr_sh_ctx(fn, uctx);
    if (sr_unlikely(ctx->state != SR_CTX_LIVE) && !sr_api_ctx_check(fn, ctx, store))
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    return ctx;
}

/* nelems elements of esize bytes, without overflow. */
static inline __attribute__((always_inline)) size_t sr_sh_bytes(const char *fn, size_t nelems, size_t esize)
{
    if (sr_unlikely(esize > 1 && nelems > SIZE_MAX / esize))
        sr_sh_fatal(fn, "nelems %zu of %zu bytes overflows", nelems, esize);
    return nelems * esize;
}

/* The slow half of sr_sh_rma: a context that is not plainly alive. */
__attribute__((noinline)) void sr_sh_rma_flagged(const char *fn, sr_ctx_t *ctx, int is_put,
                                                 void *local, uint64_t off, size_t nbytes,
                                                 int pe, int blocking);

/* Contiguous put or get: the checks of symrail_ctx_put/get, then the core.
 * Inlined into every call, so that is_put and blocking are constants there
 * (out of line it cost shmem_putmem 34 instructions more than symrail_ctx_put). */
static inline __attribute__((always_inline)) void sr_sh_rma(const char *fn, sr_ctx_t *ctx, int is_put, void *dst,
                             const void *src, size_t nbytes, int pe, int blocking)
{
    uint64_t off;
    SR_SH_UP(fn);
    pe = sr_sh_pe(fn, ctx, pe);
    if (is_put) {
        if (sr_unlikely(!sr_api_sym_ok(fn, "dest", dst, nbytes, &off) ||
                        !sr_api_buf_ok(fn, "source", src, nbytes)))
            sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    } else if (sr_unlikely(!sr_api_sym_ok(fn, "source", src, nbytes, &off) ||
                           !sr_api_buf_ok(fn, "dest", dst, nbytes))) {
        sr_sh_fail(fn, SYMRAIL_ERR_INVALID);
    }
    void *local = is_put ? (void *)src : dst;
    if (sr_likely(ctx->state == SR_CTX_LIVE)) {
        if (sr_unlikely(nbytes == 0))
            return;
        symrail_status_t st = sr_rma(ctx, is_put, local, off, nbytes, pe, blocking);
        if (sr_unlikely(st != SYMRAIL_OK))
            sr_sh_fail(fn, st);
        return;
    }
    sr_sh_rma_flagged(fn, ctx, is_put, local, off, nbytes, pe, blocking);
}

/* Strided: nblocks blocks of bsize elements of esize bytes, block i at
 * dst + i*dstride and src + i*sstride elements. */
void sr_sh_rma_strided(const char *fn, sr_ctx_t *ctx, int is_put, void *dst, const void *src,
                       ptrdiff_t dstride, ptrdiff_t sstride, size_t bsize, size_t nblocks,
                       size_t esize, int pe);

/* The OpenSHMEM init count (1.6: every init is matched by a finalize). */
extern int sr_sh_inits;

#endif
