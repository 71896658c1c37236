/*
 * Public RMA, ordering, signals and atomics, each with a context form: the
 * calls without one use the default context.  A context that threads share
 * under SYMRAIL_THREAD_MULTIPLE is held for the whole call.
 */
#include "config.h"
#include "api/api.h"

/* ---- RMA -------------------------------------------------------------------- */

/* A context that is not plainly alive: destroyed, one that promises no
 * stores, or one that threads share (held for the call). */
static __attribute__((noinline)) symrail_status_t sr_api_rma_flagged(const char *fn,
                                                                     sr_ctx_t *ctx, int is_put,
                                                                     void *local, uint64_t off,
                                                                     size_t nbytes, int pe,
                                                                     int blocking)
{
    if (!sr_api_ctx_check(fn, ctx, is_put))
        return SYMRAIL_ERR_INVALID;
    if (nbytes == 0)
        return SYMRAIL_OK;
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_rma(ctx, is_put, local, off, nbytes, pe, blocking);
    sr_ctx_leave(ctx);
    return st;
}

/* The symmetric side is checked, the local buffer not yet. */
static inline __attribute__((always_inline)) symrail_status_t
sr_api_rma_go(const char *fn, symrail_ctx_t uctx, int is_put, void *dst, const void *src,
              size_t nbytes, int pe, int blocking, uint64_t off)
{
    if (sr_unlikely(!sr_api_buf_ok(fn, is_put ? "src" : "dst", is_put ? src : dst, nbytes)))
        return SYMRAIL_ERR_INVALID;
    void *local = is_put ? (void *)src : dst;
    sr_ctx_t *ctx = uctx;  /* SYMRAIL_CTX_DEFAULT is the default context's address */
    /* Alive, no lock, nothing to do after the operation. */
    if (sr_likely(ctx->state == SR_CTX_LIVE)) {
        if (sr_unlikely(nbytes == 0))
            return SYMRAIL_OK;
        return sr_rma(ctx, is_put, local, off, nbytes, pe, blocking);
    }
    return sr_api_rma_flagged(fn, ctx, is_put, local, off, nbytes, pe, blocking);
}

/* The symmetric side is not in the heap: a global, or an error. */
static __attribute__((noinline)) symrail_status_t sr_api_rma_other(const char *fn,
                                                                   symrail_ctx_t uctx,
                                                                   int is_put, void *dst,
                                                                   const void *src,
                                                                   size_t nbytes, int pe,
                                                                   int blocking)
{
    uint64_t off;
    if (!sr_api_sym_ok(fn, is_put ? "dst" : "src", is_put ? dst : src, nbytes, &off))
        return SYMRAIL_ERR_INVALID;
    return sr_api_rma_go(fn, uctx, is_put, dst, src, nbytes, pe, blocking, off);
}

/* Inlined into each entry point whatever the compiler's estimate, so that
 * is_put and blocking are constants there: shared, the function tests them
 * at run time, and a put cost 129 instructions instead of 100
 * (callgrind_shm). */
static inline __attribute__((always_inline)) symrail_status_t
sr_api_rma(const char *fn, symrail_ctx_t uctx, int is_put, void *dst, const void *src,
           size_t nbytes, int pe, int blocking)
{
    uint64_t off;
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (sr_unlikely(!sr_api_pe_ok(fn, pe)))
        return SYMRAIL_ERR_INVALID;
    if (sr_unlikely(!sr_api_in_heap(is_put ? dst : src, nbytes, &off)))
        return sr_api_rma_other(fn, uctx, is_put, dst, src, nbytes, pe, blocking);
    return sr_api_rma_go(fn, uctx, is_put, dst, src, nbytes, pe, blocking, off);
}

symrail_status_t symrail_put(void *dst, const void *src, size_t nbytes, int pe)
{
    return sr_api_rma("symrail_put", SYMRAIL_CTX_DEFAULT, 1, dst, src, nbytes, pe, 1);
}

symrail_status_t symrail_get(void *dst, const void *src, size_t nbytes, int pe)
{
    return sr_api_rma("symrail_get", SYMRAIL_CTX_DEFAULT, 0, dst, src, nbytes, pe, 1);
}

symrail_status_t symrail_put_nbi(void *dst, const void *src, size_t nbytes, int pe)
{
    return sr_api_rma("symrail_put_nbi", SYMRAIL_CTX_DEFAULT, 1, dst, src, nbytes, pe, 0);
}

