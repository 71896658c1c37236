/*
 * Public atomics of every kind and width, blocking and not (the 64-bit
 * calls of fixed kind are in rma.c).  The OpenSHMEM layer uses the same
 * core calls with its own checks.
 */
#include "config.h"
#include "api/api.h"

_Static_assert((int)SYMRAIL_AMO_FETCH == SR_TL_AMO_FETCH && (int)SYMRAIL_AMO_SET == SR_TL_AMO_SET &&
                   (int)SYMRAIL_AMO_ADD == SR_TL_AMO_ADD && (int)SYMRAIL_AMO_SWAP == SR_TL_AMO_SWAP &&
                   (int)SYMRAIL_AMO_CSWAP == SR_TL_AMO_CSWAP &&
                   (int)SYMRAIL_AMO_AND == SR_TL_AMO_AND && (int)SYMRAIL_AMO_OR == SR_TL_AMO_OR &&
                   (int)SYMRAIL_AMO_XOR == SR_TL_AMO_XOR,
               "symrail_amo_op_t is the transports' kind");

static symrail_status_t sr_api_amo_op(const char *fn, symrail_ctx_t uctx, symrail_amo_op_t op,
                                      void *target, size_t width, uint64_t value, uint64_t cond,
                                      int pe, void *old_p, int nbi)
{
    uint64_t off, old;
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    sr_ctx_t *ctx = uctx;
    if ((unsigned)op > SYMRAIL_AMO_XOR) {
        sr_error("%s: op %d is not a symrail_amo_op_t", fn, (int)op);
        return SYMRAIL_ERR_INVALID;
    }
    if (width != 4 && width != 8) {
        sr_error("%s: width %zu is neither 4 nor 8", fn, width);
        return SYMRAIL_ERR_INVALID;
    }
    if (!sr_api_pe_ok(fn, pe) || !sr_api_amo_ok(fn, "target", target, width, &off) ||
        (ctx->state != SR_CTX_LIVE && !sr_api_ctx_check(fn, ctx, op != SYMRAIL_AMO_FETCH)))
        return SYMRAIL_ERR_INVALID;
    if (op == SYMRAIL_AMO_FETCH && old_p == NULL) {
        sr_error("%s: old_p is NULL for a fetch", fn);
        return SYMRAIL_ERR_INVALID;
    }
    sr_tl_amo_t kind = (sr_tl_amo_t)((unsigned)op | (width == 4 ? SR_TL_AMO_W32 : 0));
    symrail_status_t st;
    sr_ctx_enter(ctx);
    if (nbi) {
        st = sr_amo_nbi(ctx, kind, off, value, cond, pe, old_p);
    } else {
        st = sr_amo(ctx, kind, off, value, cond, pe, old_p ? &old : NULL);
        if (st == SYMRAIL_OK && old_p && width == 4)
            *(uint32_t *)old_p = (uint32_t)old;
        else if (st == SYMRAIL_OK && old_p)
            *(uint64_t *)old_p = old;
    }
    sr_ctx_leave(ctx);
    return st;
}

symrail_status_t symrail_ctx_atomic_op(symrail_ctx_t ctx, symrail_amo_op_t op, void *target,
                                       size_t width, uint64_t value, uint64_t cond, int pe,
                                       void *old_p)
{
    return sr_api_amo_op("symrail_ctx_atomic_op", ctx, op, target, width, value, cond, pe,
                         old_p, 0);
}

symrail_status_t symrail_ctx_atomic_op_nbi(symrail_ctx_t ctx, symrail_amo_op_t op,
                                           void *target, size_t width, uint64_t value,
                                           uint64_t cond, int pe, void *old_p)
{
    return sr_api_amo_op("symrail_ctx_atomic_op_nbi", ctx, op, target, width, value, cond, pe,
                         old_p, 1);
}
