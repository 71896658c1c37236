/*
 * Reductions and scans of teams: recursive doubling, the members past the
 * largest power of two folded into their neighbours first and served last,
 * every exchange pipelined through the partner's scratch.  Every operator
 * is commutative, so partners that combine in opposite order agree bit for
 * bit and every member ends with the same result.
 */
#include "config.h"
#include "core/coll.h"
#include "util/log.h"

#include <stdlib.h>
#include <string.h>

#define SR_K_FOLD_IN   0
#define SR_K_FOLD_OUT  63

typedef struct {
    char           *buf;
    sr_combine_fn_t combine;
    void           *arg;
} sr_rsink_t;

static void sr_combine_sink(void *arg, size_t off, const void *d, size_t n)
{
    sr_rsink_t *s = arg;
    s->combine(s->arg, s->buf + off, d, n);
}

static void sr_copy_sink(void *arg, size_t off, const void *d, size_t n)
{
    memcpy(((sr_rsink_t *)arg)->buf + off, d, n);
}

static uint64_t sr_kr(int round)
{
    return ((uint64_t)round << SR_K_ROUND_SHIFT) + 1;
}

symrail_status_t sr_coll_allreduce_fn(sr_cop_t *cop, void *buf, size_t nbytes, size_t esize,
                                      sr_combine_fn_t combine, void *arg)
{
    int n = cop->n, me = cop->me, p2 = 1, vme;
    symrail_status_t st = SYMRAIL_OK;
    sr_rsink_t sink = { buf, combine, arg };
    (void)esize;
    while (p2 * 2 <= n)
        p2 *= 2;
    int rem = n - p2;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            st = sr_cm_pipe(cop, me + 1, -1, sr_kr(SR_K_FOLD_IN), buf, nbytes, NULL, NULL);
            vme = -1;
        } else {
            st = sr_cm_pipe(cop, -1, me - 1, sr_kr(SR_K_FOLD_IN), NULL, nbytes, sr_combine_sink,
                            &sink);
            vme = me / 2;
        }
    } else {
        vme = me - rem;
    }
    for (int mask = 1, r = 1; vme >= 0 && mask < p2 && st == SYMRAIL_OK; mask <<= 1, r++) {
        int vp = vme ^ mask, partner = vp < rem ? vp * 2 + 1 : vp + rem;
        st = sr_cm_pipe(cop, partner, partner, sr_kr(r), buf, nbytes, sr_combine_sink, &sink);
    }
    if (st == SYMRAIL_OK && me < 2 * rem) {
        if (me % 2)
            st = sr_cm_pipe(cop, me - 1, -1, sr_kr(SR_K_FOLD_OUT), buf, nbytes, NULL, NULL);
        else
            st = sr_cm_pipe(cop, -1, me + 1, sr_kr(SR_K_FOLD_OUT), NULL, nbytes, sr_copy_sink,
                            &sink);
    }
    return st;
}

typedef struct {
    sr_dtype_t dt;
    sr_rop_t   op;
} sr_rop_arg_t;

static void sr_rop_combine(void *arg, void *inout, const void *in, size_t nbytes)
{
    sr_rop_arg_t *a = arg;
    sr_reduce_apply(a->dt, a->op, inout, in, nbytes / sr_dtype_size(a->dt));
}

static int sr_reduce_args(const char *fn, sr_team_t *team, sr_dtype_t dt, sr_rop_t op,
                          void *dest, const void *src, size_t nbytes)
{
    uint64_t off;
    if (dt >= SR_DT_COUNT || op >= SR_ROP_COUNT || !sr_reduce_valid(dt, op)) {
        sr_error("%s: operator %d is not defined on type %d", fn, (int)op, (int)dt);
        return 0;
    }
    if (!sr_coll_sym(fn, "dest", dest, nbytes, &off) ||
        !sr_coll_sym(fn, "source", src, nbytes, &off))
        return 0;
    (void)team;
    return 1;
}

symrail_status_t sr_coll_reduce(const char *fn, sr_team_t *team, sr_dtype_t dt, sr_rop_t op,
                                void *dest, const void *src, size_t nelems)
{
    sr_cop_t cop;
    symrail_status_t st = sr_cop_begin(fn, team, &cop);
    if (st != SYMRAIL_OK)
        return st;
    size_t es = sr_dtype_size(dt), nbytes = nelems * es;
    if (!sr_reduce_args(fn, team, dt, op, dest, src, nbytes))
        return sr_cop_end(&cop, SYMRAIL_ERR_INVALID);
    sr_cop_call(&cop, SR_CALL_REDUCE | (unsigned)dt << 8 | (unsigned)op << 16, nbytes, -1);
    if (dest != src && nbytes)
        memmove(dest, src, nbytes);
    sr_rop_arg_t a = { dt, op };
    st = sr_coll_allreduce_fn(&cop, dest, nbytes, es, sr_rop_combine, &a);
    return sr_cop_end(&cop, st);
}

symrail_status_t sr_coll_scan(const char *fn, sr_team_t *team, sr_dtype_t dt, sr_rop_t op,
                              void *dest, const void *src, size_t nelems, int exclusive)
{
    sr_cop_t cop;
    symrail_status_t st = sr_cop_begin(fn, team, &cop);
    if (st != SYMRAIL_OK)
        return st;
    size_t es = sr_dtype_size(dt), nbytes = nelems * es;
    if (!sr_reduce_args(fn, team, dt, op, dest, src, nbytes))
        return sr_cop_end(&cop, SYMRAIL_ERR_INVALID);
    sr_cop_call(&cop, SR_CALL_SCAN | (unsigned)dt << 8 | (unsigned)op << 16 |
                          (unsigned)!!exclusive << 24, nbytes, -1);
    char *x = dest;
    if (exclusive && (x = malloc(nbytes + 1)) == NULL)
        return sr_cop_end(&cop, SYMRAIL_ERR_NOMEM);
    if (x != src && nbytes)
        memmove(x, src, nbytes);
    sr_rop_arg_t a = { dt, op };
    sr_rsink_t sink = { x, sr_rop_combine, &a };
    /* Round r: x[i] = x[i - 2^r] op x[i], the old x going out before it changes. */
    for (int r = 0; (1 << r) < cop.n && st == SYMRAIL_OK; r++) {
        int d = 1 << r, to = cop.me + d < cop.n ? cop.me + d : -1, from = cop.me - d;
        st = sr_cm_pipe(&cop, to, from, sr_kr(r + 1), x, nbytes, sr_combine_sink, &sink);
    }
    if (exclusive && st == SYMRAIL_OK) {
        sr_rsink_t out = { dest, NULL, NULL };
        st = sr_cm_pipe(&cop, cop.me + 1 < cop.n ? cop.me + 1 : -1, cop.me - 1,
                        sr_kr(SR_K_FOLD_OUT), x, nbytes, sr_copy_sink, &out);
    }
    if (exclusive)
        free(x);
    return sr_cop_end(&cop, st);
}