symrail_status_t symrail_get_nbi(void *dst, const void *src, size_t nbytes, int pe)
{
    return sr_api_rma("symrail_get_nbi", SYMRAIL_CTX_DEFAULT, 0, dst, src, nbytes, pe, 0);
}

symrail_status_t symrail_ctx_put(symrail_ctx_t ctx, void *dst, const void *src, size_t nbytes,
                                 int pe)
{
    return sr_api_rma("symrail_ctx_put", ctx, 1, dst, src, nbytes, pe, 1);
}

symrail_status_t symrail_ctx_get(symrail_ctx_t ctx, void *dst, const void *src, size_t nbytes,
                                 int pe)
{
    return sr_api_rma("symrail_ctx_get", ctx, 0, dst, src, nbytes, pe, 1);
}

symrail_status_t symrail_ctx_put_nbi(symrail_ctx_t ctx, void *dst, const void *src,
                                     size_t nbytes, int pe)
{
    return sr_api_rma("symrail_ctx_put_nbi", ctx, 1, dst, src, nbytes, pe, 0);
}

symrail_status_t symrail_ctx_get_nbi(symrail_ctx_t ctx, void *dst, const void *src,
                                     size_t nbytes, int pe)
{
    return sr_api_rma("symrail_ctx_get_nbi", ctx, 0, dst, src, nbytes, pe, 0);
}

void symrail_putmem(void *dst, const void *src, size_t nbytes, int pe)
{
    symrail_status_t st =
        sr_api_rma("symrail_putmem", SYMRAIL_CTX_DEFAULT, 1, dst, src, nbytes, pe, 1);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_api_fatal("symrail_putmem", st);
}

void symrail_getmem(void *dst, const void *src, size_t nbytes, int pe)
{
    symrail_status_t st =
        sr_api_rma("symrail_getmem", SYMRAIL_CTX_DEFAULT, 0, dst, src, nbytes, pe, 1);
    if (sr_unlikely(st != SYMRAIL_OK))
        sr_api_fatal("symrail_getmem", st);
}

/* ---- ordering ---------------------------------------------------------------- */

static __attribute__((noinline)) symrail_status_t sr_api_order_flagged(const char *fn,
                                                                      sr_ctx_t *ctx, int quiet)
{
    if (!sr_api_ctx_check(fn, ctx, 0))
        return SYMRAIL_ERR_INVALID;
    sr_ctx_enter(ctx);
    symrail_status_t st = quiet ? sr_quiet(ctx) : sr_fence(ctx);
    sr_ctx_leave(ctx);
    return st;
}

static inline symrail_status_t sr_api_order(const char *fn, symrail_ctx_t uctx, int quiet)
{
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    sr_ctx_t *ctx = uctx;
    if (sr_unlikely(ctx->state != SR_CTX_LIVE))
        return sr_api_order_flagged(fn, ctx, quiet);
    return quiet ? sr_quiet(ctx) : sr_fence(ctx);
}

symrail_status_t symrail_quiet(void)
{
    return sr_api_order("symrail_quiet", SYMRAIL_CTX_DEFAULT, 1);
}

symrail_status_t symrail_fence(void)
{
    return sr_api_order("symrail_fence", SYMRAIL_CTX_DEFAULT, 0);
}

symrail_status_t symrail_ctx_quiet(symrail_ctx_t ctx)
{
    return sr_api_order("symrail_ctx_quiet", ctx, 1);
}

symrail_status_t symrail_ctx_fence(symrail_ctx_t ctx)
{
    return sr_api_order("symrail_ctx_fence", ctx, 0);
}

/* ---- signals -------------------------------------------------------------------- */

