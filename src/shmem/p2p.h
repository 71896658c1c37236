/*
 * What the OpenSHMEM point-to-point, signal and lock calls share: their
 * argument checks (every bad argument ends the job with one line naming the
 * call and the argument), the comparison operators, the contexts and their
 * teams, and the type tables the typed names are generated from.
 */
#ifndef SR_SHMEM_P2P_H
#define SR_SHMEM_P2P_H

#include "api/api.h"
#include "core/team.h"

#include <shmem.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The typed names come from shmem.h's tables: SHMEM_X_P2P_TYPES (waits and
 * tests), SHMEM_X_OLD_WAIT_TYPES (deprecated wait), SHMEM_X_RMA_TYPES and
 * SHMEM_X_SIZES (put-with-signal), each X(TYPENAME, TYPE, extra). */

/* Ends the job with one line: "<call>: <what is wrong>". */
__attribute__((noreturn, format(printf, 1, 2), cold)) void sr_sh_die(const char *fmt, ...);

static inline void sr_sh_up(const char *fn)
{
    if (sr_unlikely(sr_rt.state != SR_STATE_UP))
        sr_sh_die("%s: called %s", fn,
                  sr_rt.state == SR_STATE_DOWN ? "after shmem_finalize" : "before shmem_init");
}

/* SHMEM_CMP_* to the core's comparison. */
static inline symrail_cmp_t sr_sh_cmp(const char *fn, int cmp)
{
    switch (cmp) {
    case SHMEM_CMP_EQ: return SYMRAIL_CMP_EQ;
    case SHMEM_CMP_NE: return SYMRAIL_CMP_NE;
    case SHMEM_CMP_GT: return SYMRAIL_CMP_GT;
    case SHMEM_CMP_GE: return SYMRAIL_CMP_GE;
    case SHMEM_CMP_LT: return SYMRAIL_CMP_LT;
    case SHMEM_CMP_LE: return SYMRAIL_CMP_LE;
    }
    sr_sh_die("%s: cmp %d is none of SHMEM_CMP_EQ, _NE, _GT, _GE, _LT, _LE", fn, cmp);
}

/* [addr, addr + len) in this PE's symmetric memory (the api layer's check,
 * which knows every symmetric region): its offset there. */
static inline uint64_t sr_sh_sym_check(const char *fn, const char *arg, const void *addr,
                                       size_t len, size_t align)
{
    uint64_t off = 0;
    if (sr_unlikely(!sr_api_sym_ok(fn, arg, addr, len, &off)))
        sr_api_fatal(fn, SYMRAIL_ERR_INVALID);
    if (sr_unlikely(align > 1 && ((uintptr_t)addr & (align - 1))))
        sr_sh_die("%s: %s %p is not aligned to %zu bytes", fn, arg, addr, align);
    return off;
}

/* A signal word: symmetric, 8-byte aligned. */
static inline uint64_t sr_sh_sig_check(const char *fn, const uint64_t *sig_addr)
{
    return sr_sh_sym_check(fn, "sig_addr", sig_addr, sizeof(uint64_t), sizeof(uint64_t));
}

/* The context of a ctx argument, alive and, for a store, not NOSTORE. */
static inline sr_ctx_t *sr_sh_ctx(const char *fn, shmem_ctx_t uctx, int store)
{
    sr_ctx_t *ctx = (sr_ctx_t *)(void *)uctx;
    if (sr_unlikely(ctx == NULL))
        sr_sh_die("%s: ctx is SHMEM_CTX_INVALID", fn);
    if (sr_unlikely(ctx->state != SR_CTX_LIVE) && !sr_api_ctx_check(fn, ctx, store))
        sr_api_fatal(fn, SYMRAIL_ERR_INVALID);
    return ctx;
}

/* A PE number as the context sees it (its team's, for a team context):
 * the world PE. */
static inline int sr_sh_pe(const char *fn, const sr_ctx_t *ctx, int pe)
{
    const sr_team_t *team = ctx->team;
    int n = team ? team->size : sr_rt.n_pes;
    if (sr_unlikely(pe < 0 || pe >= n))
        sr_sh_die("%s: pe %d is out of range (0..%d%s)", fn, pe, n - 1,
                  team ? " of the context's team" : "");
    return sr_team_world_pe(team, pe);
}

#endif