static symrail_status_t sr_api_put_signal(const char *fn, symrail_ctx_t uctx, void *dst,
                                          const void *src, size_t nbytes, uint64_t *sig_addr,
                                          uint64_t value, symrail_signal_op_t op, int pe)
{
    uint64_t sig_off, off;
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    sr_ctx_t *ctx = uctx;
    if (!sr_api_word_ok(fn, "sig_addr", sig_addr, &sig_off))
        return SYMRAIL_ERR_INVALID;
    if (op != SYMRAIL_SIGNAL_SET && op != SYMRAIL_SIGNAL_ADD) {
        sr_error("%s: op %d is neither SYMRAIL_SIGNAL_SET nor SYMRAIL_SIGNAL_ADD", fn, (int)op);
        return SYMRAIL_ERR_INVALID;
    }
    if (!sr_api_pe_ok(fn, pe) || !sr_api_sym_ok(fn, "dst", dst, nbytes, &off) ||
        !sr_api_buf_ok(fn, "src", src, nbytes) ||
        (ctx->state != SR_CTX_LIVE && !sr_api_ctx_check(fn, ctx, 1)))
        return SYMRAIL_ERR_INVALID;
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_put_signal(ctx, src, off, nbytes, sig_off,
                                        op == SYMRAIL_SIGNAL_SET ? SR_TL_AMO_SET : SR_TL_AMO_ADD,
                                        value, pe);
    sr_ctx_leave(ctx);
    return st;
}

symrail_status_t symrail_put_signal(void *dst, const void *src, size_t nbytes,
                                    uint64_t *sig_addr, uint64_t value,
                                    symrail_signal_op_t op, int pe)
{
    return sr_api_put_signal("symrail_put_signal", SYMRAIL_CTX_DEFAULT, dst, src, nbytes,
                             sig_addr, value, op, pe);
}

symrail_status_t symrail_ctx_put_signal(symrail_ctx_t ctx, void *dst, const void *src,
                                        size_t nbytes, uint64_t *sig_addr, uint64_t value,
                                        symrail_signal_op_t op, int pe)
{
    return sr_api_put_signal("symrail_ctx_put_signal", ctx, dst, src, nbytes, sig_addr, value,
                             op, pe);
}

symrail_status_t symrail_signal_wait_until(uint64_t *sig_addr, symrail_cmp_t cmp,
                                           uint64_t value, uint64_t *value_p)
{
    static const char fn[] = "symrail_signal_wait_until";
    uint64_t off;
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (!sr_api_word_ok(fn, "sig_addr", sig_addr, &off))
        return SYMRAIL_ERR_INVALID;
    if ((unsigned)cmp > SYMRAIL_CMP_LE) {
        sr_error("%s: cmp %d is not a symrail_cmp_t", fn, (int)cmp);
        return SYMRAIL_ERR_INVALID;
    }
    return sr_signal_wait(sig_addr, cmp, value, value_p);
}

uint64_t symrail_signal_fetch(const uint64_t *sig_addr)
{
    uint64_t off;
    if (sr_rt.state != SR_STATE_UP)
        sr_api_fatal("symrail_signal_fetch", SYMRAIL_ERR_INVALID);
    if (!sr_api_word_ok("symrail_signal_fetch", "sig_addr", sig_addr, &off))
        sr_api_fatal("symrail_signal_fetch", SYMRAIL_ERR_INVALID);
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

/* ---- atomics ------------------------------------------------------------------------- */

static inline symrail_status_t sr_api_amo_go(const char *fn, symrail_ctx_t uctx,
                                             sr_tl_amo_t op, uint64_t off, uint64_t operand,
                                             uint64_t compare, int pe, uint64_t *result_p);

/* The target is not an aligned word of the heap: a global, or an error. */
static __attribute__((noinline)) symrail_status_t sr_api_amo_other(const char *fn,
                                                                   symrail_ctx_t uctx,
                                                                   sr_tl_amo_t op,
                                                                   const uint64_t *target,
                                                                   uint64_t operand,
                                                                   uint64_t compare, int pe,
                                                                   uint64_t *result_p)
{
    uint64_t off;
    if (!sr_api_word_ok(fn, "target", target, &off))
        return SYMRAIL_ERR_INVALID;
    return sr_api_amo_go(fn, uctx, op, off, operand, compare, pe, result_p);
}

static inline symrail_status_t sr_api_amo(const char *fn, symrail_ctx_t uctx, sr_tl_amo_t op,
                                          const uint64_t *target, uint64_t operand,
                                          uint64_t compare, int pe, uint64_t *result_p)
{
    uint64_t off;
    SR_API_UP(fn, SYMRAIL_ERR_INVALID);
    if (!sr_api_pe_ok(fn, pe))
        return SYMRAIL_ERR_INVALID;
    if (sr_unlikely(!sr_api_in_heap(target, sizeof(uint64_t), &off) || (off & 7)))
        return sr_api_amo_other(fn, uctx, op, target, operand, compare, pe, result_p);
    return sr_api_amo_go(fn, uctx, op, off, operand, compare, pe, result_p);
}

static inline symrail_status_t sr_api_amo_go(const char *fn, symrail_ctx_t uctx,
                                             sr_tl_amo_t op, uint64_t off, uint64_t operand,
                                             uint64_t compare, int pe, uint64_t *result_p)
{
    if (result_p == NULL && op != SR_TL_AMO_SET && op != SR_TL_AMO_ADD) {
        sr_error("%s: the result pointer is NULL", fn);
        return SYMRAIL_ERR_INVALID;
    }
    sr_ctx_t *ctx = uctx;
    if (sr_likely(ctx->state == SR_CTX_LIVE))
        return sr_amo(ctx, op, off, operand, compare, pe, result_p);
    if (!sr_api_ctx_check(fn, ctx, op != SR_TL_AMO_FETCH))
        return SYMRAIL_ERR_INVALID;
    sr_ctx_enter(ctx);
    symrail_status_t st = sr_amo(ctx, op, off, operand, compare, pe, result_p);
    sr_ctx_leave(ctx);
    return st;
}

#define SR_API_AMO(_name, _op, _args, _target, _operand, _compare, _result)                    \
    symrail_status_t symrail_##_name _args                                                     \
    {                                                                                          \
        return sr_api_amo("symrail_" #_name, SYMRAIL_CTX_DEFAULT, _op, _target, _operand,      \
                          _compare, pe, _result);                                              \
    }
#define SR_API_CTX_AMO(_name, _op, _args, _target, _operand, _compare, _result)                \
    symrail_status_t symrail_ctx_##_name _args                                                 \
    {                                                                                          \
        return sr_api_amo("symrail_ctx_" #_name, ctx, _op, _target, _operand, _compare, pe,    \
                          _result);                                                            \
    }

SR_API_AMO(atomic_fetch, SR_TL_AMO_FETCH, (const uint64_t *target, int pe, uint64_t *value_p),
           target, 0, 0, value_p)
SR_API_AMO(atomic_set, SR_TL_AMO_SET, (uint64_t *target, uint64_t value, int pe), target,
           value, 0, NULL)
SR_API_AMO(atomic_add, SR_TL_AMO_ADD, (uint64_t *target, uint64_t value, int pe), target,
           value, 0, NULL)
SR_API_AMO(atomic_fetch_add, SR_TL_AMO_ADD,
           (uint64_t *target, uint64_t value, int pe, uint64_t *old_p), target, value, 0, old_p)
SR_API_AMO(atomic_swap, SR_TL_AMO_SWAP,
           (uint64_t *target, uint64_t value, int pe, uint64_t *old_p), target, value, 0, old_p)
SR_API_AMO(atomic_compare_swap, SR_TL_AMO_CSWAP,
           (uint64_t *target, uint64_t cond, uint64_t value, int pe, uint64_t *old_p), target,
           value, cond, old_p)

SR_API_CTX_AMO(atomic_fetch, SR_TL_AMO_FETCH,
               (symrail_ctx_t ctx, const uint64_t *target, int pe, uint64_t *value_p), target,
               0, 0, value_p)
SR_API_CTX_AMO(atomic_set, SR_TL_AMO_SET,
               (symrail_ctx_t ctx, uint64_t *target, uint64_t value, int pe), target, value, 0,
               NULL)
SR_API_CTX_AMO(atomic_add, SR_TL_AMO_ADD,
               (symrail_ctx_t ctx, uint64_t *target, uint64_t value, int pe), target, value, 0,
               NULL)
SR_API_CTX_AMO(atomic_fetch_add, SR_TL_AMO_ADD,
               (symrail_ctx_t ctx, uint64_t *target, uint64_t value, int pe, uint64_t *old_p),
               target, value, 0, old_p)
SR_API_CTX_AMO(atomic_swap, SR_TL_AMO_SWAP,
               (symrail_ctx_t ctx, uint64_t *target, uint64_t value, int pe, uint64_t *old_p),
               target, value, 0, old_p)
SR_API_CTX_AMO(atomic_compare_swap, SR_TL_AMO_CSWAP,
               (symrail_ctx_t ctx, uint64_t *target, uint64_t cond, uint64_t value, int pe,
                uint64_t *old_p),
               target, value, cond, old_p)
